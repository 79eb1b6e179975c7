package graph

import "slices"

// Attrs are the parameters an op holds besides its inputs (an axis, a
// permutation, a convolution's geometry), keyed by name. Exporters
// (nn/onnx) read them to translate a traced graph into another format, so
// the keys and value types are part of the op's contract; each op's Attrs
// method lists them. Values are copies: changing them changes no op.
type Attrs map[string]any

// Attributed is implemented by ops that hold parameters. An op whose
// behaviour is fixed by its name and inputs (add, exp, linear) has no
// Attrs method. User ops may implement it for exporters.
type Attributed interface {
	Attrs() Attrs
}

// OpAttrs returns op's parameters, or nil when it holds none.
func OpAttrs(op Op) Attrs {
	if a, ok := op.(Attributed); ok {
		return a.Attrs()
	}
	return nil
}

// Attrs returns "scalar" (float64), the number added.
func (o addScalarOp) Attrs() Attrs { return Attrs{"scalar": o.s} }

// Attrs returns "scalar" (float64), the factor.
func (o mulScalarOp) Attrs() Attrs { return Attrs{"scalar": o.s} }

// Attrs returns "exponent" (float64).
func (o powScalarOp) Attrs() Attrs { return Attrs{"exponent": o.p} }

// Attrs returns "slope" (float64), the slope for negative inputs.
func (o leakyReluOp) Attrs() Attrs { return Attrs{"slope": o.slope} }

// Attrs returns "alpha" (float64).
func (o eluOp) Attrs() Attrs { return Attrs{"alpha": o.alpha} }

// Attrs returns "lo" and "hi" (float64), the bounds.
func (o clampOp) Attrs() Attrs { return Attrs{"lo": o.lo, "hi": o.hi} }

// Attrs returns "dtype" (tensor.DType), the dtype cast to.
func (o castOp) Attrs() Attrs { return Attrs{"dtype": o.dt} }

// Attrs returns "axis" (int, non-negative).
func (o softmaxOp) Attrs() Attrs { return Attrs{"axis": o.axis} }

// Attrs returns "scale" (float64), the factor of q·kᵀ, and "causal"
// (bool). A fourth input, when present, is the additive mask.
func (o attentionOp) Attrs() Attrs { return Attrs{"scale": o.scale, "causal": o.causal} }

// Attrs returns the forward attention's "scale" and "causal".
func (o attentionGradOp) Attrs() Attrs { return o.fwd.Attrs() }

// Attrs returns "trans_a" and "trans_b" (bool): whether each operand's
// last two axes are swapped before the product.
func (o matmulOp) Attrs() Attrs { return Attrs{"trans_a": o.transA, "trans_b": o.transB} }

// Attrs returns "axes" ([]int, sorted, distinct, non-negative),
// "keepdims" (bool) and, for variance, "ddof" (int).
func (o *reduceOp) Attrs() Attrs {
	a := Attrs{"axes": slices.Clone(o.axes), "keepdims": o.keep}
	if reduceNames[o.kind] == "variance" {
		a["ddof"] = o.ddof
	}
	return a
}

// Attrs returns "shape" ([]int), the output's shape.
func (o reshapeOp) Attrs() Attrs { return Attrs{"shape": slices.Clone(o.shape)} }

// Attrs returns "perm" ([]int): output axis i is input axis perm[i].
func (o permuteOp) Attrs() Attrs { return Attrs{"perm": slices.Clone(o.perm)} }

// Attrs returns "shape" ([]int), the output's shape.
func (o broadcastToOp) Attrs() Attrs { return Attrs{"shape": slices.Clone(o.shape)} }

// Attrs returns "shape" ([]int), the output's shape.
func (o sumToOp) Attrs() Attrs { return Attrs{"shape": slices.Clone(o.shape)} }

// Attrs returns "axis" (int, non-negative), "start", "stop" and "step"
// (int) with Slice's Python semantics: negative positions count from the
// end, bounds are clamped, math.MaxInt and math.MinInt are open ends.
func (o sliceOp) Attrs() Attrs {
	return Attrs{"axis": o.axis, "start": o.start, "stop": o.stop, "step": o.step}
}

// Attrs returns "axis" (int, non-negative).
func (o concatOp) Attrs() Attrs { return Attrs{"axis": o.axis} }

// Attrs returns "pads" ([][2]int, before and after each axis) and "value"
// (float64), what the padding holds.
func (o padOp) Attrs() Attrs { return Attrs{"pads": slices.Clone(o.pads), "value": o.value} }

// Attrs returns "axis" (int) and "indices" ([]int), the positions taken
// along the axis.
func (o indexSelectOp) Attrs() Attrs { return Attrs{"axis": o.axis, "indices": slices.Clone(o.idx)} }

// Attrs returns "conv" (tensor.ConvParams, zero entries meaning their
// defaults).
func (o conv2dOp) Attrs() Attrs { return Attrs{"conv": o.p} }

// Attrs returns "conv" (tensor.ConvParams) and "input_shape" ([]int), the
// shape of the convolution's input, which this op (a transposed
// convolution) produces.
func (o conv2dInputGradOp) Attrs() Attrs {
	return Attrs{"conv": o.p, "input_shape": slices.Clone(o.xShape)}
}

// Attrs returns "pool" (tensor.PoolParams, a zero stride meaning the
// kernel size).
func (o *maxPool2DOp) Attrs() Attrs { return Attrs{"pool": o.p} }

// Attrs returns "pool" (tensor.PoolParams, a zero stride meaning the
// kernel size); padding counts as zeros in the mean.
func (o avgPool2DOp) Attrs() Attrs { return Attrs{"pool": o.p} }
