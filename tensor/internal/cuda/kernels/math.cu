// Elementwise maths beyond elementwise.cu: sign, the trigonometric and
// special functions, Pow, Maximum and Minimum, Xlogy, the comparisons,
// the operations with scalar parameters (PowScalar, LeakyRelu, Elu, Clamp,
// LeakyReluGrad), Where over three broadcast operands and a copy into a
// strided destination. Each computes what the tensor package's CPU kernel
// computes, with its special cases (NaN, ±0, ±Inf) spelled out where the
// C library's differ from Go's.

__device__ inline float  math_sin(float x)     { return sinf(x); }
__device__ inline double math_sin(double x)    { return sin(x); }
__device__ inline float  math_cos(float x)     { return cosf(x); }
__device__ inline double math_cos(double x)    { return cos(x); }
__device__ inline float  math_tan(float x)     { return tanf(x); }
__device__ inline double math_tan(double x)    { return tan(x); }
__device__ inline float  math_erf(float x)     { return erff(x); }
__device__ inline double math_erf(double x)    { return erf(x); }
__device__ inline float  math_lgamma(float x)  { return lgammaf(x); }
__device__ inline double math_lgamma(double x) { return lgamma(x); }
__device__ inline float  math_floor(float x)   { return floorf(x); }
__device__ inline double math_floor(double x)  { return floor(x); }
__device__ inline float  math_pow(float x, float y)    { return powf(x, y); }
__device__ inline double math_pow(double x, double y)  { return pow(x, y); }

// is_inf: x − x is NaN exactly for ±Inf and NaN.
template <typename T> __device__ inline bool is_inf(T x) { return x == x && x - x != T(0); }
template <typename T> __device__ inline T quiet_nan();
template <> __device__ inline float quiet_nan<float>() { return nanf(""); }
template <> __device__ inline double quiet_nan<double>() { return nan(""); }

// go_max and go_min are Go's built-in max and min (which the CPU's
// Maximum, Minimum and Clamp use): NaN if either operand is NaN, and −0
// below +0. fmax and fmin would drop the NaN. For equal zeros a + b is
// +0 unless both are −0, which is max's sign; min's is its mirror image.
template <typename T> __device__ inline T go_max(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return a == T(0) ? a + b : a;
  return a > b ? a : b;
}
template <typename T> __device__ inline T go_min(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return a == T(0) ? -((-a) + (-b)) : a;
  return a < b ? a : b;
}

// sign(±0) = ±0 and sign(NaN) = NaN, as tensor.Sign.
template <typename T> struct Sign {
  __device__ T operator()(T x) const { return x > 0 ? T(1) : (x < 0 ? T(-1) : x); }
};
template <typename T> struct Sin { __device__ T operator()(T x) const { return math_sin(x); } };
template <typename T> struct Cos { __device__ T operator()(T x) const { return math_cos(x); } };
template <typename T> struct Erf { __device__ T operator()(T x) const { return math_erf(x); } };
// lgamma is log|Γ(x)|: +Inf at 0 and the negative integers, as in C and
// Go, but −Inf at −Inf as Go's math.Lgamma has it (C99 gives +Inf).
template <typename T> struct Lgamma {
  __device__ T operator()(T x) const { return x < 0 && is_inf(x) ? x : math_lgamma(x); }
};

// digamma_series is ψ(x) for x ≥ 6 (float) or x ≥ 10 (double) by the
// asymptotic series ψ(x) ~ log x − 1/(2x) − Σₖ B₂ₖ/(2k·x²ᵏ)
// (Abramowitz and Stegun, 1964, Handbook of Mathematical Functions,
// 6.3.18), through x⁻⁸ for float (truncation about 1e-10 at 6) and x⁻¹⁴
// for double (about 1e-17 at 10), added to acc (the recurrence's terms)
// in the operations and order of the CPU's
// digamma32 and digamma64. The coefficients are divisions of exact
// integers, rounded once, as Go rounds its constant expressions.
__device__ inline float digamma_series(float acc, float x) {
  float z = 1.0f / (x * x);
  float s = z * (1.0f / 12.0f - z * (1.0f / 120.0f - z * (1.0f / 252.0f - z / 240.0f)));
  return acc + logf(x) - 0.5f / x - s;
}
__device__ inline double digamma_series(double acc, double x) {
  double z = 1.0 / (x * x);
  double s = z * (1.0 / 12.0 - z * (1.0 / 120.0 - z * (1.0 / 252.0 - z * (1.0 / 240.0 -
             z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
  return acc + log(x) - 0.5 / x - s;
}
__device__ inline float digamma_start(float) { return 6.0f; }
__device__ inline double digamma_start(double) { return 10.0; }

// Digamma is ψ(x) = d/dx log Γ(x) as the CPU's digamma32 and digamma64:
// NaN at NaN, −Inf and the negative integers, ψ(±0) = ∓Inf; for x < 0
// the reflection ψ(x) = ψ(1−x) − π·cot(πx) (A&S 6.3.7), with cot(πx) =
// tan(π(½ − r)), r = x − ⌊x⌋, reduced first so πx stays accurate; for
// x > 0 the recurrence ψ(x) = ψ(x+1) − 1/x (A&S 6.3.5) up to the series.
template <typename T> struct Digamma {
  __device__ T operator()(T x) const {
    if (x != x || (x < 0 && is_inf(x))) return quiet_nan<T>();
    if (x == 0) return -(T(1) / x);  // ∓Inf at ±0
    T refl = 0;
    if (x < 0) {
      T fl = math_floor(x);
      if (x == fl) return quiet_nan<T>();
      refl = T(3.14159265358979323846) * math_tan(T(3.14159265358979323846) * (T(0.5) - (x - fl)));
      x = T(1) - x;
    }
    T acc = 0;
    while (x < digamma_start(x)) {
      acc -= T(1) / x;
      x += T(1);
    }
    return digamma_series(acc, x) - refl;  // ψ − 0 = ψ for x > 0
  }
};

UNARY(sign, Sign)
UNARY(sin, Sin)
UNARY(cos, Cos)
UNARY(erf, Erf)
UNARY(lgamma, Lgamma)
UNARY(digamma, Digamma)

// Pow is Go's math.Pow (math32.Pow with the CPU's pow32 fixes for float):
// C's pow has the same special cases (ISO C99, Annex F.9.4.4) except two
// shortcuts Go takes, kept here so the results agree bit for bit there:
// x¹ = x (also for NaN x) and, for finite nonzero x, x^±½ = √x and 1/√x.
template <typename T> struct Pow {
  __device__ T operator()(T x, T y) const {
    if (y == T(1)) return x;
    if ((y == T(0.5) || y == T(-0.5)) && x != T(0) && x == x && !is_inf(x)) {
      T r = math_sqrt(x);
      return y > 0 ? r : T(1) / r;
    }
    return math_pow(x, y);
  }
};

template <typename T> struct Maximum { __device__ T operator()(T a, T b) const { return go_max(a, b); } };
template <typename T> struct Minimum { __device__ T operator()(T a, T b) const { return go_min(a, b); } };

// xlogy(x, y) = x·log y, 0 where x = 0 unless y is NaN, as tensor.Xlogy.
template <typename T> struct Xlogy {
  __device__ T operator()(T x, T y) const {
    if (x == T(0) && y == y) return T(0);
    return x * math_log(y);
  }
};

// The comparisons give 1 or 0 in T; every comparison with NaN is false
// but not_equal, as IEEE 754 and Go have it.
template <typename T> struct Equal        { __device__ T operator()(T a, T b) const { return a == b ? T(1) : T(0); } };
template <typename T> struct NotEqual     { __device__ T operator()(T a, T b) const { return a != b ? T(1) : T(0); } };
template <typename T> struct Less         { __device__ T operator()(T a, T b) const { return a < b ? T(1) : T(0); } };
template <typename T> struct LessEqual    { __device__ T operator()(T a, T b) const { return a <= b ? T(1) : T(0); } };
template <typename T> struct Greater      { __device__ T operator()(T a, T b) const { return a > b ? T(1) : T(0); } };
template <typename T> struct GreaterEqual { __device__ T operator()(T a, T b) const { return a >= b ? T(1) : T(0); } };

BINARY(pow, Pow)
BINARY(maximum, Maximum)
BINARY(minimum, Minimum)
BINARY(xlogy, Xlogy)
BINARY(equal, Equal)
BINARY(not_equal, NotEqual)
BINARY(less, Less)
BINARY(less_equal, LessEqual)
BINARY(greater, Greater)
BINARY(greater_equal, GreaterEqual)

// Operations with scalar parameters p and q, rounded to T on the host
// once, as the CPU's paramOp rounds them.
template <typename T> struct PowScalar {
  __device__ T operator()(T x, T p, T) const { return Pow<T>()(x, p); }
};
// leaky_relu: x where x > 0, else slope·x (NaN takes the second branch).
template <typename T> struct LeakyRelu {
  __device__ T operator()(T x, T slope, T) const { return x > 0 ? x : slope * x; }
};
template <typename T> struct Elu {
  __device__ T operator()(T x, T alpha, T) const { return x > 0 ? x : alpha * math_expm1(x); }
};
// clamp is Go's min(max(x, lo), hi): NaN stays NaN, and so does every x
// if a bound is NaN.
template <typename T> struct Clamp {
  __device__ T operator()(T x, T lo, T hi) const { return go_min(go_max(x, lo), hi); }
};

template <typename T, typename Op>
__device__ void param_map(long long n, T* out, const T* x, T p, T q) {
  Op op;
  for (long long i = first_index(); i < n; i += grid_stride()) out[i] = op(x[i], p, q);
}

extern "C" __global__ void pow_scalar_f32(long long n, float* out, const float* x, float p, float q) {
  param_map<float, PowScalar<float> >(n, out, x, p, q);
}
extern "C" __global__ void pow_scalar_f64(long long n, double* out, const double* x, double p, double q) {
  param_map<double, PowScalar<double> >(n, out, x, p, q);
}
extern "C" __global__ void leaky_relu_f32(long long n, float* out, const float* x, float p, float q) {
  param_map<float, LeakyRelu<float> >(n, out, x, p, q);
}
extern "C" __global__ void leaky_relu_f64(long long n, double* out, const double* x, double p, double q) {
  param_map<double, LeakyRelu<double> >(n, out, x, p, q);
}
extern "C" __global__ void elu_f32(long long n, float* out, const float* x, float p, float q) {
  param_map<float, Elu<float> >(n, out, x, p, q);
}
extern "C" __global__ void elu_f64(long long n, double* out, const double* x, double p, double q) {
  param_map<double, Elu<double> >(n, out, x, p, q);
}
extern "C" __global__ void clamp_f32(long long n, float* out, const float* x, float p, float q) {
  param_map<float, Clamp<float> >(n, out, x, p, q);
}
extern "C" __global__ void clamp_f64(long long n, double* out, const double* x, double p, double q) {
  param_map<double, Clamp<double> >(n, out, x, p, q);
}

// leaky_relu_grad(v, x; slope) = v where x > 0, else v·slope (a NaN x
// takes the slope), over a broadcast pair as binary_map.
template <typename T>
__device__ void leaky_relu_grad_map(long long n, T* out, const T* v, const T* x, Strides s, T slope) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i, iv = 0, ix = 0;
    for (int d = (int)s.ndim - 1; d >= 0; d--) {
      long long q = r / s.shape[d], c = r - q * s.shape[d];
      iv += c * s.a[d];
      ix += c * s.b[d];
      r = q;
    }
    out[i] = x[ix] > 0 ? v[iv] : v[iv] * slope;
  }
}

extern "C" __global__ void leaky_relu_grad_f32(long long n, float* out, const float* v, const float* x,
                                               Strides s, float slope) {
  leaky_relu_grad_map<float>(n, out, v, x, s, slope);
}
extern "C" __global__ void leaky_relu_grad_f64(long long n, double* out, const double* v, const double* x,
                                               Strides s, double slope) {
  leaky_relu_grad_map<double>(n, out, v, x, s, slope);
}

// Strides3 addresses three broadcast operands as Strides does two.
struct Strides3 {
  long long ndim;
  long long shape[MAXDIM];
  long long c[MAXDIM];
  long long a[MAXDIM];
  long long b[MAXDIM];
};

// where: out = cond != 0 ? a : b (a NaN cond counts as true), out
// contiguous, the operands read with their strides.
template <typename T>
__device__ void where_map(long long n, T* out, const T* cond, const T* a, const T* b, Strides3 s) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i, ic = 0, ia = 0, ib = 0;
    for (int d = (int)s.ndim - 1; d >= 0; d--) {
      long long q = r / s.shape[d], k = r - q * s.shape[d];
      ic += k * s.c[d];
      ia += k * s.a[d];
      ib += k * s.b[d];
      r = q;
    }
    out[i] = cond[ic] != T(0) ? a[ia] : b[ib];
  }
}

extern "C" __global__ void where_f32(long long n, float* out, const float* cond, const float* a,
                                     const float* b, Strides3 s) {
  where_map<float>(n, out, cond, a, b, s);
}
extern "C" __global__ void where_f64(long long n, double* out, const double* cond, const double* a,
                                     const double* b, Strides3 s) {
  where_map<double>(n, out, cond, a, b, s);
}

// copy_strided writes x, read with the strides s.a, into out at the
// strides s.b: a strided destination view (no stride of s.b is 0).
template <typename T>
__device__ void copy_strided_map(long long n, T* out, const T* x, Strides s) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i, ix = 0, io = 0;
    for (int d = (int)s.ndim - 1; d >= 0; d--) {
      long long q = r / s.shape[d], k = r - q * s.shape[d];
      ix += k * s.a[d];
      io += k * s.b[d];
      r = q;
    }
    out[io] = x[ix];
  }
}

extern "C" __global__ void copy_strided_f32(long long n, float* out, const float* x, Strides s) {
  copy_strided_map<float>(n, out, x, s);
}
extern "C" __global__ void copy_strided_f64(long long n, double* out, const double* x, Strides s) {
  copy_strided_map<double>(n, out, x, s);
}
