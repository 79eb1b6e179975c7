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

template <typename T> struct Square { __device__ T operator()(T x) const { return x * x; } };
template <typename T> struct Sqrt  { __device__ T operator()(T x) const { return math_sqrt(x); } };
template <typename T> struct Abs   { __device__ T operator()(T x) const { return math_abs(x); } };
template <typename T> struct Reciprocal { __device__ T operator()(T x) const { return T(1) / x; } };
template <typename T> struct Log1p { __device__ T operator()(T x) const { return math_log1p(x); } };
template <typename T> struct Expm1 { __device__ T operator()(T x) const { return math_expm1(x); } };

// softplus(x) = max(x, 0) + log1p(e^−|x|), which neither overflows nor
// loses the small values of the left tail.
template <typename T> struct Softplus {
  __device__ T operator()(T x) const {
    return (x > 0 ? x : T(0)) + math_log1p(math_exp(-math_abs(x)));
  }
};

UNARY(neg, Neg)
UNARY(square, Square)
UNARY(sqrt, Sqrt)
UNARY(abs, Abs)
UNARY(reciprocal, Reciprocal)
UNARY(log1p, Log1p)
UNARY(expm1, Expm1)
UNARY(softplus, Softplus)
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

// sigmoid_grad(v, x) = v·σ(x)·σ(−x), both factors from e^−|x|.
template <typename T> struct SigmoidGrad {
  __device__ T operator()(T v, T x) const {
    T e = math_exp(-math_abs(x)), s = T(1) / (T(1) + e);
    return v * (s * (e * s));
  }
};

// tanh_grad(v, y) = v·(1 − y²) for y = tanh(x).
template <typename T> struct TanhGrad {
  __device__ T operator()(T v, T y) const { return v * (T(1) - y * y); }
};

BINARY(add, Add)
BINARY(sigmoid_grad, SigmoidGrad)
BINARY(tanh_grad, TanhGrad)
BINARY(sub, Sub)
BINARY(mul, Mul)
BINARY(div, Div)
BINARY(relu_grad, ReluGrad)
BINARY(gelu_grad, GeluGrad)

// Scalar operations out[i] = op(x[i], s), s rounded to T on the host once,
// as the CPU's AddScalar and MulScalar round it.
template <typename T, typename Op>
__device__ void scalar_map(long long n, T* out, const T* x, T s) {
  Op op;
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = op(x[i], s);
}

#define SCALAR(name, Op)                                                          \
  extern "C" __global__ void name##_f32(long long n, float* out, const float* x,   \
                                        float s) {                                \
    scalar_map<float, Op<float> >(n, out, x, s);                                  \
  }                                                                               \
  extern "C" __global__ void name##_f64(long long n, double* out, const double* x, \
                                        double s) {                               \
    scalar_map<double, Op<double> >(n, out, x, s);                                \
  }

SCALAR(add_scalar, Add)
SCALAR(mul_scalar, Mul)

template <typename T>
__device__ void fill_map(long long n, T* out, T v) {
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = v;
}

extern "C" __global__ void fill_f32(long long n, float* out, float v) { fill_map<float>(n, out, v); }
extern "C" __global__ void fill_f64(long long n, double* out, double v) { fill_map<double>(n, out, v); }

// non_finite_scan sets *flag to 1 if some x[i] is NaN or ±∞: x·0 is NaN
// exactly then, ±0 for every finite x. A thread that finds none writes
// nothing, so the host zeroes the flag first; the threads that do find
// one all store the same 1, so their order does not matter.
template <typename T>
__device__ void non_finite_scan(long long n, unsigned int* flag, const T* x) {
  bool found = false;
  for (long long i = first_index(); i < n; i += grid_stride()) found = found || x[i] * T(0) != T(0);
  if (found) *flag = 1u;
}

extern "C" __global__ void non_finite_f32(long long n, unsigned int* flag, const float* x) {
  non_finite_scan<float>(n, flag, x);
}
extern "C" __global__ void non_finite_f64(long long n, unsigned int* flag, const double* x) {
  non_finite_scan<double>(n, flag, x);
}

// cast_f32 writes float64 x as float32 (rounded to nearest, as Go's
// float32(v)); cast_f64 writes float32 x as float64 (exact).
extern "C" __global__ void cast_f32(long long n, float* out, const double* x) {
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = (float)x[i];
}
extern "C" __global__ void cast_f64(long long n, double* out, const float* x) {
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = (double)x[i];
}
