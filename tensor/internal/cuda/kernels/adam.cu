// The Adam (and AdamW) update of optim/adam.go without AMSGrad, element by
// element in the same operations (Kingma & Ba, 2015, "Adam: A Method for
// Stochastic Optimization"; the form of torch.optim.Adam):
//
//   p ← p·decay;  g ← g + l2·p;  m ← lerp(m, g, w1);  v ← b2·v + (w2·g)·g
//   p ← p + stepSize · m / (√v·c + eps)
//
// with stepSize = −lr/(1−β₁ᵗ), c = 1/√(1−β₂ᵗ), w1 = 1−β₁, w2 = 1−β₂.

// lerp as torch.lerp (and optim.lerp): from the nearer end.
template <typename T>
__device__ T lerp(T a, T b, T w) {
  return w < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
__device__ void adam(long long n, T* p, const T* g, T* m, T* v, T w1, T b2, T w2,
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
    p[i] = pi + step_size * (mi / (math_sqrt(vi) * c + eps));
  }
}

extern "C" __global__ void adam_f32(long long n, float* p, const float* g, float* m, float* v,
                                    float w1, float b2, float w2, float step_size, float c,
                                    float eps, float decay, float l2) {
  adam<float>(n, p, g, m, v, w1, b2, w2, step_size, c, eps, decay, l2);
}

extern "C" __global__ void adam_f64(long long n, double* p, const double* g, double* m,
                                    double* v, double w1, double b2, double w2,
                                    double step_size, double c, double eps, double decay,
                                    double l2) {
  adam<double>(n, p, g, m, v, w1, b2, w2, step_size, c, eps, decay, l2);
}
