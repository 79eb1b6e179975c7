package tensor

// Special functions beyond unary.go's, for the ops of the packages above
// tensor: the polygamma functions (graph's Polygamma, the derivatives of
// Digamma), log Φ (logreg's probit link) and the modified Bessel
// functions log I₀ and I₁/I₀ (the von Mises distribution). Each has a CPU
// kernel here and a GPU kernel in tensor/internal/cuda/kernels/special.cu
// that does the same operations in the same order.

import (
	"math"

	"github.com/chewxy/math32"
)

var polygammaOp = &paramOp{name: "Polygamma",
	f32: paramKernel[float32]{elem: func(x, n, _ float32) float32 { return polygamma1(int(n), x) },
		run: func(d, x []float32, n, _ float32) { polygammaRun(int(n), d, x) }},
	f64: paramKernel[float64]{elem: func(x, n, _ float64) float64 { return polygamma1(int(n), x) },
		run: func(d, x []float64, n, _ float64) { polygammaRun(int(n), d, x) }},
}

// Polygamma returns ψ⁽ⁿ⁾(a), the n-th derivative of the digamma function
// (n = 1 is the trigamma function, n = 0 Digamma). It is accurate for
// a > 0 and uses the recurrence for negative non-integers (slowly for
// very negative a); it is +Inf (odd n) or NaN (even n) at the poles 0,
// −1, −2, …, and NaN below −10⁶. It panics with a *Error for n < 0.
func Polygamma(n int, a *Tensor) *Tensor { return PolygammaTo(nil, n, a) }

// PolygammaTo stores ψ⁽ⁿ⁾(a) in dst (nil allocates) and returns it.
func PolygammaTo(dst *Tensor, n int, a *Tensor) *Tensor {
	if n < 0 {
		Fail("Polygamma", "negative order %d", n)
	}
	if n == 0 {
		return digammaOp.apply(dst, a)
	}
	return polygammaOp.apply(dst, a, float64(n), 0)
}

// bernoulli2k holds B₂, B₄, …, B₂₀ for the asymptotic series.
var bernoulli2k = [...]float64{1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66,
	-691.0 / 2730, 7.0 / 6, -3617.0 / 510, 43867.0 / 798, -174611.0 / 330}

func polygamma1[T float32 | float64](n int, x T) T {
	var d [1]T
	polygammaRun(n, d[:], []T{x})
	return d[0]
}

// polygammaRun sets dst[i] = ψ⁽ⁿ⁾(x[i]) for n ≥ 1: the recurrence
// ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) + (−1)ⁿ⁺¹·n!/xⁿ⁺¹ (Abramowitz and Stegun, 1964,
// Handbook of Mathematical Functions, 6.4.6) up to x ≥ 10 + 2n, then the
// asymptotic series (A&S 6.4.11) through B₂₀.
func polygammaRun[T float32 | float64](n int, dst, x []T) {
	// Series coefficients c_k = B₂ₖ·(2k+n−1)!/(2k)!, shared by all elements.
	var coef [len(bernoulli2k)]T
	for k := range coef {
		c := bernoulli2k[k]
		for j := 2*(k+1) + 1; j <= 2*(k+1)+n-1; j++ {
			c *= float64(j)
		}
		coef[k] = T(c)
	}
	factN := T(1) // n!
	for j := 2; j <= n; j++ {
		factN *= T(j)
	}
	sign := T(1) // (−1)ⁿ⁺¹
	if n%2 == 0 {
		sign = -1
	}
	// Shift x up to where the asymptotic series converges fast: its terms
	// shrink roughly like ((2k+n)/(2πz))².
	zmin := T(10 + 2*n)
	dst = dst[:len(x)]
	for i, xi := range x {
		switch {
		case xi != xi || xi < -1e6:
			dst[i] = T(math.NaN())
			continue
		case xi <= 0 && xi == T(math.Floor(float64(xi))):
			if n%2 == 1 {
				dst[i] = T(math.Inf(1))
			} else {
				dst[i] = T(math.NaN())
			}
			continue
		}
		var s T // Σ 1/(x+k)ⁿ⁺¹ over the shifted-away terms
		z := xi
		for z < zmin {
			s += powInt(1/z, n+1)
			z++
		}
		inv := 1 / z
		inv2 := inv * inv
		zn := powInt(inv, n) // z⁻ⁿ
		a := factN/T(n)*zn + factN/2*zn*inv
		term := zn * inv2 // z^−(n+2)
		for _, c := range coef {
			a += c * term
			term *= inv2
		}
		dst[i] = sign * (factN*s + a)
	}
}

// powInt returns xᵏ for k ≥ 0 by repeated squaring.
func powInt[T float32 | float64](x T, k int) T {
	r := T(1)
	for k > 0 {
		if k&1 == 1 {
			r *= x
		}
		x *= x
		k >>= 1
	}
	return r
}

var logNdtrOp = &unaryOp{name: "LogNdtr",
	f32: unaryKernel[float32]{elem: logNdtr32, heavy: true},
	f64: unaryKernel[float64]{elem: logNdtr64, heavy: true},
}

// LogNdtr returns log Φ(a), the logarithm of the standard normal
// cumulative distribution function, accurate in both tails (SciPy's
// log_ndtr): erfc in the body, log1p in the upper tail and the asymptotic
// series of Mills' ratio far in the lower tail, where erfc underflows.
func LogNdtr(a *Tensor) *Tensor { return logNdtrOp.apply(nil, a) }

// LogNdtrTo stores log Φ(a) in dst (nil allocates) and returns it.
func LogNdtrTo(dst, a *Tensor) *Tensor { return logNdtrOp.apply(dst, a) }

const (
	halfLog2Pi = 0.9189385332046727 // ½·log 2π
	invSqrt2   = 1 / math.Sqrt2
)

// logNdtr64 is log Φ(x): log1p(−½·erfc(x/√2)) above 5, log(½·erfc(−x/√2))
// down to −37, and below, where erfc underflows, the asymptotic series
// Φ(x) = φ(x)/(−x)·(1 − 1/x² + 3/x⁴ − 15/x⁶ + …) (Abramowitz and Stegun,
// 1964, 26.2.12).
func logNdtr64(x float64) float64 {
	switch {
	case x > 5:
		return math.Log1p(-0.5 * math.Erfc(x*invSqrt2))
	case x > -37:
		return math.Log(0.5 * math.Erfc(-x*invSqrt2))
	default:
		z := 1 / (x * x)
		s := 1 + z*(-1+z*(3+z*(-15+z*(105+z*(-945)))))
		return -0.5*x*x - math.Log(-x) - halfLog2Pi + math.Log(s)
	}
}

// logNdtr32 is logNdtr64 in float32 arithmetic, switching at 3 and −12.
func logNdtr32(x float32) float32 {
	const inv = float32(invSqrt2)
	switch {
	case x > 3:
		return math32.Log1p(-0.5 * math32.Erfc(x*inv))
	case x > -12:
		return math32.Log(0.5 * math32.Erfc(-x*inv))
	default:
		z := 1 / (x * x)
		s := 1 + z*(-1+z*(3+z*(-15+z*105)))
		return -0.5*x*x - math32.Log(-x) - float32(halfLog2Pi) + math32.Log(s)
	}
}

// The Bessel functions are computed in float64 for both dtypes.
var (
	logBesselI0Op = &unaryOp{name: "LogBesselI0",
		f32: unaryKernel[float32]{elem: func(x float32) float32 { return float32(logBesselI0(float64(x))) }, heavy: true},
		f64: unaryKernel[float64]{elem: logBesselI0, heavy: true},
	}
	besselRatioOp = &unaryOp{name: "BesselI1OverI0",
		f32: unaryKernel[float32]{elem: func(x float32) float32 { return float32(besselRatio(float64(x))) }, heavy: true},
		f64: unaryKernel[float64]{elem: besselRatio, heavy: true},
	}
)

// LogBesselI0 returns log I₀(a), the log of the modified Bessel function
// of the first kind of order 0, finite for every finite a (I₀ itself
// overflows beyond a ≈ 713): the power series for |a| ≤ 30 (Abramowitz
// and Stegun, 1964, 9.6.10) and Hankel's asymptotic expansion beyond
// (A&S 9.7.1), with eᵃ added as a.
func LogBesselI0(a *Tensor) *Tensor { return logBesselI0Op.apply(nil, a) }

// LogBesselI0To stores log I₀(a) in dst (nil allocates) and returns it.
func LogBesselI0To(dst, a *Tensor) *Tensor { return logBesselI0Op.apply(dst, a) }

// BesselI1OverI0 returns I₁(a)/I₀(a), the derivative of log I₀, an odd
// function, by the same series and expansions as LogBesselI0 (eᵃ cancels
// in the ratio, so nothing overflows).
func BesselI1OverI0(a *Tensor) *Tensor { return besselRatioOp.apply(nil, a) }

// BesselI1OverI0To stores I₁(a)/I₀(a) in dst (nil allocates) and returns it.
func BesselI1OverI0To(dst, a *Tensor) *Tensor { return besselRatioOp.apply(dst, a) }

// besselEdge is where the power series gives way to the expansions.
const besselEdge = 30.0

// besselSeries returns I₀(x) − 1 and I₁(x) for |x| ≤ 30 by their power
// series Σ_{k≥1} (x²/4)ᵏ/(k!)² and (x/2)·Σ (x²/4)ᵏ/(k!(k+1)!); I₀ − 1
// keeps log I₀ = log1p(I₀ − 1) accurate for small x.
func besselSeries(x float64) (i0m1, i1 float64) {
	q := x * x / 4
	t0, t1 := 1.0, 1.0
	i1 = 1
	for k := 1; k < 200; k++ {
		fk := float64(k)
		t0 *= q / (fk * fk)
		t1 *= q / (fk * (fk + 1))
		i0m1 += t0
		i1 += t1
		if t0 < 1e-17*(1+i0m1) && t1 < 1e-17*i1 {
			break
		}
	}
	return i0m1, x / 2 * i1
}

// hankel returns the sums S₀ and S₁ of the asymptotic expansions
// Iᵥ(x) ≈ eˣ/√(2πx)·Σₖ (−1)ᵏ aₖ(ν)/xᵏ, aₖ(ν) = Π_{j≤k}(4ν² − (2j−1)²)/(k!·8ᵏ),
// for ν = 0 and 1 and x > 30, stopping at the smallest term.
func hankel(x float64) (s0, s1 float64) {
	t0, t1 := 1.0, 1.0
	s0, s1 = 1, 1
	for k := 1; k < 40; k++ {
		odd := float64(2*k-1) * float64(2*k-1)
		n0 := -t0 * (0 - odd) / (float64(k) * 8 * x)
		n1 := -t1 * (4 - odd) / (float64(k) * 8 * x)
		if math.Abs(n0) > math.Abs(t0) {
			break // the series has started to diverge
		}
		t0, t1 = n0, n1
		s0 += t0
		s1 += t1
		if math.Abs(t0) < 1e-17 && math.Abs(t1) < 1e-17 {
			break
		}
	}
	return s0, s1
}

// logBesselI0 returns log I₀(x).
func logBesselI0(x float64) float64 {
	x = math.Abs(x)
	if x <= besselEdge {
		i0m1, _ := besselSeries(x)
		return math.Log1p(i0m1)
	}
	s0, _ := hankel(x)
	return x - 0.5*math.Log(2*math.Pi*x) + math.Log(s0)
}

// besselRatio returns I₁(x)/I₀(x).
func besselRatio(x float64) float64 {
	ax := math.Abs(x)
	var r float64
	if ax <= besselEdge {
		i0m1, i1 := besselSeries(ax)
		r = i1 / (1 + i0m1)
	} else {
		s0, s1 := hankel(ax)
		r = s1 / s0
	}
	return math.Copysign(r, x)
}
