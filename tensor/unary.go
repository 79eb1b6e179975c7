package tensor

// This file holds the elementwise unary operations. Each has an allocating
// form and an XTo(dst, a) form; dst must have a's shape and dtype and may be
// a itself. The hot kernels have a run: a plain loop over a contiguous run
// with no call through a function value per element.

import (
	"math"

	"github.com/chewxy/math32"
)

var negOp = &unaryOp{name: "Neg",
	f32: unaryKernel[float32]{elem: func(x float32) float32 { return -x }, run: negRun[float32]},
	f64: unaryKernel[float64]{elem: func(x float64) float64 { return -x }, run: negRun[float64]},
}

var absOp = &unaryOp{name: "Abs",
	f32: unaryKernel[float32]{elem: math32.Abs},
	f64: unaryKernel[float64]{elem: math.Abs},
}

var signOp = &unaryOp{name: "Sign",
	f32: unaryKernel[float32]{elem: sign[float32]},
	f64: unaryKernel[float64]{elem: sign[float64]},
}

var expOp = &unaryOp{name: "Exp",
	f32: unaryKernel[float32]{elem: exp32, run: expRun32},
	f64: unaryKernel[float64]{elem: exp64, run: expRun64},
}

var expm1Op = &unaryOp{name: "Expm1",
	f32: unaryKernel[float32]{elem: expm1f32, heavy: true},
	f64: unaryKernel[float64]{elem: math.Expm1, heavy: true},
}

var logOp = &unaryOp{name: "Log",
	f32: unaryKernel[float32]{elem: math32.Log, heavy: true},
	f64: unaryKernel[float64]{elem: math.Log, heavy: true},
}

var log1pOp = &unaryOp{name: "Log1p",
	f32: unaryKernel[float32]{elem: math32.Log1p, heavy: true},
	f64: unaryKernel[float64]{elem: math.Log1p, heavy: true},
}

var sqrtOp = &unaryOp{name: "Sqrt",
	f32: unaryKernel[float32]{elem: math32.Sqrt},
	f64: unaryKernel[float64]{elem: math.Sqrt},
}

var squareOp = &unaryOp{name: "Square",
	f32: unaryKernel[float32]{elem: func(x float32) float32 { return x * x }, run: squareRun[float32]},
	f64: unaryKernel[float64]{elem: func(x float64) float64 { return x * x }, run: squareRun[float64]},
}

var reciprocalOp = &unaryOp{name: "Reciprocal",
	f32: unaryKernel[float32]{elem: func(x float32) float32 { return 1 / x }},
	f64: unaryKernel[float64]{elem: func(x float64) float64 { return 1 / x }},
}

var sinOp = &unaryOp{name: "Sin",
	f32: unaryKernel[float32]{elem: math32.Sin, heavy: true},
	f64: unaryKernel[float64]{elem: math.Sin, heavy: true},
}

var cosOp = &unaryOp{name: "Cos",
	f32: unaryKernel[float32]{elem: math32.Cos, heavy: true},
	f64: unaryKernel[float64]{elem: math.Cos, heavy: true},
}

var erfOp = &unaryOp{name: "Erf",
	f32: unaryKernel[float32]{elem: math32.Erf, heavy: true},
	f64: unaryKernel[float64]{elem: math.Erf, heavy: true},
}

var lgammaOp = &unaryOp{name: "Lgamma",
	f32: unaryKernel[float32]{elem: lgamma32, heavy: true},
	f64: unaryKernel[float64]{elem: lgamma64, heavy: true},
}

var digammaOp = &unaryOp{name: "Digamma",
	f32: unaryKernel[float32]{elem: digamma32, heavy: true},
	f64: unaryKernel[float64]{elem: digamma64, heavy: true},
}

var geluOp = &unaryOp{name: "Gelu",
	f32: unaryKernel[float32]{elem: gelu32, run: geluRun32},
	f64: unaryKernel[float64]{elem: gelu64, heavy: true},
}

func sign[T Float](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // ±0 and NaN
}

func negRun[T Float](d, x []T) {
	x = x[:len(d)]
	for i := range d {
		d[i] = -x[i]
	}
}

func squareRun[T Float](d, x []T) {
	x = x[:len(d)]
	for i := range d {
		d[i] = x[i] * x[i]
	}
}

// expRun32 is exp32 over a run: the vector kernel where the values stay in
// its range, the scalar code elsewhere (expShiftRun32 with no shift).
func expRun32(d, x []float32) { expShiftRun32(d, x, 0) }

// expRun64 runs the vector kernel on blocks of 4 while every input is in
// [exp64Min, exp64Max]; a block it hands back, the tail, and every element
// where there is no vector kernel take the scalar path, exp64: exp64Core in
// range, exp64High just above it, math.Exp elsewhere (overflow to +Inf,
// subnormal and zero results, NaN).
func expRun64(d, x []float64) {
	x = x[:len(d)]
	for i := 0; i < len(d); {
		if k := expBlocks64(d[i:], x[i:]); k > 0 {
			i += k
			continue
		}
		end := len(d)
		if hasSIMD {
			end = min(i+4, end) // one block, then back to the vector kernel
		}
		for ; i < end; i++ {
			d[i] = exp64(x[i])
		}
	}
}

// exp64 is eˣ element by element, as expRun64 computes it (strided runs
// use it), so a value does not depend on the layout it is stored in.
func exp64(x float64) float64 {
	switch {
	case x >= exp64Min && x <= exp64Max:
		return exp64Core(x)
	case x > exp64Max && x <= exp64Overflow:
		return exp64High(x)
	case x < exp64Underflow:
		return 0 // as math.Exp, without its call: kernels far apart are common
	}
	return math.Exp(x)
}

// exp64Underflow is the bound below which math.Exp returns 0 (eˣ is below
// half the smallest subnormal).
const exp64Underflow = -7.45133219101941108420e+02

// exp64Overflow is the largest x with a finite eˣ (ln of MaxFloat64,
// rounded down). Between exp64Max and it k reaches 1024, where adding k to
// the exponent field would overflow; Go's amd64 math.Exp returns +Inf
// there too, from x ≈ 709.44.
const exp64Overflow = 0x1.62e42fefa39efp+9

// exp64Round is 1.5·2⁵²: adding then subtracting it rounds to an integer
// (ties to even).
const exp64Round = 0x1.8p52

// exp64High is eˣ for x in (exp64Max, exp64Overflow]: exp64Core's
// reduction with the scale by 2ᵏ done by math.Ldexp.
func exp64High(x float64) float64 {
	y, t := exp64Reduced(x)
	return math.Ldexp(y, int(t-exp64Round))
}

// exp64Core's range: for x in [-708, 709], k = round(x·log2e) lies in
// [-1021, 1023] and eʳ in [0.70, 1.42], so eʳ·2ᵏ has a biased exponent in
// [1, 2046]: a normal float64, and scaling by adding k to y's exponent
// field is exact. eˣ is normal down to x ≈ -708.40, so this only gives up
// the last 0.4 below and 0.78 above to math.Exp.
const (
	exp64Min = -708
	exp64Max = 709
)

// exp64Core is eˣ for x in [exp64Min, exp64Max] (callers test the range,
// which NaN fails), accurate to under 1 ulp. It is FreeBSD's e_exp.c as in Go's
// math/exp.go: with x = k·ln2 + r, |r| ≤ ln2/2, c = r − r²·P(r²) and
// eʳ = 1 − ((lo − r·c/(2−c)) − hi) where r = hi − lo. expAVX2F64 performs
// the same IEEE operations in the same order with the same constants, so
// the two agree bit for bit. The float64(·) conversions around products
// stop the compiler fusing them into FMAs (it does with GOAMD64=v3), which
// would round differently from the vector kernel.
func exp64Core(x float64) float64 {
	y, t := exp64Reduced(x)
	// t's low mantissa bits hold k in two's complement and exp64Round's bits end
	// in 12 zeros, so t's bits shifted left by 52 are k in the exponent
	// field: adding them multiplies y by 2ᵏ.
	return math.Float64frombits(math.Float64bits(y) + math.Float64bits(t)<<52)
}

// exp64Reduced computes y = eʳ for x = k·ln2 + r and returns it with
// t = k + exp64Round, which holds k in its low mantissa bits.
func exp64Reduced(x float64) (y, t float64) {
	const (
		log2e = 1.44269504088896338700e+00
		ln2Hi = 6.93147180369123816490e-01 // 32 significant bits: k·ln2Hi is exact
		ln2Lo = 1.90821492927058770002e-10

		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	t = float64(x*log2e) + exp64Round
	k := t - exp64Round
	hi := x - float64(k*ln2Hi) // exact (Cody–Waite)
	lo := float64(k * ln2Lo)   // it feeds hi − lo: keep it rounded
	r := hi - lo
	s := r * r
	p := float64(s*p5) + p4
	p = float64(s*p) + p3
	p = float64(s*p) + p2
	p = float64(s*p) + p1
	c := r - float64(s*p)
	y = 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return y, t
}

// Neg returns −a.
func Neg(a *Tensor) *Tensor { return negOp.apply(nil, a) }

// NegTo stores −a in dst (nil allocates) and returns it.
func NegTo(dst, a *Tensor) *Tensor { return negOp.apply(dst, a) }

// Abs returns |a|.
func Abs(a *Tensor) *Tensor { return absOp.apply(nil, a) }

// AbsTo stores |a| in dst (nil allocates) and returns it.
func AbsTo(dst, a *Tensor) *Tensor { return absOp.apply(dst, a) }

// Sign returns 1 where a > 0, −1 where a < 0 and a itself where a is ±0 or
// NaN.
func Sign(a *Tensor) *Tensor { return signOp.apply(nil, a) }

// SignTo stores Sign(a) in dst (nil allocates) and returns it.
func SignTo(dst, a *Tensor) *Tensor { return signOp.apply(dst, a) }

// Exp returns eᵃ.
func Exp(a *Tensor) *Tensor { return expOp.apply(nil, a) }

// ExpTo stores eᵃ in dst (nil allocates) and returns it.
func ExpTo(dst, a *Tensor) *Tensor { return expOp.apply(dst, a) }

// Expm1 returns eᵃ − 1, accurate for small a.
func Expm1(a *Tensor) *Tensor { return expm1Op.apply(nil, a) }

// Expm1To stores eᵃ − 1 in dst (nil allocates) and returns it.
func Expm1To(dst, a *Tensor) *Tensor { return expm1Op.apply(dst, a) }

// Log returns the natural logarithm (NaN for negative values, −Inf at 0).
func Log(a *Tensor) *Tensor { return logOp.apply(nil, a) }

// LogTo stores log(a) in dst (nil allocates) and returns it.
func LogTo(dst, a *Tensor) *Tensor { return logOp.apply(dst, a) }

// Log1p returns log(1 + a), accurate for small a.
func Log1p(a *Tensor) *Tensor { return log1pOp.apply(nil, a) }

// Log1pTo stores log(1 + a) in dst (nil allocates) and returns it.
func Log1pTo(dst, a *Tensor) *Tensor { return log1pOp.apply(dst, a) }

// Sqrt returns √a (NaN for negative values).
func Sqrt(a *Tensor) *Tensor { return sqrtOp.apply(nil, a) }

// SqrtTo stores √a in dst (nil allocates) and returns it.
func SqrtTo(dst, a *Tensor) *Tensor { return sqrtOp.apply(dst, a) }

// Square returns a².
func Square(a *Tensor) *Tensor { return squareOp.apply(nil, a) }

// SquareTo stores a² in dst (nil allocates) and returns it.
func SquareTo(dst, a *Tensor) *Tensor { return squareOp.apply(dst, a) }

// Reciprocal returns 1/a (±Inf at ±0).
func Reciprocal(a *Tensor) *Tensor { return reciprocalOp.apply(nil, a) }

// ReciprocalTo stores 1/a in dst (nil allocates) and returns it.
func ReciprocalTo(dst, a *Tensor) *Tensor { return reciprocalOp.apply(dst, a) }

// Sin returns sin(a).
func Sin(a *Tensor) *Tensor { return sinOp.apply(nil, a) }

// SinTo stores sin(a) in dst (nil allocates) and returns it.
func SinTo(dst, a *Tensor) *Tensor { return sinOp.apply(dst, a) }

// Cos returns cos(a).
func Cos(a *Tensor) *Tensor { return cosOp.apply(nil, a) }

// CosTo stores cos(a) in dst (nil allocates) and returns it.
func CosTo(dst, a *Tensor) *Tensor { return cosOp.apply(dst, a) }

// Erf returns the error function of a.
func Erf(a *Tensor) *Tensor { return erfOp.apply(nil, a) }

// ErfTo stores erf(a) in dst (nil allocates) and returns it.
func ErfTo(dst, a *Tensor) *Tensor { return erfOp.apply(dst, a) }

// Lgamma returns log|Γ(a)| (the sign of Γ is not returned; +Inf at the
// poles 0, −1, −2, ...).
func Lgamma(a *Tensor) *Tensor { return lgammaOp.apply(nil, a) }

// LgammaTo stores log|Γ(a)| in dst (nil allocates) and returns it.
func LgammaTo(dst, a *Tensor) *Tensor { return lgammaOp.apply(dst, a) }

// Digamma returns ψ(a) = d/da log Γ(a): −Inf at +0, +Inf at −0, NaN at the
// negative integers.
func Digamma(a *Tensor) *Tensor { return digammaOp.apply(nil, a) }

// DigammaTo stores ψ(a) in dst (nil allocates) and returns it.
func DigammaTo(dst, a *Tensor) *Tensor { return digammaOp.apply(dst, a) }

// Gelu returns the exact GELU a·Φ(a) = 0.5·a·(1 + erf(a/√2)), the Gaussian
// CDF form (not the tanh approximation). It is evaluated through erfc so
// it stays accurate for negative a.
func Gelu(a *Tensor) *Tensor { return geluOp.apply(nil, a) }

// GeluTo stores Gelu(a) in dst (nil allocates) and returns it.
func GeluTo(dst, a *Tensor) *Tensor { return geluOp.apply(dst, a) }

// paramKernel is one dtype's implementation of a unary op with up to two
// scalar parameters p and q (converted once to the dtype).
type paramKernel[T Float] struct {
	elem func(x, p, q T) T
	run  func(d, x []T, p, q T) // optional
}

// paramOp is a unary op with scalar parameters, such as AddScalar or Clamp.
type paramOp struct {
	name string
	f32  paramKernel[float32]
	f64  paramKernel[float64]
}

// apply computes op(a; p, q) into dst (allocated when nil; it must have
// a's shape and dtype otherwise, and may be a itself).
func (op *paramOp) apply(dst, a *Tensor, p, q float64) *Tensor {
	dst = prepareDst(op.name, dst, a.dtype, a.shape, a)
	checkOverlap(op.name, dst, a)
	return op.run(dst, a, p, q)
}

// run is apply after validation (dst shaped like a, same dtype, no partial
// overlap): the trusted kernel graph calls (internal/unchecked).
func (op *paramOp) run(dst, a *Tensor, p, q float64) *Tensor {
	if dst.dev != nil || a.dev != nil {
		gpuParam(op.name, dst, a, p, q)
		return dst
	}
	if a.dtype == Float32 {
		runParam(dst, a, float32(p), float32(q), op.f32)
	} else {
		runParam(dst, a, p, q, op.f64)
	}
	return dst
}

func runParam[T Float](dst, a *Tensor, p, q T, k paramKernel[T]) {
	elem, run := k.elem, k.run
	f := func(x T) T { return elem(x, p, q) }
	if run == nil {
		unaryApply(dst, a, func(d, x []T) {
			for i := range d {
				d[i] = elem(x[i], p, q)
			}
		}, f)
		return
	}
	unaryApply(dst, a, func(d, x []T) { run(d, x, p, q) }, f)
}

var leakyReluOp = &paramOp{name: "LeakyRelu",
	f32: paramKernel[float32]{elem: leakyRelu[float32], run: leakyReluRun[float32]},
	f64: paramKernel[float64]{elem: leakyRelu[float64], run: leakyReluRun[float64]},
}

// leakyReluRun is leakyRelu over a run, without a call per element: x
// times a factor chosen branch-free (leakyFactorRun; x·1 = x exactly).
func leakyReluRun[T Float](d, x []T, slope, _ T) {
	switch d := any(d).(type) {
	case []float32:
		xs := any(x).([]float32)
		leakyFactorRun(d, xs, xs, math.Float32bits(float32(slope)), one32Bits, math.Float32frombits)
	case []float64:
		xs := any(x).([]float64)
		leakyFactorRun(d, xs, xs, math.Float64bits(float64(slope)), one64Bits, math.Float64frombits)
	}
}

var eluOp = &paramOp{name: "Elu",
	f32: paramKernel[float32]{elem: func(x, alpha, _ float32) float32 {
		if x > 0 {
			return x
		}
		return alpha * expm1f32(x)
	}},
	f64: paramKernel[float64]{elem: func(x, alpha, _ float64) float64 {
		if x > 0 {
			return x
		}
		return alpha * math.Expm1(x)
	}},
}

var clampOp = &paramOp{name: "Clamp",
	f32: paramKernel[float32]{elem: clamp[float32]},
	f64: paramKernel[float64]{elem: clamp[float64]},
}

var addScalarOp = &paramOp{name: "AddScalar",
	f32: paramKernel[float32]{elem: func(x, s, _ float32) float32 { return x + s }, run: addScalarRun[float32]},
	f64: paramKernel[float64]{elem: func(x, s, _ float64) float64 { return x + s }, run: addScalarRun[float64]},
}

var mulScalarOp = &paramOp{name: "MulScalar",
	f32: paramKernel[float32]{elem: func(x, s, _ float32) float32 { return x * s }, run: mulScalarRun[float32]},
	f64: paramKernel[float64]{elem: func(x, s, _ float64) float64 { return x * s }, run: mulScalarRun[float64]},
}

var powScalarOp = &paramOp{name: "PowScalar",
	f32: paramKernel[float32]{elem: func(x, p, _ float32) float32 { return pow32(x, p) }},
	f64: paramKernel[float64]{elem: func(x, p, _ float64) float64 { return math.Pow(x, p) }},
}

func leakyRelu[T Float](x, slope, _ T) T {
	if x > 0 {
		return x
	}
	return slope * x
}

func clamp[T Float](x, lo, hi T) T { return min(max(x, lo), hi) }

func addScalarRun[T Float](d, x []T, s, _ T) {
	x = x[:len(d)]
	for i := range d {
		d[i] = x[i] + s
	}
}

func mulScalarRun[T Float](d, x []T, s, _ T) {
	x = x[:len(d)]
	for i := scaleBlocks(d, x, s); i < len(d); i++ {
		d[i] = x[i] * s
	}
}

// LeakyRelu returns a where a > 0 and slope·a elsewhere.
func LeakyRelu(a *Tensor, slope float64) *Tensor { return leakyReluOp.apply(nil, a, slope, 0) }

// LeakyReluTo stores LeakyRelu(a, slope) in dst (nil allocates) and returns it.
func LeakyReluTo(dst, a *Tensor, slope float64) *Tensor {
	return leakyReluOp.apply(dst, a, slope, 0)
}

// Elu returns a where a > 0 and alpha·(eᵃ − 1) elsewhere.
func Elu(a *Tensor, alpha float64) *Tensor { return eluOp.apply(nil, a, alpha, 0) }

// EluTo stores Elu(a, alpha) in dst (nil allocates) and returns it.
func EluTo(dst, a *Tensor, alpha float64) *Tensor { return eluOp.apply(dst, a, alpha, 0) }

// Clamp limits a to [lo, hi]; NaN stays NaN. Either bound may be infinite.
// It panics if lo > hi.
func Clamp(a *Tensor, lo, hi float64) *Tensor { return ClampTo(nil, a, lo, hi) }

// ClampTo stores Clamp(a, lo, hi) in dst (nil allocates) and returns it.
func ClampTo(dst, a *Tensor, lo, hi float64) *Tensor {
	if lo > hi {
		Fail("Clamp", "lower bound %g exceeds upper bound %g (tensor %s)", lo, hi, describe(a))
	}
	return clampOp.apply(dst, a, lo, hi)
}

// AddScalar returns a + s.
func AddScalar(a *Tensor, s float64) *Tensor { return addScalarOp.apply(nil, a, s, 0) }

// AddScalarTo stores a + s in dst (nil allocates) and returns it.
func AddScalarTo(dst, a *Tensor, s float64) *Tensor { return addScalarOp.apply(dst, a, s, 0) }

// MulScalar returns a·s.
func MulScalar(a *Tensor, s float64) *Tensor { return mulScalarOp.apply(nil, a, s, 0) }

// MulScalarTo stores a·s in dst (nil allocates) and returns it.
func MulScalarTo(dst, a *Tensor, s float64) *Tensor { return mulScalarOp.apply(dst, a, s, 0) }

// PowScalar returns aᵖ with math.Pow's special cases (NaN for a negative
// base and a non-integer p).
func PowScalar(a *Tensor, p float64) *Tensor { return powScalarOp.apply(nil, a, p, 0) }

// PowScalarTo stores aᵖ in dst (nil allocates) and returns it.
func PowScalarTo(dst, a *Tensor, p float64) *Tensor { return powScalarOp.apply(dst, a, p, 0) }
