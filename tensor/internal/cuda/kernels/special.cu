// Special functions of package tensor's specialfn.go, each in the
// operations and order of the CPU's code: the polygamma functions ψ⁽ⁿ⁾
// (a Param kernel, p = n), log Φ (the log of the standard normal CDF),
// log I₀ and I₁/I₀ (the modified Bessel functions of the first kind).

template <typename T> __device__ inline T pow_int(T x, int k) {
  T r = T(1);
  while (k > 0) {
    if (k & 1) r *= x;
    x *= x;
    k >>= 1;
  }
  return r;
}

// Polygamma is ψ⁽ⁿ⁾(x) for n ≥ 1 as tensor's polygammaRun: the recurrence
// ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) + (−1)ⁿ⁺¹·n!/xⁿ⁺¹ (Abramowitz and Stegun, 1964,
// Handbook of Mathematical Functions, 6.4.6) raises x to 10 + 2n, where
// the asymptotic series (A&S 6.4.11) with B₂ … B₂₀ converges fast. The
// series' coefficients B₂ₖ·(2k+n−1)!/(2k)! are worked out in double and
// rounded to T once, as on the CPU. Only IEEE operations, so the results
// agree with the CPU's bit for bit. NaN below −10⁶ and at NaN; at the
// poles 0, −1, −2, … +Inf for odd n and NaN for even n.
template <typename T> struct Polygamma {
  __device__ T operator()(T x, T order, T) const {
    const int n = (int)order;
    const double b2k[10] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
                            -691.0 / 2730, 7.0 / 6, -3617.0 / 510, 43867.0 / 798, -174611.0 / 330};
    if (x != x || x < T(-1e6)) return quiet_nan<T>();
    if (x <= T(0) && x == math_floor(x)) {
      if (n % 2 == 1) return T(1) / (x - x);  // +Inf: x is finite here
      return quiet_nan<T>();
    }
    T coef[10];
    for (int k = 0; k < 10; k++) {
      double c = b2k[k];
      for (int j = 2 * (k + 1) + 1; j <= 2 * (k + 1) + n - 1; j++) c *= (double)j;
      coef[k] = (T)c;
    }
    T factN = T(1);
    for (int j = 2; j <= n; j++) factN *= T(j);
    T sign = n % 2 == 0 ? T(-1) : T(1);
    T zmin = T(10 + 2 * n);
    T s = T(0), z = x;
    while (z < zmin) {
      s += pow_int(T(1) / z, n + 1);
      z += T(1);
    }
    T inv = T(1) / z;
    T inv2 = inv * inv;
    T zn = pow_int(inv, n);
    T a = factN / T(n) * zn + factN / T(2) * zn * inv;
    T term = zn * inv2;
    for (int k = 0; k < 10; k++) {
      a += coef[k] * term;
      term *= inv2;
    }
    return sign * (factN * s + a);
  }
};

extern "C" __global__ void polygamma_f32(long long n, float* out, const float* x, float p, float q) {
  param_map<float, Polygamma<float> >(n, out, x, p, q);
}
extern "C" __global__ void polygamma_f64(long long n, double* out, const double* x, double p, double q) {
  param_map<double, Polygamma<double> >(n, out, x, p, q);
}

// LogNdtr is log Φ(x) as tensor's logNdtr32 and logNdtr64: log1p of the
// upper tail's ½·erfc above 3 (float) or 5 (double), log(½·erfc(−x/√2))
// in the body, and below −12 (float) or −37 (double), where erfc
// underflows, the asymptotic series of Mills' ratio Φ(x) ≈ φ(x)/(−x)·
// (1 − 1/x² + 3/x⁴ − …) (Abramowitz and Stegun, 1964, 26.2.12).
__device__ inline float log_ndtr(float x) {
  const float inv_sqrt2 = 0.70710678118654752440f;
  if (x > 3.0f) return log1pf(-0.5f * erfcf(x * inv_sqrt2));
  if (x > -12.0f) return logf(0.5f * erfcf(-x * inv_sqrt2));
  float z = 1.0f / (x * x);
  float s = 1.0f + z * (-1.0f + z * (3.0f + z * (-15.0f + z * 105.0f)));
  return -0.5f * x * x - logf(-x) - 0.9189385332046727f + logf(s);
}
__device__ inline double log_ndtr(double x) {
  const double inv_sqrt2 = 0.70710678118654752440;
  if (x > 5.0) return log1p(-0.5 * erfc(x * inv_sqrt2));
  if (x > -37.0) return log(0.5 * erfc(-x * inv_sqrt2));
  double z = 1.0 / (x * x);
  double s = 1.0 + z * (-1.0 + z * (3.0 + z * (-15.0 + z * (105.0 + z * -945.0))));
  return -0.5 * x * x - log(-x) - 0.9189385332046727 + log(s);
}
template <typename T> struct LogNdtr { __device__ T operator()(T x) const { return log_ndtr(x); } };

// The Bessel functions are computed in double for both dtypes, as on the
// CPU: the power series of I₀ − 1 and I₁ (A&S 9.6.10) for |x| ≤ 30 and
// Hankel's asymptotic expansions (A&S 9.7.1) beyond, stopped at their
// smallest term.
__device__ inline void bessel_series(double x, double* i0m1, double* i1) {
  double q = x * x / 4, t0 = 1, t1 = 1, s0 = 0, s1 = 1;
  for (int k = 1; k < 200; k++) {
    double fk = (double)k;
    t0 *= q / (fk * fk);
    t1 *= q / (fk * (fk + 1));
    s0 += t0;
    s1 += t1;
    if (t0 < 1e-17 * (1 + s0) && t1 < 1e-17 * s1) break;
  }
  *i0m1 = s0;
  *i1 = x / 2 * s1;
}
__device__ inline void bessel_hankel(double x, double* s0, double* s1) {
  double t0 = 1, t1 = 1, a0 = 1, a1 = 1;
  for (int k = 1; k < 40; k++) {
    double odd = (double)(2 * k - 1) * (double)(2 * k - 1);
    double n0 = -t0 * (0 - odd) / ((double)k * 8 * x);
    double n1 = -t1 * (4 - odd) / ((double)k * 8 * x);
    if (fabs(n0) > fabs(t0)) break;  // the series has started to diverge
    t0 = n0;
    t1 = n1;
    a0 += t0;
    a1 += t1;
    if (fabs(t0) < 1e-17 && fabs(t1) < 1e-17) break;
  }
  *s0 = a0;
  *s1 = a1;
}
__device__ inline double log_bessel_i0(double x) {
  x = fabs(x);
  if (x <= 30) {
    double i0m1, i1;
    bessel_series(x, &i0m1, &i1);
    return log1p(i0m1);
  }
  double s0, s1;
  bessel_hankel(x, &s0, &s1);
  return x - 0.5 * log(2 * 3.14159265358979323846 * x) + log(s0);
}
__device__ inline double bessel_ratio(double x) {
  double ax = fabs(x), r;
  if (ax <= 30) {
    double i0m1, i1;
    bessel_series(ax, &i0m1, &i1);
    r = i1 / (1 + i0m1);
  } else {
    double s0, s1;
    bessel_hankel(ax, &s0, &s1);
    r = s1 / s0;
  }
  bool neg = x < 0 || (x == 0 && 1 / x < 0);  // copysign(r, x), −0 included
  return neg ? -r : r;
}
template <typename T> struct LogBesselI0 {
  __device__ T operator()(T x) const { return (T)log_bessel_i0((double)x); }
};
template <typename T> struct BesselI1OverI0 {
  __device__ T operator()(T x) const { return (T)bessel_ratio((double)x); }
};

UNARY(log_ndtr, LogNdtr)
UNARY(log_bessel_i0, LogBesselI0)
UNARY(bessel_i1_over_i0, BesselI1OverI0)

// The regularised lower incomplete gamma function P(a, x) and its partial
// derivatives, as tensor's gammainc.go (in double for both dtypes): the
// power series below x = a + 1 and the continued fraction of Q = 1 − P
// (modified Lentz) above (Press et al., 2007, Numerical Recipes, 3rd ed.,
// §6.2); the density for ∂P/∂x; five-point central differences with
// steps of 10⁻³ of the argument for the higher orders. The device's exp,
// log and lgamma differ from Go's by a few ulp, which the differences
// amplify by about 1.5/h per order.
__device__ inline double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  double lg = lgamma(a);
  double front = exp(a * log(x) - x - lg);
  if (x < a + 1) {
    double sum = 1 / a, term = 1 / a;
    for (int n = 1; n < 1000; n++) {
      term *= x / (a + (double)n);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return front * sum;
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int n = 1; n < 1000; n++) {
    double an = -(double)n * ((double)n - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-16) break;
  }
  return 1 - front * h;
}

__device__ inline double gamma_log_pdf(double a, double z) { return (a - 1) * log(z) - z - lgamma(a); }

// gamma_p_partial is the CPU's recursive gammaPPartial unrolled into a
// walk over its tree of evaluation points with an explicit stack (no
// recursion, so no device stack to size), doing the same operations in
// the same order: L = n + (m − 1 when m > 1) levels of five-point
// differences, first in a, then in z, (f(x−2h) − 8f(x−h) + 8f(x+h) −
// f(x+2h))/(12h) with h = 10⁻³·x, each accumulated left to right; the
// leaves are the density (m ≥ 1) or P. For m > 1 at z ≤ 0 the z-levels
// are 0, as on the CPU.
__device__ inline double gamma_leaf(int kind, double a, double z) {
  if (kind < 0) return 0;
  if (kind == 1) return z <= 0 ? 0 : exp(gamma_log_pdf(a, z));
  return gamma_p(a, z);
}
__device__ double gamma_p_partial(int n, int m, double a, double z) {
  const double off[4] = {-2, -1, 1, 2}, w[4] = {1, -8, 8, -1};
  int zl = 0, kind = m >= 1 ? 1 : 0;
  if (m > 1 && z <= 0) {
    kind = -1;
  } else if (m > 1) {
    zl = m - 1;
  }
  const int L = n + zl;  // at most 6 (checked on the host)
  if (L == 0) return gamma_leaf(kind, a, z);
  double base[8], h[8], acc[8];
  int j[8];
  double va = a, vz = z;
  int k = 0;
  base[0] = n > 0 ? a : z;
  h[0] = 1e-3 * base[0];
  j[0] = 0;
  for (;;) {
    double p = base[k] + off[j[k]] * h[k];
    if (k < n) {
      va = p;
    } else {
      vz = p;
    }
    if (k + 1 < L) {
      k++;
      base[k] = k < n ? va : vz;
      h[k] = 1e-3 * base[k];
      j[k] = 0;
      continue;
    }
    double f = gamma_leaf(kind, va, vz);
    for (;;) {
      acc[k] = j[k] == 0 ? f : acc[k] + w[j[k]] * f;
      j[k]++;
      if (j[k] < 4) break;
      f = acc[k] / (12 * h[k]);
      if (k < n) {
        va = base[k];
      } else {
        vz = base[k];
      }
      if (k == 0) return f;
      k--;
    }
  }
}

// gamma_p_inv solves P(a, z) = u by Newton's method from z0, halving
// steps that would leave z > 0, as the CPU's invGammaP.
__device__ inline double gamma_p_inv(double a, double u, double z0) {
  double z = z0;
  for (int it = 0; it < 100; it++) {
    double f = gamma_p(a, z) - u;
    double step = f / exp(gamma_log_pdf(a, z));
    double next = z - step;
    while (next <= 0) {
      step /= 2;
      next = z - step;
    }
    if (fabs(next - z) <= 1e-15 * z) return next;
    z = next;
  }
  return z;
}

template <typename T>
__device__ void gamma_p_deriv_map(long long count, T* out, const T* a, const T* x, long long n, long long m) {
  for (long long i = first_index(); i < count; i += grid_stride())
    out[i] = (T)gamma_p_partial((int)n, (int)m, (double)a[i], (double)x[i]);
}
template <typename T>
__device__ void gamma_p_inv_map(long long count, T* out, const T* a, const T* u, const T* z0) {
  for (long long i = first_index(); i < count; i += grid_stride())
    out[i] = (T)gamma_p_inv((double)a[i], (double)u[i], (double)z0[i]);
}

extern "C" __global__ void gamma_p_deriv_f32(long long count, float* out, const float* a, const float* x,
                                             long long n, long long m) {
  gamma_p_deriv_map<float>(count, out, a, x, n, m);
}
extern "C" __global__ void gamma_p_deriv_f64(long long count, double* out, const double* a, const double* x,
                                             long long n, long long m) {
  gamma_p_deriv_map<double>(count, out, a, x, n, m);
}
extern "C" __global__ void gamma_p_inv_f32(long long count, float* out, const float* a, const float* u,
                                           const float* z0) {
  gamma_p_inv_map<float>(count, out, a, u, z0);
}
extern "C" __global__ void gamma_p_inv_f64(long long count, double* out, const double* a, const double* u,
                                           const double* z0) {
  gamma_p_inv_map<double>(count, out, a, u, z0);
}
