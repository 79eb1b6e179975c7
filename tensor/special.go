package tensor

// Scalar special functions behind the elementwise ops, one per dtype so
// float32 work stays in float32. Where math32 is inaccurate or wrong at an
// edge (Exp loses ~20 ulp, Expm1 returns NaN just above the overflow
// threshold, Pow treats ±0.5 and huge exponents differently from math.Pow),
// the float32 version here fixes it.

import (
	"math"

	"github.com/chewxy/math32"
)

// exp32 is eˣ in float32, within about 1 ulp (Cephes expf), including
// gradual underflow to subnormals and overflow to +Inf.
func exp32(x float32) float32 {
	if x != x {
		return x
	}
	if x > 89 {
		return float32(math.Inf(1))
	}
	if x < -104 { // below half the smallest subnormal
		return 0
	}
	return exp32Core(x)
}

// exp32Core is exp32 for finite x in [-104, 89]; hot loops inline its
// common path and call exp32 only for the rare out-of-range values.
func exp32Core(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		c1    = 0.693359375 // ln 2 = c1 + c2 with c1 exact in 9 bits
		c2    = -2.12194440e-4
		round = 12582912 // 1.5·2²³: adding then subtracting it rounds to an integer
	)
	// The float32(·) conversions round each product, so the compiler does
	// not fuse it with the following addition into an FMA (it does with
	// GOAMD64=v3), which would round differently from the vector kernels.
	k := float32(x*log2e) + round
	k -= round
	r := x - float32(k*c1)
	r -= float32(k * c2)
	// The degree-5 polynomial in Estrin's form, (A + B·r²) + C·r⁴ with
	// three linear pieces, instead of Horner's five dependent steps: the
	// vector kernels are bound by this chain's latency, not by their
	// operation count (GELU's kernel ran 1.4× faster for the shorter
	// chains on the Zen 3).
	pa := float32(1.6666665459e-1*r) + 5.0000001201e-1
	pb := float32(8.3334519073e-3*r) + 4.1665795894e-2
	pc := float32(1.9875691500e-4*r) + 1.3981999507e-3
	r2 := r * r
	p := float32(pa+float32(pb*r2)) + float32(pc*float32(r2*r2))
	y := float32(p*r2) + r + 1
	n := int32(k)
	switch {
	case n > 127: // the result may still be finite: scale in two steps
		return y * 2 * pow2f32(n-1)
	case n < -126: // subnormal result: round once, at the last multiply
		return y * pow2f32(n+64) * 0x1p-64
	}
	return y * pow2f32(n)
}

// pow2f32 is 2ⁿ for n in the normal exponent range [-126, 127].
func pow2f32(n int32) float32 { return math.Float32frombits(uint32(n+127) << 23) }

// expm1f32 is eˣ−1 in float32; math32.Expm1 returns NaN for x just above
// the float32 overflow threshold. Beyond 20 the −1 is below half an ulp of
// eˣ, so exp32 is exact enough and overflows correctly.
func expm1f32(x float32) float32 {
	if x > 20 {
		return exp32(x)
	}
	return math32.Expm1(x)
}

// tanh32 is Cephes tanhf on top of exp32.
func tanh32(x float32) float32 {
	z := math32.Abs(x)
	if z >= 0.625 {
		t := 1 - 2/(exp32(z+z)+1)
		if x < 0 {
			return -t
		}
		return t
	}
	s := x * x // products rounded before each addition, as in exp32Core
	p := float32(-5.70498872745e-3*s) + 2.06390887954e-2
	p = float32(p*s) - 5.37397155531e-2
	p = float32(p*s) + 1.33314422036e-1
	p = float32(p*s) - 3.33332819422e-1
	return float32(float32(p*s)*x) + x
}

// sigmoid32 is 1/(1+e⁻ˣ), evaluated from e^-|x| so it never overflows:
// sigmoid(±1000) is exactly 1 and 0.
func sigmoid32(x float32) float32 {
	e := exp32(-math32.Abs(x))
	if x >= 0 {
		return 1 / (1 + e)
	}
	return e / (1 + e)
}

func sigmoid64(x float64) float64 {
	e := math.Exp(-math.Abs(x))
	if x >= 0 {
		return 1 / (1 + e)
	}
	return e / (1 + e)
}

// softplus is log(1+eˣ) = max(x, 0) + log1p(e^-|x|), which neither
// overflows for large x nor loses the tiny value for very negative x. The
// float32 form stays in float32 (math32.Log1p goes through float64 and
// costs ~25 ns) and is exactly what softplusAVX2 computes per lane.
func softplus32(x float32) float32 {
	a := math32.Abs(x)
	var e float32
	if a <= 87 {
		e = exp32Core(-a)
	} else {
		e = exp32(-a)
	}
	return max(x, 0) + log1pUnit32(e)
}

// log1pUnit32 is log(1+e) for e in [0, 1] (NaN passes through), within
// 1 ulp (TestLog1pUnit32Sweep): 2·atanh(s) with s = e/(2+e) ≤ 1/3, by the
// odd series to s¹⁵, whose truncation is below 1.5e-9 relative. It is
// summed as t + (t·s²·q − c) with t = 2s so only the leading term's
// rounding counts in full; c = s(1−s)·r corrects t for the rounding error
// r = (2+e) − d of the denominator d (exact, as 2 ≥ e), since
// 2s·r/d = s(1−s)·r. softplusAVX2 repeats these operations in this order.
func log1pUnit32(e float32) float32 {
	d := 2 + e
	s := e / d
	r := (2 - d) + e
	s2 := s * s
	t := s + s
	// Products rounded before each addition, as in exp32Core.
	q := float32((1.0/15)*s2) + 1.0/13
	q = float32(q*s2) + 1.0/11
	q = float32(q*s2) + 1.0/9
	q = float32(q*s2) + 1.0/7
	q = float32(q*s2) + 1.0/5
	q = float32(q*s2) + 1.0/3
	return t + (float32(float32(t*s2)*q) - float32(float32(s*(1-s))*r))
}

func softplus64(x float64) float64 {
	return max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// gelu32 is x·Φ(x) = 0.5·x·erfc(−x/√2), with erfc(−x/√2) = 2Φ(x) from
// twoPhi32 (one exp32Core and one division). For |x| ≤ 12 this is the
// arithmetic of the vector kernel geluAVX2 in the same order (each
// product rounded by float32(·), so no FMA is fused), so both agree bit
// for bit; above 12, Φ is 1 in float32; below −12, math32.Erfc (exact in
// the far tail, where Φ underflows).
func gelu32(x float32) float32 {
	if x >= -12 && x <= 12 {
		return float32(0.5*x) * twoPhi32(x, float32(float32(-0.5*x)*x))
	}
	if x > 12 {
		return x
	}
	if math32.IsInf(x, -1) {
		return 0
	}
	return 0.5 * x * math32.Erfc(-x*math32.Sqrt2/2)
}

// twoPhi32 is 2Φ(x) = erfc(−x/√2) given h = −x²/2: with z = |x|/√2, the
// Chebyshev fit of Numerical Recipes' erfcc (Press et al. 2007, Numerical
// Recipes, 3rd ed., §6.2.2), e = erfc(z) = t·exp(−z² − 1.26551223 + P(t))
// with t = 1/(1 + z/2), relative error below 1.2e−7 (plus |h|·2⁻²⁴ from
// rounding h), and 2Φ is e for x with its sign bit set and 2 − e
// otherwise, where e ≤ 1 keeps the error below 1.2e−7 absolutely. The
// sign bit, not x < 0, picks the branch, as the vector kernels' blend
// does, so −0 gives e.
func twoPhi32(x, h float32) float32 {
	// t = 1/(1 + z/2) with z/2 = |x|·(0.5/√2) in one product: halving is
	// exact, so this rounds as (|x|/√2)/2 does, one step shorter.
	t := 1 / (1 + float32(math32.Abs(x)*(0.5/math.Sqrt2)))
	// P(t) = t·Q(t), Q of degree 8 in Estrin's form (as in exp32Core):
	// four linear pieces, joined by t², t⁴ and t⁸.
	a0 := float32(0.37409196*t) + 1.00002368
	a1 := float32(-0.18628806*t) + 0.09678418
	a2 := float32(-1.13520398*t) + 0.27886807
	a3 := float32(-0.82215223*t) + 1.48851587
	t2 := t * t
	t4 := t2 * t2
	b0 := a0 + float32(a1*t2)
	b1 := a2 + float32(a3*t2)
	q := float32(b0+float32(b1*t4)) + float32(0.17087277*float32(t4*t4))
	p := float32(q * t) // rounded, so that the sum below cannot fuse it
	e := t * exp32Core(h-1.26551223+p)
	if math32.Signbit(x) {
		return e
	}
	return 2 - e
}

// geluRun32 runs the vector GELU where it can and gelu32 on the blocks it
// hands back (|x| > 12 or NaN) and on the tail.
func geluRun32(d, x []float32) {
	x = x[:len(d)]
	for len(d) >= 8 {
		k := geluBlocks(d, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			geluScalar32(d[:8], x[:8])
		}
		d, x = d[k:], x[k:]
	}
	geluScalar32(d, x)
}

// geluScalar32 is the scalar form of geluRun32.
func geluScalar32(d, x []float32) {
	x = x[:len(d)]
	for i := range d {
		d[i] = gelu32(x[i])
	}
}

func gelu64(x float64) float64 {
	if math.IsInf(x, -1) {
		return 0
	}
	return 0.5 * x * math.Erfc(-x*math.Sqrt2/2)
}

// lgamma is log|Γ(x)| (the sign of Γ is dropped).
func lgamma32(x float32) float32 {
	v, _ := math32.Lgamma(x)
	return v
}

func lgamma64(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// digamma64 is ψ(x) = d/dx log Γ(x). Positive x: the recurrence
// ψ(x) = ψ(x+1) − 1/x raises x to at least 10, where the asymptotic series
// through x⁻¹⁴ is accurate to about 1e-17 (at 6 its truncation error would
// be about 1e-13). Negative x: the reflection ψ(x) = ψ(1−x) − π·cot(πx).
// ψ(±0) = ∓Inf, NaN at the negative integers and −Inf.
func digamma64(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case x == 0:
		return math.Copysign(math.Inf(1), -x)
	case x < 0:
		fl := math.Floor(x)
		if x == fl {
			return math.NaN()
		}
		// cot(πx) = tan(π(½ − r)) with r = x − ⌊x⌋: reducing first keeps
		// πx accurate for large |x| and makes cot exactly 0 at half-integers.
		return digamma64(1-x) - math.Pi*math.Tan(math.Pi*(0.5-(x-fl)))
	}
	var acc float64
	for x < 10 {
		acc -= 1 / x
		x++
	}
	z := 1 / (x * x)
	s := z * (1.0/12 - z*(1.0/120-z*(1.0/252-z*(1.0/240-z*(1.0/132-z*(691.0/32760-z/12))))))
	return acc + math.Log(x) - 0.5/x - s
}

// digamma32 is digamma64 in float32: recurrence to x ≥ 6, where the series
// through x⁻⁸ is accurate to about 1e-10.
func digamma32(x float32) float32 {
	switch {
	case math32.IsNaN(x) || math32.IsInf(x, -1):
		return math32.NaN()
	case x == 0:
		return math32.Copysign(math32.Inf(1), -x)
	case x < 0:
		fl := math32.Floor(x)
		if x == fl {
			return math32.NaN()
		}
		return digamma32(1-x) - math32.Pi*math32.Tan(math32.Pi*(0.5-(x-fl)))
	}
	var acc float32
	for x < 6 {
		acc -= 1 / x
		x++
	}
	z := 1 / (x * x)
	s := z * (1.0/12 - z*(1.0/120-z*(1.0/252-z/240)))
	return acc + math32.Log(x) - 0.5/x - s
}

// pow32 is xʸ in float32 with math.Pow's special cases. math32.Pow maps
// y = ±0.5 to Sqrt (wrong for ±0 and −Inf), and for |y| ≥ 2³¹ it returns
// NaN for negative x and garbage from math32.Exp's huge argument.
func pow32(x, y float32) float32 {
	switch {
	case (y == 0.5 || y == -0.5) && (x == 0 || math32.IsInf(x, -1)):
		if (y > 0) == (x == 0) {
			return 0
		}
		return math32.Inf(1)
	case math32.Abs(y) >= 1<<31 && !math32.IsInf(y, 0) && x != 0 && !math32.IsInf(x, 0) && !math32.IsNaN(x):
		// Such a y is an even integer, so the sign of x does not matter.
		return exp32(y * math32.Log(math32.Abs(x)))
	case math32.Abs(y) >= 1<<24 && !math32.IsInf(y, 0) && (x == 0 || math32.IsInf(x, 0)):
		// Every float32 of this size is an even integer, so (±0)ʸ and
		// (±∞)ʸ are those of +0 and +∞. math32.Pow decides parity through
		// an integer conversion that overflows (to an odd number on arm64).
		return math32.Pow(math32.Abs(x), y)
	}
	return math32.Pow(x, y)
}
