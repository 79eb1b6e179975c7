package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Convolution and pooling. Each adjoint (the VJP of a convolution with
// respect to its input or its weight, the scatter of a max-pool gradient,
// the spreading of an average-pool gradient) is an op of its own, so that
// gradients of gradients are graphs too. Convolution is bilinear in (x, w)
// and every adjoint is bilinear or linear, so the rules close over the
// three conv ops: the derivative of each is built from the other two.

func init() {
	Register(conv2dOp{})
	Register(conv2dInputGradOp{})
	Register(conv2dWeightGradOp{})
	Register(&maxPool2DOp{})
	Register(maxPoolGradOp{})
	Register(maxPoolGatherOp{})
	Register(avgPool2DOp{})
	Register(avgPoolGradOp{})
}

// conv2dOp is y = conv(x, w) (cross-correlation, NCHW); yShape is the
// output shape the constructor worked out while checking the operands.
type conv2dOp struct {
	p      tensor.ConvParams
	yShape []int
}

func (conv2dOp) Name() string { return "conv2d" }

func (conv2dOp) Arity() int { return 2 }

func (op conv2dOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Conv2D(g.AllocUninit(in[0].DType(), op.yShape...), in[0], in[1], op.p)
}

func (op conv2dOp) check(in []*Node) {
	x, w := in[0], in[1]
	if y := checkConv("conv2d", x, w, x.Shape(), w.Shape(), op.p); !slices.Equal(y, op.yShape) {
		tensor.Fail("conv2d", "op built for output %s, operands %s give %s", tensor.FormatShape(op.yShape), Describe(x, w), tensor.FormatShape(y))
	}
}

func (op conv2dOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, w := out.inputs[0], out.inputs[1]
	var dx, dw *Node
	if needs[0] { // the first layer's input usually does not
		dx = Conv2DInputGrad(ct, w, x.Shape(), op.p)
	}
	if needs[1] {
		dw = Conv2DWeightGrad(x, ct, w.Shape(), op.p)
	}
	return cotangents(out, dx, dw)
}

// Bilinear: d conv(x, w) = conv(dx, w) + conv(x, dw).
func (op conv2dOp) JVP(out *Node, t []*Node) *Node {
	return bilinearJVP(out, t, func(x, w *Node) *Node { return Conv2D(x, w, op.p) })
}

// Conv2D returns the 2-D cross-correlation of x (N, C, H, W) with the
// filters w (O, C/groups, kh, kw), shaped (N, O, Ho, Wo), as deep-learning
// frameworks define convolution (see tensor.Conv2D and tensor.ConvParams).
// It panics with a *tensor.Error when the ranks, channels, groups or dtypes
// do not fit or the dilated kernel is larger than the padded input.
func Conv2D(x, w *Node, p tensor.ConvParams) *Node {
	checkNodes("conv2d", x, w)
	return apply(conv2dOp{p, checkConv("conv2d", x, w, x.Shape(), w.Shape(), p)}, x, w)
}

// conv2dInputGradOp is dx = convᵀ_w(dy), the adjoint of x ↦ conv(x, w). It
// is bilinear in (dy, w); xShape is stored because a strided convolution
// does not determine the input size from the output size.
type conv2dInputGradOp struct {
	xShape []int
	p      tensor.ConvParams
}

func (conv2dInputGradOp) Name() string { return "conv2d_input_grad" }

func (conv2dInputGradOp) Arity() int { return 2 }

func (op conv2dInputGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Conv2DInputGrad(g.AllocUninit(in[0].DType(), op.xShape...), in[0], in[1], op.xShape, op.p)
}

func (op conv2dInputGradOp) check(in []*Node) {
	checkConvAdjoint("conv2d_input_grad", in[0], in[1], op.xShape, in[1].Shape(), op.p)
}

// ⟨c, convᵀ_w(dy)⟩ = ⟨conv(c, w), dy⟩ = ⟨w, convᵀ_c-weights(c, dy)⟩.
func (op conv2dInputGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	dy, w := out.inputs[0], out.inputs[1]
	return []*Node{
		Conv2D(ct, w, op.p),
		Conv2DWeightGrad(ct, dy, w.Shape(), op.p),
	}
}

func (op conv2dInputGradOp) JVP(out *Node, t []*Node) *Node {
	return bilinearJVP(out, t, func(dy, w *Node) *Node { return Conv2DInputGrad(dy, w, op.xShape, op.p) })
}

// Conv2DInputGrad returns the gradient of Conv2D(x, w, p) with respect to
// an input x of shape xShape, given the output cotangent dy: the adjoint of
// x ↦ Conv2D(x, w, p) applied to dy. It is differentiable in dy and w. It
// panics with a *tensor.Error when dy is not shaped like that convolution's
// output or the shapes, channels or dtypes do not fit.
func Conv2DInputGrad(dy, w *Node, xShape []int, p tensor.ConvParams) *Node {
	checkNodes("conv2d_input_grad", dy, w)
	checkConvAdjoint("conv2d_input_grad", dy, w, xShape, w.Shape(), p)
	return apply(conv2dInputGradOp{slices.Clone(xShape), p}, dy, w)
}

// conv2dWeightGradOp is dw = Σ dy ⋆ x, the adjoint of w ↦ conv(x, w); it is
// bilinear in (x, dy).
type conv2dWeightGradOp struct {
	wShape []int
	p      tensor.ConvParams
}

func (conv2dWeightGradOp) Name() string { return "conv2d_weight_grad" }

func (conv2dWeightGradOp) Arity() int { return 2 }

func (op conv2dWeightGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Conv2DWeightGrad(g.AllocUninit(in[0].DType(), op.wShape...), in[0], in[1], op.wShape, op.p)
}

func (op conv2dWeightGradOp) check(in []*Node) {
	checkConvAdjoint("conv2d_weight_grad", in[1], in[0], in[0].Shape(), op.wShape, op.p)
}

// ⟨c, dw(x, dy)⟩ = ⟨conv(x, c), dy⟩ = ⟨x, convᵀ_c(dy)⟩.
func (op conv2dWeightGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, dy := out.inputs[0], out.inputs[1]
	return []*Node{
		Conv2DInputGrad(dy, ct, x.Shape(), op.p),
		Conv2D(x, ct, op.p),
	}
}

func (op conv2dWeightGradOp) JVP(out *Node, t []*Node) *Node {
	return bilinearJVP(out, t, func(x, dy *Node) *Node { return Conv2DWeightGrad(x, dy, op.wShape, op.p) })
}

// Conv2DWeightGrad returns the gradient of Conv2D(x, w, p) with respect to
// a weight w of shape wShape, given the input x and the output cotangent
// dy: the adjoint of w ↦ Conv2D(x, w, p) applied to dy. It is
// differentiable in x and dy. It panics with a *tensor.Error when dy is not
// shaped like that convolution's output or the shapes, channels or dtypes
// do not fit.
func Conv2DWeightGrad(x, dy *Node, wShape []int, p tensor.ConvParams) *Node {
	checkNodes("conv2d_weight_grad", x, dy)
	checkConvAdjoint("conv2d_weight_grad", dy, x, x.Shape(), wShape, p)
	return apply(conv2dWeightGradOp{slices.Clone(wShape), p}, x, dy)
}

// checkConv checks the operands of a convolution of an input shaped xShape
// with a weight shaped wShape; a and b are the nodes named in errors.
func checkConv(op string, a, b *Node, xShape, wShape []int, p tensor.ConvParams) []int {
	if a.DType() != b.DType() {
		tensor.Fail(op, "mixed dtypes: %s", Describe(a, b))
	}
	if len(xShape) != 4 || len(wShape) != 4 {
		tensor.Fail(op, "input %s and weight %s must be 4-D (N, C, H, W) and (O, C/groups, kh, kw): operands %s",
			tensor.FormatShape(xShape), tensor.FormatShape(wShape), Describe(a, b))
	}
	groups := max(p.Groups, 1)
	if wShape[1]*groups != xShape[1] || wShape[0]%groups != 0 {
		tensor.Fail(op, "input %s has %d channels but weight %s with groups %d expects %d in and a multiple of %d out: operands %s",
			tensor.FormatShape(xShape), xShape[1], tensor.FormatShape(wShape), groups, wShape[1]*groups, groups, Describe(a, b))
	}
	var shape []int
	func() {
		// Conv2DShape checks the remaining geometry; rename its errors.
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(*tensor.Error); ok {
					tensor.Fail(op, "%s: operands %s", e.Msg, Describe(a, b))
				}
				panic(r)
			}
		}()
		shape = tensor.Conv2DShape(xShape, wShape, p)
	}()
	return shape
}

// checkConvAdjoint also checks that dy is shaped like the convolution's
// output.
func checkConvAdjoint(op string, dy, other *Node, xShape, wShape []int, p tensor.ConvParams) {
	yShape := checkConv(op, dy, other, xShape, wShape, p)
	if !slices.Equal(dy.Shape(), yShape) {
		tensor.Fail(op, "output gradient %s does not match the output %s of input %s with weight %s",
			Describe(dy), tensor.FormatShape(yShape), tensor.FormatShape(xShape), tensor.FormatShape(wShape))
	}
}

// maxPool2DOp is max pooling. Forward records, for every output element,
// the flat index into x of the element it took; the rules are a scatter
// and a gather by that index, so x's derivative never looks at values again
// (the choice of maximum is locally constant).
type maxPool2DOp struct {
	p      tensor.PoolParams
	yShape []int // the output shape, worked out by the constructor's check
	argmax []int
}

func (*maxPool2DOp) Name() string { return "maxpool2d" }

func (*maxPool2DOp) Arity() int { return 1 }

func (op *maxPool2DOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	dst := g.AllocUninit(x.DType(), op.yShape...)
	y, argmax := kern.MaxPool2D(dst, g.AllocInts(dst.Size()), x, op.p)
	op.argmax = argmax
	return y
}

func (op *maxPool2DOp) check(in []*Node) { checkPoolOutput("maxpool2d", in[0], op.p, op.yShape) }

func (op *maxPool2DOp) VJP(out, ct *Node, needs []bool) []*Node {
	// The indices come from this op's Forward and ct has the output's
	// shape, so MaxPool2DGrad's check (a pass over every index) is skipped.
	return cotangents(out, apply(maxPoolGradOp{op.argmax, slices.Clone(out.inputs[0].Shape())}, ct))
}

func (op *maxPool2DOp) JVP(out *Node, t []*Node) *Node {
	return MaxPool2DGather(t[0], op.argmax, out.Shape())
}

// MaxPool2D returns the maximum of every pooling window of x (N, C, H, W),
// shaped (N, C, Ho, Wo) (see tensor.PoolParams). The gradient flows to the
// first maximum of each window. It panics with a *tensor.Error when x is
// not 4-D or the parameters are invalid.
func MaxPool2D(x *Node, p tensor.PoolParams) *Node {
	checkNodes("maxpool2d", x)
	return apply(&maxPool2DOp{p: p, yShape: checkPool("maxpool2d", x, x.Shape(), p)}, x)
}

// maxPoolGradOp scatters dy onto a zero tensor shaped xShape at the indices
// argmax; maxPoolGatherOp is its adjoint, reading x at those indices. Both
// are linear, so each one's VJP is the other and each one's JVP itself.
type maxPoolGradOp struct {
	argmax []int
	xShape []int
}

func (maxPoolGradOp) Name() string { return "maxpool2d_grad" }

func (maxPoolGradOp) Arity() int { return 1 }

func (op maxPoolGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.MaxPool2DGrad(g.AllocUninit(in[0].DType(), op.xShape...), in[0], op.argmax)
}

func (op maxPoolGradOp) check(in []*Node) {
	checkArgmax("maxpool2d_grad", in[0].Size(), op.argmax, op.xShape, in[0])
}

func (op maxPoolGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, MaxPool2DGather(ct, op.argmax, out.inputs[0].Shape()))
}

func (op maxPoolGradOp) JVP(out *Node, t []*Node) *Node {
	return Apply(op, t[0])
}

// MaxPool2DGrad returns the gradient of a max pooling with respect to its
// input of shape xShape, given the output cotangent dy and the argmax the
// pooling recorded (tensor.MaxPool2D's second result): each element of dy
// is added at the flat input index argmax gives for it. It is
// differentiable in dy. It panics with a *tensor.Error when argmax does not
// have one index per element of dy or an index is outside xShape.
func MaxPool2DGrad(dy *Node, argmax []int, xShape []int) *Node {
	checkNodes("maxpool2d_grad", dy)
	checkArgmax("maxpool2d_grad", dy.Size(), argmax, xShape, dy)
	return apply(maxPoolGradOp{argmax, slices.Clone(xShape)}, dy)
}

type maxPoolGatherOp struct {
	argmax []int
	yShape []int
}

func (maxPoolGatherOp) Name() string { return "maxpool2d_gather" }

func (maxPoolGatherOp) Arity() int { return 1 }

func (op maxPoolGatherOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0].Contiguous()
	y := g.AllocUninit(x.DType(), op.yShape...)
	if x.Device() != tensor.CPU { // the flat gather as IndexSelect on the flattened x
		kern.IndexSelect(kern.Reshape(y, []int{y.Size()}), kern.Reshape(x, []int{x.Size()}), 0, op.argmax)
		return y
	}
	if x.DType() == tensor.Float32 {
		gatherFlat(x.Float32s(), op.argmax, y.Float32s())
	} else {
		gatherFlat(x.Float64s(), op.argmax, y.Float64s())
	}
	return y
}

func (op maxPoolGatherOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, MaxPool2DGrad(ct, op.argmax, out.inputs[0].Shape()))
}

func (op maxPoolGatherOp) JVP(out *Node, t []*Node) *Node {
	return Apply(op, t[0])
}

// maxPoolGather returns x's elements at the flat indices argmax, shaped
// yShape: the forward derivative of a max pooling.
func MaxPool2DGather(x *Node, argmax []int, yShape []int) *Node {
	checkNodes("maxpool2d_gather", x)
	op := maxPoolGatherOp{argmax, slices.Clone(yShape)}
	op.check([]*Node{x})
	return apply(op, x)
}

// check: the gather reads x at every index, so each must lie within x.
func (op maxPoolGatherOp) check(in []*Node) {
	n := 1
	for _, d := range op.yShape {
		n *= d
	}
	checkArgmax("maxpool2d_gather", n, op.argmax, in[0].Shape(), in[0])
}

func gatherFlat[T float32 | float64](x []T, idx []int, y []T) {
	for i, j := range idx {
		y[i] = x[j]
	}
}

// checkArgmax checks that argmax has n indices, all inside xShape.
func checkArgmax(op string, n int, argmax, xShape []int, operand *Node) {
	if len(argmax) != n {
		tensor.Fail(op, "%d argmax indices for %d elements (operand %s, input shape %s)", len(argmax), n, Describe(operand), tensor.FormatShape(xShape))
	}
	size := 1
	for _, d := range xShape {
		size *= d
	}
	for _, a := range argmax {
		if a < 0 || a >= size {
			tensor.Fail(op, "argmax index %d out of range for input shape %s (operand %s)", a, tensor.FormatShape(xShape), Describe(operand))
		}
	}
}

// avgPool2DOp is average pooling, a linear map of x; avgPoolGradOp is its
// adjoint. Each one's VJP is the other and each one's JVP itself.
type avgPool2DOp struct {
	p      tensor.PoolParams
	yShape []int // the output shape, worked out by the constructor's check
}

func (avgPool2DOp) Name() string { return "avgpool2d" }

func (avgPool2DOp) Arity() int { return 1 }

func (op avgPool2DOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.AvgPool2D(g.AllocUninit(in[0].DType(), op.yShape...), in[0], op.p)
}

func (op avgPool2DOp) check(in []*Node) { checkPoolOutput("avgpool2d", in[0], op.p, op.yShape) }

func (op avgPool2DOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, AvgPool2DGrad(ct, out.inputs[0].Shape(), op.p))
}

func (op avgPool2DOp) JVP(out *Node, t []*Node) *Node { return Apply(op, t[0]) }

// AvgPool2D returns the mean of every pooling window of x (N, C, H, W),
// shaped (N, C, Ho, Wo); padding counts as zeros in the mean (see
// tensor.AvgPool2D). It panics with a *tensor.Error when x is not 4-D or
// the parameters are invalid.
func AvgPool2D(x *Node, p tensor.PoolParams) *Node {
	checkNodes("avgpool2d", x)
	return apply(avgPool2DOp{p, checkPool("avgpool2d", x, x.Shape(), p)}, x)
}

type avgPoolGradOp struct {
	xShape []int
	p      tensor.PoolParams
}

func (avgPoolGradOp) Name() string { return "avgpool2d_grad" }

func (avgPoolGradOp) Arity() int { return 1 }

func (op avgPoolGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.AvgPool2DGrad(g.AllocUninit(in[0].DType(), op.xShape...), in[0], op.xShape, op.p)
}

func (op avgPoolGradOp) check(in []*Node) { checkAvgPoolGrad(in[0], op.xShape, op.p) }

func (op avgPoolGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, AvgPool2D(ct, op.p))
}

func (op avgPoolGradOp) JVP(out *Node, t []*Node) *Node { return Apply(op, t[0]) }

// AvgPool2DGrad returns the gradient of AvgPool2D(x, p) with respect to an
// input x of shape xShape, given the output cotangent dy: each element of
// dy, divided by the window size, is added to every input element of its
// window. It is differentiable in dy. It panics with a *tensor.Error when
// dy is not shaped like that pooling's output.
func AvgPool2DGrad(dy *Node, xShape []int, p tensor.PoolParams) *Node {
	checkNodes("avgpool2d_grad", dy)
	checkAvgPoolGrad(dy, xShape, p)
	return apply(avgPoolGradOp{slices.Clone(xShape), p}, dy)
}

func checkAvgPoolGrad(dy *Node, xShape []int, p tensor.PoolParams) {
	if yShape := checkPool("avgpool2d_grad", dy, xShape, p); !slices.Equal(dy.Shape(), yShape) {
		tensor.Fail("avgpool2d_grad", "output gradient %s does not match the output %s of input %s",
			Describe(dy), tensor.FormatShape(yShape), tensor.FormatShape(xShape))
	}
}

// checkPoolOutput is the check of a pooling op value re-applied with Apply:
// x must fit p and give the output shape the op was built for.
func checkPoolOutput(op string, x *Node, p tensor.PoolParams, yShape []int) {
	if y := checkPool(op, x, x.Shape(), p); !slices.Equal(y, yShape) {
		tensor.Fail(op, "op built for output %s, operand %s gives %s", tensor.FormatShape(yShape), Describe(x), tensor.FormatShape(y))
	}
}

// checkPool checks a pooling of an input shaped xShape and returns the
// output shape; operand is named in errors.
func checkPool(op string, operand *Node, xShape []int, p tensor.PoolParams) (shape []int) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*tensor.Error); ok {
				tensor.Fail(op, "%s: operand %s", e.Msg, Describe(operand))
			}
			panic(r)
		}
	}()
	return tensor.Pool2DShape(xShape, p)
}
