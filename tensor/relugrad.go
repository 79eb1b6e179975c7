package tensor

import "math"

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
