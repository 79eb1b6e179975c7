// Elementwise kernels: unary maps over n contiguous elements, binary maps
// over a broadcast pair addressed by Strides (common.cu). Each operation
// computes what the tensor package's CPU kernel computes, in the same
// floating-point operations where they are correctly rounded.

template <typename T, typename Op>
__device__ void unary_map(long long n, T* out, const T* x) {
  Op op;
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = op(x[i]);
}

template <typename T, typename Op>
__device__ void binary_map(long long n, T* out, const T* a, const T* b, Strides s) {
  Op op;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i, ia = 0, ib = 0;
    for (int d = (int)s.ndim - 1; d >= 0; d--) {
      long long q = r / s.shape[d], c = r - q * s.shape[d];
      ia += c * s.a[d];
      ib += c * s.b[d];
      r = q;
    }
    out[i] = op(a[ia], b[ib]);
  }
}

#define UNARY(name, Op)                                                          \
  extern "C" __global__ void name##_f32(long long n, float* out, const float* x) { \
    unary_map<float, Op<float> >(n, out, x);                                     \
  }                                                                              \
  extern "C" __global__ void name##_f64(long long n, double* out, const double* x) { \
    unary_map<double, Op<double> >(n, out, x);                                   \
  }

#define BINARY(name, Op)                                                         \
  extern "C" __global__ void name##_f32(long long n, float* out, const float* a,  \
                                        const float* b, Strides s) {             \
    binary_map<float, Op<float> >(n, out, a, b, s);                              \
  }                                                                              \
  extern "C" __global__ void name##_f64(long long n, double* out, const double* a, \
                                        const double* b, Strides s) {            \
    binary_map<double, Op<double> >(n, out, a, b, s);                            \
  }

template <typename T> struct Neg  { __device__ T operator()(T x) const { return -x; } };
template <typename T> struct Exp  { __device__ T operator()(T x) const { return math_exp(x); } };
template <typename T> struct Log  { __device__ T operator()(T x) const { return math_log(x); } };
template <typename T> struct Tanh { __device__ T operator()(T x) const { return math_tanh(x); } };

// relu keeps NaN, as the CPU's max(x, 0) does.
template <typename T> struct Relu {
  __device__ T operator()(T x) const { return (x > 0 || x != x) ? x : T(0); }
};

// sigmoid from e^−|x|, which never overflows.
template <typename T> struct Sigmoid {
  __device__ T operator()(T x) const {
    T e = math_exp(x < 0 ? x : -x);
    return x >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
  }
};

// The exact GELU x·Φ(x) with Φ(x) = erfc(−x/√2)/2, accurate in the left tail.
template <typename T> struct Gelu {
  __device__ T operator()(T x) const {
    return T(0.5) * x * math_erfc(-x * T(0.70710678118654752440));
  }
};

UNARY(neg, Neg)
UNARY(exp, Exp)
UNARY(log, Log)
UNARY(tanh, Tanh)
UNARY(relu, Relu)
UNARY(sigmoid, Sigmoid)
UNARY(gelu, Gelu)

template <typename T> struct Add { __device__ T operator()(T a, T b) const { return a + b; } };
template <typename T> struct Sub { __device__ T operator()(T a, T b) const { return a - b; } };
template <typename T> struct Mul { __device__ T operator()(T a, T b) const { return a * b; } };
template <typename T> struct Div { __device__ T operator()(T a, T b) const { return a / b; } };

// relu_grad(v, y) = v·sign(y) for y = relu(x): sign(±0) = ±0 and NaN stays NaN.
template <typename T> struct ReluGrad {
  __device__ T operator()(T v, T y) const {
    T s = y > 0 ? T(1) : (y < 0 ? T(-1) : y);
    return v * s;
  }
};

// gelu_grad(v, x) = v·(Φ(x) + x·φ(x)); at x = ±∞ the second term is 0
// (x·φ(x) would be ∞·0).
template <typename T> struct GeluGrad {
  __device__ T operator()(T v, T x) const {
    if (x != x) return x;
    if (x * T(0) != T(0)) return x > 0 ? v : v * T(0);  // ±∞
    T cdf = T(0.5) * math_erfc(-x * T(0.70710678118654752440));
    T pdf = T(0.39894228040143267794) * math_exp(T(-0.5) * x * x);
    return v * (cdf + x * pdf);
  }
};

BINARY(add, Add)
BINARY(sub, Sub)
BINARY(mul, Mul)
BINARY(div, Div)
BINARY(relu_grad, ReluGrad)
BINARY(gelu_grad, GeluGrad)
