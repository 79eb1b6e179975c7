// The optimisers' updates of package optim, element by element in the
// same operations as its CPU loops. Every kernel takes the same arguments,
// (n, p, g, s0, s1, s2, h0…h7): the parameters, their gradients, up to
// three state buffers (null where an option is off) and eight scalars
// worked out on the host.
//
// Adam and AdamW (Kingma & Ba, 2015, "Adam: A Method for Stochastic
// Optimization"; Loshchilov & Hutter, 2019, "Decoupled Weight Decay
// Regularization"; the form of torch.optim.Adam), with AMSGrad (Reddi et
// al., 2018, "On the Convergence of Adam and Beyond") when vm is set:
//
//   p ← p·decay;  g ← g + l2·p;  m ← lerp(m, g, w1);  v ← b2·v + (w2·g)·g
//   vm ← max(vm, v) (AMSGrad, which then reads vm for v)
//   p ← p + stepSize · m / (√v·c + eps)
//
// with stepSize = −lr/(1−β₁ᵗ), c = 1/√(1−β₂ᵗ), w1 = 1−β₁, w2 = 1−β₂.
// The module is compiled with --fmad=false, so each product is rounded
// before the sum that follows, as Go's T(·) conversions round them on the
// CPU.

// lerp as torch.lerp (and optim.lerp): from the nearer end.
template <typename T>
__device__ T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
__device__ void adam(long long n, T* p, const T* g, T* m, T* v, T* vm, T w1, T b2, T w2,
                     T step_size, T c, T eps, T decay, T l2) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    T pi = p[i];
    if (decay != T(1)) pi *= decay;
    T gi = g[i];
    if (l2 != T(0)) gi += l2 * pi;
    T mi = lerp(m[i], gi, w1);
    T vi = v[i] * b2 + (w2 * gi) * gi;
    m[i] = mi;
    v[i] = vi;
    if (vm) {
      vi = vm[i] > vi ? vm[i] : vi;
      vm[i] = vi;
    }
    p[i] = pi + step_size * (mi / (math_sqrt(vi) * c + eps));
  }
}

// SGD with momentum, dampening, Nesterov momentum and L2 weight decay
// (torch.optim.SGD; Sutskever et al., 2013, "On the importance of
// initialization and momentum in deep learning"): d = g + wd·p;
// buf ← d on the first step, else buf·mom + keep1·d (keep1 = 1 −
// dampening); d ← d + mom·buf (Nesterov) or buf; p ← p − lr·d. buf is
// null without momentum; first and nesterov are 0 or 1.
template <typename T>
__device__ void sgd(long long n, T* p, const T* g, T* buf, T lr, T mom, T keep1, T wd,
                    T first, T nesterov) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    T d = g[i];
    if (wd != T(0)) d += wd * p[i];
    if (buf) {
      T b = first != T(0) ? d : buf[i] * mom + keep1 * d;
      buf[i] = b;
      d = nesterov != T(0) ? d + mom * b : b;
    }
    p[i] -= lr * d;
  }
}

// RMSprop (Tieleman & Hinton, 2012, Lecture 6.5 of "Neural Networks for
// Machine Learning"; the form of torch.optim.RMSprop): g ← g + wd·p;
// sq ← sq·alpha + (w·g)·g; centred: avg ← lerp(avg, g, w), σ = √max(sq −
// avg², 0) + eps, else σ = √sq + eps; with momentum mbuf ← mbuf·mom + g/σ
// and p ← p + negLR·mbuf, else p ← p + negLR·(g/σ). avg and mbuf may be
// null.
template <typename T>
__device__ void rmsprop(long long n, T* p, const T* g, T* sq, T* avg, T* mbuf, T neg_lr,
                        T alpha, T w, T eps, T mom, T wd) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    T gi = g[i];
    if (wd != T(0)) gi += wd * p[i];
    T s = sq[i] * alpha + (w * gi) * gi;
    sq[i] = s;
    T sigma;
    if (avg) {
      T a = lerp(avg[i], gi, w);
      avg[i] = a;
      T var = s - a * a;
      sigma = math_sqrt(var > T(0) ? var : T(0)) + eps;
    } else {
      sigma = math_sqrt(s) + eps;
    }
    if (mbuf) {
      T b = mbuf[i] * mom + gi / sigma;
      mbuf[i] = b;
      p[i] += neg_lr * b;
    } else {
      p[i] += neg_lr * (gi / sigma);
    }
  }
}

// Adagrad (Duchi et al., 2011, "Adaptive Subgradient Methods for Online
// Learning and Stochastic Optimization"; torch.optim.Adagrad): g ← g +
// wd·p; sum ← sum + g·g; p ← p + negLR·(g/(√sum + eps)).
template <typename T>
__device__ void adagrad(long long n, T* p, const T* g, T* sum, T neg_lr, T eps, T wd) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    T gi = g[i];
    if (wd != T(0)) gi += wd * p[i];
    T s = sum[i] + gi * gi;
    sum[i] = s;
    p[i] += neg_lr * (gi / (math_sqrt(s) + eps));
  }
}

// The shared signature, with the arguments a rule does not read unnamed.
#define OPTIM_KERNELS(T, SUFFIX)                                                               \
  extern "C" __global__ void adam_##SUFFIX(long long n, T* p, const T* g, T* s0, T* s1, T* s2,  \
                                           T h0, T h1, T h2, T h3, T h4, T h5, T h6, T h7) {    \
    adam<T>(n, p, g, s0, s1, s2, h0, h1, h2, h3, h4, h5, h6, h7);                              \
  }                                                                                            \
  extern "C" __global__ void sgd_##SUFFIX(long long n, T* p, const T* g, T* s0, T*, T*, T h0,   \
                                          T h1, T h2, T h3, T h4, T h5, T, T) {                \
    sgd<T>(n, p, g, s0, h0, h1, h2, h3, h4, h5);                                               \
  }                                                                                            \
  extern "C" __global__ void rmsprop_##SUFFIX(long long n, T* p, const T* g, T* s0, T* s1,      \
                                              T* s2, T h0, T h1, T h2, T h3, T h4, T h5, T,    \
                                              T) {                                             \
    rmsprop<T>(n, p, g, s0, s1, s2, h0, h1, h2, h3, h4, h5);                                   \
  }                                                                                            \
  extern "C" __global__ void adagrad_##SUFFIX(long long n, T* p, const T* g, T* s0, T*, T*,     \
                                              T h0, T h1, T h2, T, T, T, T, T) {               \
    adagrad<T>(n, p, g, s0, h0, h1, h2);                                                       \
  }

OPTIM_KERNELS(float, f32)
OPTIM_KERNELS(double, f64)
