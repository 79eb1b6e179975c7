package tensor

import (
	"math"

	"github.com/chewxy/math32"
)

// The activations (tanh, sigmoid, softplus, relu) and the fused kernels of
// their derivatives. Each derivative kernel computes, in one pass and in
// the same floating-point operations, what a rule made of several ops and
// temporaries computes, so results are bit-identical to the unfused rule.

var tanhOp = &unaryOp{name: "Tanh",
	f32: unaryKernel[float32]{elem: tanh32, run: tanhRun32},
	f64: unaryKernel[float64]{elem: math.Tanh, run: tanhRun64},
}

var sigmoidOp = &unaryOp{name: "Sigmoid",
	f32: unaryKernel[float32]{elem: sigmoid32, run: sigmoidRun32},
	f64: unaryKernel[float64]{elem: sigmoid64, run: sigmoidRun64},
}

var softplusOp = &unaryOp{name: "Softplus",
	f32: unaryKernel[float32]{elem: softplus32, run: softplusRun32},
	f64: unaryKernel[float64]{elem: softplus64, heavy: true},
}

var reluOp = &unaryOp{name: "Relu",
	f32: unaryKernel[float32]{elem: relu[float32], run: reluRun[float32]},
	f64: unaryKernel[float64]{elem: relu[float64], run: reluRun[float64]},
}

// relu keeps NaN (the builtin max propagates it) so bad values are not
// silently hidden. max is also branch-free, which matters on data whose
// signs are random.
func relu[T Float](x T) T { return max(x, 0) }

func reluRun[T Float](d, x []T) {
	x = x[:len(d)]
	for i := reluBlocks(d, x); i < len(d); i++ {
		d[i] = max(x[i], 0)
	}
}

func tanhRun32(d, x []float32) {
	x = x[:len(d)]
	// As in sigmoidRun32: vector blocks, scalar code where they stop.
	for len(d) >= 8 {
		k := tanhBlocks(d, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			tanhScalar32(d[:8], x[:8])
		}
		d, x = d[k:], x[k:]
	}
	tanhScalar32(d, x)
}

// tanhScalar32 is the scalar form of tanhRun32.
func tanhScalar32(d, x []float32) {
	x = x[:len(d)]
	for i := range d {
		d[i] = tanh32(x[i])
	}
}

func tanhRun64(d, x []float64) {
	x = x[:len(d)]
	for i := range d {
		d[i] = math.Tanh(x[i])
	}
}

// sigmoidRun32 is sigmoid32 with the numerator (1 for x ≥ 0, e^-|x| for
// x < 0) picked by the sign bit instead of a branch, which mispredicts
// half the time on typical activations.
func sigmoidRun32(d, x []float32) {
	x = x[:len(d)]
	// The vector kernel stops at blocks with |x| > 87 or NaN, which this
	// loop's scalar code handles, then resumes.
	for len(d) >= 8 {
		k := sigmoidBlocks(d, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			sigmoidScalar32(d[:8], x[:8])
		}
		d, x = d[k:], x[k:]
	}
	sigmoidScalar32(d, x)
}

// sigmoidScalar32 is the scalar form of sigmoidRun32.
func sigmoidScalar32(d, x []float32) {
	x = x[:len(d)]
	for i := range d {
		v := x[i]
		var e float32
		if a := math32.Abs(v); a <= 87 {
			e = exp32Core(-a)
		} else {
			e = exp32(-a)
		}
		neg := uint32(int32(math.Float32bits(v)) >> 31) // all ones when v < 0
		num := math.Float32frombits(math.Float32bits(e)&neg | math.Float32bits(1)&^neg)
		d[i] = num / (1 + e)
	}
}

// softplusRun32 runs the vector softplus where it can and softplus32 on
// the blocks it hands back (|x| > 87 or NaN) and on the tail.
func softplusRun32(d, x []float32) {
	x = x[:len(d)]
	for len(d) >= 8 {
		k := softplusBlocks(d, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			softplusScalar32(d[:8], x[:8])
		}
		d, x = d[k:], x[k:]
	}
	softplusScalar32(d, x)
}

// softplusScalar32 is the scalar form of softplusRun32.
func softplusScalar32(d, x []float32) {
	x = x[:len(d)]
	for i := range d {
		d[i] = softplus32(x[i])
	}
}

func sigmoidRun64(d, x []float64) {
	x = x[:len(d)]
	for i := range d {
		v := x[i]
		e := math.Exp(-math.Abs(v))
		neg := uint64(int64(math.Float64bits(v)) >> 63)
		num := math.Float64frombits(math.Float64bits(e)&neg | math.Float64bits(1)&^neg)
		d[i] = num / (1 + e)
	}
}

// Tanh returns tanh(a).
func Tanh(a *Tensor) *Tensor { return tanhOp.apply(nil, a) }

// TanhTo stores tanh(a) in dst (nil allocates) and returns it.
func TanhTo(dst, a *Tensor) *Tensor { return tanhOp.apply(dst, a) }

// Sigmoid returns 1/(1 + e⁻ᵃ), computed without overflow: Sigmoid of ±1000
// is exactly 1 and 0.
func Sigmoid(a *Tensor) *Tensor { return sigmoidOp.apply(nil, a) }

// SigmoidTo stores Sigmoid(a) in dst (nil allocates) and returns it.
func SigmoidTo(dst, a *Tensor) *Tensor { return sigmoidOp.apply(dst, a) }

// Softplus returns log(1 + eᵃ), computed as max(a, 0) + log1p(e^−|a|) so it
// neither overflows for large a nor underflows badly for very negative a.
func Softplus(a *Tensor) *Tensor { return softplusOp.apply(nil, a) }

// SoftplusTo stores Softplus(a) in dst (nil allocates) and returns it.
func SoftplusTo(dst, a *Tensor) *Tensor { return softplusOp.apply(dst, a) }

// Relu returns max(a, 0); NaN stays NaN.
func Relu(a *Tensor) *Tensor { return reluOp.apply(nil, a) }

// ReluTo stores Relu(a) in dst (nil allocates) and returns it.
func ReluTo(dst, a *Tensor) *Tensor { return reluOp.apply(dst, a) }

var sigmoidGradOp = &binaryOp{name: "SigmoidGrad",
	f32: binaryKernel[float32]{elem: sigmoidGrad32, run: sigmoidGradRun32},
	f64: binaryKernel[float64]{elem: sigmoidGrad64, run: sigmoidGradRun64},
}

var tanhGradOp = &binaryOp{name: "TanhGrad",
	f32: binaryKernel[float32]{elem: tanhGrad[float32], run: tanhGradRun[float32]},
	f64: binaryKernel[float64]{elem: tanhGrad[float64], run: tanhGradRun[float64]},
}

// SigmoidGrad returns v·(σ(x)·σ(−x)) elementwise with broadcasting: the
// sigmoid's derivative σ'(x) = σ(x)·σ(−x) applied to v. Both factors come
// from one exponential e^−|x|, so it is exact where 1 − σ(x) would round
// to 0, and equal bit for bit to Sigmoid(x)·Sigmoid(−x) times v, in one
// pass without temporaries.
func SigmoidGrad(v, x *Tensor) *Tensor { return sigmoidGradOp.apply(nil, v, x) }

// SigmoidGradTo stores SigmoidGrad(v, x) in dst (nil allocates) and
// returns it.
func SigmoidGradTo(dst, v, x *Tensor) *Tensor { return sigmoidGradOp.apply(dst, v, x) }

// TanhGrad returns v·(1 − y²) elementwise with broadcasting: given the
// output y = tanh(x), the tanh's derivative applied to v.
func TanhGrad(v, y *Tensor) *Tensor { return tanhGradOp.apply(nil, v, y) }

// TanhGradTo stores TanhGrad(v, y) in dst (nil allocates) and returns it.
func TanhGradTo(dst, v, y *Tensor) *Tensor { return tanhGradOp.apply(dst, v, y) }

// sigmoidPair32 returns σ(x) and σ(−x) from e = e^−|x| exactly as
// sigmoidRun32 computes each: the numerator is 1 for an argument without
// its sign bit set and e otherwise.
func sigmoidPair32(x, e float32) (pos, neg float32) {
	m := uint32(int32(math.Float32bits(x)) >> 31) // all ones when x has its sign bit set
	one, eb := math.Float32bits(1), math.Float32bits(e)
	den := 1 + e
	pos = math.Float32frombits(eb&m|one&^m) / den
	neg = math.Float32frombits(one&m|eb&^m) / den
	return pos, neg
}

func sigmoidPair64(x, e float64) (pos, neg float64) {
	m := uint64(int64(math.Float64bits(x)) >> 63)
	one, eb := math.Float64bits(1), math.Float64bits(e)
	den := 1 + e
	pos = math.Float64frombits(eb&m|one&^m) / den
	neg = math.Float64frombits(one&m|eb&^m) / den
	return pos, neg
}

func sigmoidGrad32(v, x float32) float32 {
	p, n := sigmoidPair32(x, exp32(-math32.Abs(x)))
	return v * (p * n)
}

func sigmoidGrad64(v, x float64) float64 {
	p, n := sigmoidPair64(x, math.Exp(-math.Abs(x)))
	return v * (p * n)
}

func sigmoidGradRun32(d, v, x []float32) {
	v, x = v[:len(d)], x[:len(d)]
	// Vector blocks, and the scalar code where they stop (|x| > 87, NaN).
	for len(d) >= 8 {
		k := sigmoidGradBlocks(d, v, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			sigmoidGradScalar32(d[:8], v[:8], x[:8])
		}
		d, v, x = d[k:], v[k:], x[k:]
	}
	sigmoidGradScalar32(d, v, x)
}

// sigmoidGradScalar32 is the scalar form of sigmoidGradRun32.
func sigmoidGradScalar32(d, v, x []float32) {
	v, x = v[:len(d)], x[:len(d)]
	for i := range d {
		xi := x[i]
		var e float32
		if a := math32.Abs(xi); a <= 87 {
			e = exp32Core(-a)
		} else {
			e = exp32(-a)
		}
		p, n := sigmoidPair32(xi, e)
		d[i] = v[i] * (p * n)
	}
}

func sigmoidGradRun64(d, v, x []float64) {
	v, x = v[:len(d)], x[:len(d)]
	for i := range d {
		p, n := sigmoidPair64(x[i], math.Exp(-math.Abs(x[i])))
		d[i] = v[i] * (p * n)
	}
}

// tanhGrad rounds y² before subtracting (the conversion forbids fusing it
// into an FMA) so it matches v·(−y² + 1) computed op by op.
func tanhGrad[T Float](v, y T) T { return v * (1 - T(y*y)) }

func tanhGradRun[T Float](d, v, y []T) {
	v, y = v[:len(d)], y[:len(d)]
	if d32, ok := any(d).([]float32); ok {
		k := tanhGradBlocks(d32, any(v).([]float32), any(y).([]float32))
		d, v, y = d[k:], v[k:], y[k:]
	}
	for i := range d {
		d[i] = v[i] * (1 - T(y[i]*y[i]))
	}
}

// reluGradOp fuses the ReLU cotangent v·sign(y) into one pass, so the
// backward pass of a ReLU neither materialises sign(y) nor reads memory
// twice. The sign is chosen in integer registers, which the compiler turns
// into conditional moves: on activations whose signs are random a branch
// would be mispredicted half of the time.
var reluGradOp = &binaryOp{name: "ReluGrad",
	f32: binaryKernel[float32]{elem: reluGrad32, run: reluGradRun32},
	f64: binaryKernel[float64]{elem: reluGrad64, run: reluGradRun64},
}

// ReluGrad returns v·sign(y) elementwise with broadcasting: given the output
// y = relu(x) (so y ≥ 0) it is the ReLU's vector-Jacobian product, v where
// y > 0 and v·0 elsewhere. NaNs in y propagate, as sign(y) does.
func ReluGrad(v, y *Tensor) *Tensor { return reluGradOp.apply(nil, v, y) }

// ReluGradTo stores ReluGrad(v, y) in dst (nil allocates) and returns it.
func ReluGradTo(dst, v, y *Tensor) *Tensor { return reluGradOp.apply(dst, v, y) }

const (
	one32Bits    = 0x3f800000
	negOne32Bits = 0xbf800000
	one64Bits    = 0x3ff0000000000000
	negOne64Bits = 0xbff0000000000000
)

func reluGrad32(v, y float32) float32 {
	s := math.Float32bits(y) // ±0 and NaN are their own sign
	if y > 0 {
		s = one32Bits
	}
	if y < 0 {
		s = negOne32Bits
	}
	return v * math.Float32frombits(s)
}

func reluGrad64(v, y float64) float64 {
	s := math.Float64bits(y)
	if y > 0 {
		s = one64Bits
	}
	if y < 0 {
		s = negOne64Bits
	}
	return v * math.Float64frombits(s)
}

func reluGradRun32(d, v, y []float32) {
	v, y = v[:len(d)], y[:len(d)]
	for i := reluGradBlocks(d, v, y); i < len(d); i++ {
		d[i] = reluGrad32(v[i], y[i])
	}
}

func reluGradRun64(d, v, y []float64) {
	v, y = v[:len(d)], y[:len(d)]
	for i := reluGradBlocks(d, v, y); i < len(d); i++ {
		d[i] = reluGrad64(v[i], y[i])
	}
}

// geluGradOp fuses the GELU's derivative rule v·(Φ(x) + x·φ(x)) into one
// pass: composed of erf, exp and six arithmetic ops it read and wrote the
// feed-forward activations of a transformer eleven times. The run kernels
// are what binaryApplyPar splits over goroutines.
var geluGradOp = &binaryOp{name: "GeluGrad",
	f32: binaryKernel[float32]{elem: geluGrad32, run: geluGradRun32},
	f64: binaryKernel[float64]{elem: geluGrad64, run: geluGradRun64},
}

func geluGradRun32(d, v, x []float32) {
	v, x = v[:len(d)], x[:len(d)]
	for len(d) >= 8 {
		k := geluGradBlocks(d, v, x)
		if k == 0 {
			if !hasSIMD {
				break
			}
			k = 8
			geluGradScalar32(d[:8], v[:8], x[:8])
		}
		d, v, x = d[k:], v[k:], x[k:]
	}
	geluGradScalar32(d, v, x)
}

// geluGradScalar32 is the scalar form of geluGradRun32.
func geluGradScalar32(d, v, x []float32) {
	v, x = v[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = geluGrad32(v[i], x[i])
	}
}

func geluGradRun64(d, v, x []float64) {
	v, x = v[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = v[i] * geluDeriv64(x[i])
	}
}

// GeluGrad returns v·(Φ(x) + x·φ(x)) elementwise with broadcasting, Φ and
// φ the standard normal CDF and density: the exact GELU's derivative at x
// applied to v. Φ is computed as erfc(−x/√2)/2, accurate in the left tail.
func GeluGrad(v, x *Tensor) *Tensor { return geluGradOp.apply(nil, v, x) }

// GeluGradTo stores GeluGrad(v, x) in dst (nil allocates) and returns it.
func GeluGradTo(dst, v, x *Tensor) *Tensor { return geluGradOp.apply(dst, v, x) }

// geluDeriv64 is Φ(x) + x·φ(x) to within rounding.
func geluDeriv64(x float64) float64 {
	const invSqrt2Pi = 0.3989422804014327 // 1/√(2π)
	if math.IsInf(x, 0) {
		if x > 0 {
			return 1
		}
		return 0
	}
	return 0.5*math.Erfc(-x*(1/math.Sqrt2)) + x*invSqrt2Pi*math.Exp(-0.5*x*x)
}

// geluGrad32 is v·(Φ(x) + x·φ(x)) in float32 arithmetic: φ from exp32Core,
// Φ from twoPhi32 (as gelu32, one more exp32Core), so the derivative is
// within about 1e−6 relative, a gradient's accuracy, at a fraction of
// math.Erfc's cost. For |x| ≤ 12 it is the arithmetic of the vector
// kernel geluGradAVX2, in the same order.
func geluGrad32(v, x float32) float32 {
	const invSqrt2Pi = 0.3989422804014327
	if x != x {
		return x
	}
	if x > 12 {
		return v
	}
	if x < -14 { // Φ(x) + x·φ(x) < 1e−40: zero in float32
		return 0 * v
	}
	h := float32(float32(-0.5*x) * x) // −x²/2 = −z² for z = x/√2
	phi := float32(float32(x*invSqrt2Pi) * exp32Core(h))
	return v * (float32(0.5*twoPhi32(x, h)) + phi)
}

func geluGrad64(v, x float64) float64 { return v * geluDeriv64(x) }

// leakyReluGradOp returns the fused leaky-ReLU derivative rule for one
// slope: v where x > 0 and v·slope elsewhere, in one pass instead of the
// composite Where(Greater(x, 0), v, MulScalar(v, slope)), which built a
// zero constant, a mask, a scaled copy and the selection (a tenth of a
// DCGAN training step). It computes exactly what the composite does.
func leakyReluGradOp(slope float64) *binaryOp {
	s32, s64 := float32(slope), slope
	return &binaryOp{name: "LeakyReluGrad", param: slope,
		f32: binaryKernel[float32]{
			elem: func(v, x float32) float32 { return leakyReluGrad(v, x, s32) },
			run:  func(d, v, x []float32) { leakyReluGradRun(d, v, x, s32) }},
		f64: binaryKernel[float64]{
			elem: func(v, x float64) float64 { return leakyReluGrad(v, x, s64) },
			run:  func(d, v, x []float64) { leakyReluGradRun(d, v, x, s64) }},
	}
}

func leakyReluGrad[T Float](v, x, slope T) T {
	if x > 0 {
		return v
	}
	return v * slope
}

// leakyReluGradRun multiplies by a factor, 1 or the slope, chosen in
// integer registers (conditional moves: a float select would branch, and
// on random signs mispredict half of the time); v·1 = v exactly.
func leakyReluGradRun[T Float](d, v, x []T, slope T) {
	switch d := any(d).(type) {
	case []float32:
		leakyFactorRun(d, any(v).([]float32), any(x).([]float32), math.Float32bits(float32(slope)), one32Bits, math.Float32frombits)
	case []float64:
		leakyFactorRun(d, any(v).([]float64), any(x).([]float64), math.Float64bits(float64(slope)), one64Bits, math.Float64frombits)
	}
}

// leakyFactorRun sets d[i] = v[i]·(1 if x[i] > 0 else slope), the factors
// given by their bits.
func leakyFactorRun[T Float, B uint32 | uint64](d, v, x []T, slope, one B, frombits func(B) T) {
	v, x = v[:len(d)], x[:len(d)]
	for i := leakyBlocks(d, v, x, frombits(slope)); i < len(d); i++ {
		f := slope
		if x[i] > 0 {
			f = one
		}
		d[i] = v[i] * frombits(f)
	}
}

// LeakyReluGrad returns v where x > 0 and v·slope elsewhere, elementwise
// with broadcasting: the vector-Jacobian (and Jacobian-vector) product of
// LeakyRelu(·, slope) at x with v (a NaN x takes the slope branch).
func LeakyReluGrad(v, x *Tensor, slope float64) *Tensor {
	return leakyReluGradOp(slope).apply(nil, v, x)
}

// LeakyReluGradTo stores LeakyReluGrad(v, x, slope) in dst (nil allocates)
// and returns it.
func LeakyReluGradTo(dst, v, x *Tensor, slope float64) *Tensor {
	return leakyReluGradOp(slope).apply(dst, v, x)
}
