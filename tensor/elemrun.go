package tensor

// The elementwise kernels over contiguous runs, for graph's fused
// programs (internal/unchecked's Run32 and Run64): a fused program applies
// a chain of elementwise ops block by block, so intermediate values stay
// in cache, by calling the same run kernels the tensor-level ops split
// their work into. Every kernel maps element i of its operands to element
// i of dst alone, and vector kernels match the scalar code bit for bit, so
// any split of a tensor's elements gives the bits the whole-tensor op
// gives.

// elemUnary, elemBinary and elemParam name the ops by their fields in
// unchecked.Kernels.
var (
	elemUnary = map[string]*unaryOp{
		"Neg": negOp, "Exp": expOp, "Log": logOp, "Log1p": log1pOp, "Expm1": expm1Op,
		"Sqrt": sqrtOp, "Square": squareOp, "Reciprocal": reciprocalOp, "Abs": absOp, "Sign": signOp,
		"Sin": sinOp, "Cos": cosOp, "Erf": erfOp, "Lgamma": lgammaOp, "Digamma": digammaOp,
		"Tanh": tanhOp, "Sigmoid": sigmoidOp, "Softplus": softplusOp, "Relu": reluOp, "Gelu": geluOp,
	}
	elemBinary = map[string]*binaryOp{
		"Add": addOp, "Sub": subOp, "Mul": mulOp, "Div": divOp, "Pow": powOp,
		"Maximum": maximumOp, "Minimum": minimumOp, "Xlogy": xlogyOp,
		"Equal": equalOp, "NotEqual": notEqualOp, "Less": lessOp, "LessEqual": lessEqualOp,
		"Greater": greaterOp, "GreaterEqual": greaterEqualOp,
		"SigmoidGrad": sigmoidGradOp, "TanhGrad": tanhGradOp, "ReluGrad": reluGradOp, "GeluGrad": geluGradOp,
	}
	elemParam = map[string]*paramOp{
		"AddScalar": addScalarOp, "MulScalar": mulScalarOp, "PowScalar": powScalarOp,
		"LeakyRelu": leakyReluOp, "Elu": eluOp,
	}
)

// elemRun returns the run kernel of the elementwise op called name, with
// parameter p where the op takes one (the slope of LeakyReluGrad too),
// as func(dst, x, y) where unary ops ignore y; nil for an unknown name.
func elemRun[T Float](name string, p float64) func(d, x, y []T) {
	var z T
	_, f32 := any(z).(float32)
	if op, ok := elemUnary[name]; ok {
		k := pick[unaryKernel[T]](f32, op.f32, op.f64)
		if run := k.run; run != nil {
			return func(d, x, _ []T) { run(d, x) }
		}
		elem := k.elem
		return func(d, x, _ []T) {
			x = x[:len(d)]
			for i := range d {
				d[i] = elem(x[i])
			}
		}
	}
	op, ok := elemBinary[name]
	if name == "LeakyReluGrad" {
		op, ok = leakyReluGradOp(p), true
	}
	if ok {
		k := pick[binaryKernel[T]](f32, op.f32, op.f64)
		if k.run != nil {
			return k.run
		}
		elem := k.elem
		return func(d, x, y []T) {
			x, y = x[:len(d)], y[:len(d)]
			for i := range d {
				d[i] = elem(x[i], y[i])
			}
		}
	}
	if op, ok := elemParam[name]; ok {
		k := pick[paramKernel[T]](f32, op.f32, op.f64)
		s := T(p)
		if run := k.run; run != nil {
			return func(d, x, _ []T) { run(d, x, s, 0) }
		}
		elem := k.elem
		return func(d, x, _ []T) {
			x = x[:len(d)]
			for i := range d {
				d[i] = elem(x[i], s, 0)
			}
		}
	}
	return nil
}

// pick returns a32 when f32 is set, else a64, as K (the kernel type of
// the dtype the caller's T stands for).
func pick[K any](f32 bool, a32, a64 any) K {
	if f32 {
		return a32.(K)
	}
	return a64.(K)
}

// storage returns t's whole backing array, which its offset and strides
// index.
func storage32(t *Tensor) []float32 { return storage[float32](t) }
func storage64(t *Tensor) []float64 { return storage[float64](t) }
