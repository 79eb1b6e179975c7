package tensor

import (
	"math"

	"github.com/chewxy/math32"
)

// Fused derivative kernels for the saturating activations. Each computes,
// in one pass and in the same floating-point operations, what a derivative
// rule made of several ops and temporaries computes, so results are
// bit-identical to the unfused rule.

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
	for i := range d {
		d[i] = v[i] * (1 - T(y[i]*y[i]))
	}
}
