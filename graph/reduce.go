package graph

import (
	"slices"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// Reductions take (x, axes, keepdims) like package tensor: nil or empty
// axes reduce over every axis, negative axes count from the end. The rules
// first restore the reduced axes as size 1 ("unreduce") and then rely on
// broadcasting.

type reduceKind uint8

const (
	redSum reduceKind = iota
	redMean
	redMax
	redMin
	redProd
	redLSE
	redVar
)

var reduceNames = [...]string{"sum", "mean", "max", "min", "prod", "logsumexp", "variance"}

func init() {
	for kind := range reduceNames {
		Register(&reduceOp{kind: reduceKind(kind)})
	}
	Register(softmaxOp{})
	Register(softmaxOp{log: true})
	Register(softmaxGradOp{})
}

type reduceOp struct {
	kind reduceKind
	axes []int // normalised: sorted, distinct, non-negative
	keep bool
	ddof int // variance only
	n    int // number of elements reduced into each output
}

func (o *reduceOp) Name() string { return reduceNames[o.kind] }

func (*reduceOp) Arity() int { return 1 }

// Forward reduces with tensor's kernel for the same kind (the two packages
// list the kinds in one order) without checking again.
func (o *reduceOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	dst := g.AllocUninit(x.DType(), reducedShape(g.AllocInts(x.Dim())[:0], x.Shape(), o.axes, o.keep)...)
	return kern.Reduce(int(o.kind), dst, x, o.axes, o.keep, o.ddof)
}

// check validates an op value re-applied with Apply: its axes must be in
// range and reduce as many elements as the operand it was built for.
func (o *reduceOp) check(in []*Node) {
	x := in[0]
	n := 1
	for _, a := range o.axes {
		if a >= x.Dim() {
			tensor.Fail(o.Name(), "axes %v out of range for operand %s", o.axes, Describe(x))
		}
		n *= x.Shape()[a]
	}
	if n != o.n {
		tensor.Fail(o.Name(), "op built to reduce %d elements per output, operand %s gives %d over axes %v", o.n, Describe(x), n, o.axes)
	}
}

// unreduce reshapes a reduced value v to the keepdims shape so that it
// broadcasts against the input.
func (o *reduceOp) unreduce(x, v *Node) *Node {
	if o.keep {
		return v
	}
	return Reshape(v, reducedShape(nil, x.Shape(), o.axes, true)...)
}

// weights returns w with ∂out/∂x = w (elementwise, before broadcasting of
// the output) for the kinds whose derivative is a weighting of x.
func (o *reduceOp) weights(out *Node) *Node {
	x := out.inputs[0]
	switch o.kind {
	case redMax, redMin:
		// Ties share the derivative evenly.
		mask := Equal(x, o.unreduce(x, out))
		return Div(mask, Sum(mask, o.axes, true))
	case redLSE:
		return Exp(Sub(x, o.unreduce(x, out)))
	case redVar:
		return MulScalar(Sub(x, Mean(x, o.axes, true)), 2/float64(o.n-o.ddof))
	}
	panic("unreachable")
}

func (o *reduceOp) VJP(out, ct *Node, needs []bool) []*Node {
	x := out.inputs[0]
	c := o.unreduce(x, ct)
	switch o.kind {
	case redSum:
		return cotangents(out, BroadcastTo(c, x.Shape()...))
	case redMean:
		return cotangents(out, BroadcastTo(MulScalar(c, 1/float64(o.n)), x.Shape()...))
	case redProd:
		// ∂Πx/∂xᵢ = Π_{j≠i} xⱼ, exact at zeros too (see prodGrad).
		return cotangents(out, Mul(c, prodGrad(x, o.axes)))
	}
	return cotangents(out, Mul(c, o.weights(out)))
}

func (o *reduceOp) JVP(out *Node, t []*Node) *Node {
	x := out.inputs[0]
	switch o.kind {
	case redSum:
		return Sum(t[0], o.axes, o.keep)
	case redMean:
		return Mean(t[0], o.axes, o.keep)
	case redProd:
		return Sum(Mul(t[0], prodGrad(x, o.axes)), o.axes, o.keep)
	}
	return Sum(Mul(t[0], o.weights(out)), o.axes, o.keep)
}

// The reduced axes shift past the batch axis, which moves left by the number of reduced axes before it.
func (o *reduceOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	ax := axes[0]
	shifted := make([]int, len(o.axes))
	out := ax
	for i, a := range o.axes {
		shifted[i] = shiftAxis(a, ax)
		if a < ax && !o.keep {
			out--
		}
	}
	return Apply(&reduceOp{o.kind, shifted, o.keep, o.ddof, o.n}, in[0]), out
}

func reduceNode(kind reduceKind, x *Node, axes []int, keepdims bool, ddof int) *Node {
	checkNodes(reduceNames[kind], x)
	ax := normAxes(reduceNames[kind], x, axes)
	n := 1
	for _, a := range ax {
		n *= x.Shape()[a]
	}
	if (kind == redMax || kind == redMin) && n == 0 {
		tensor.Fail(reduceNames[kind], "reduction over a size-0 axis of %s (axes %v)", Describe(x), axes)
	}
	return apply(&reduceOp{kind: kind, axes: ax, keep: keepdims, ddof: ddof, n: n}, x)
}

// Sum returns the sum of x over axes (nil: all); with keepdims the reduced
// axes stay with size 1. It panics if an axis is out of range or repeated.
func Sum(x *Node, axes []int, keepdims bool) *Node { return reduceNode(redSum, x, axes, keepdims, 0) }

// Mean returns the mean of x over axes (see Sum).
func Mean(x *Node, axes []int, keepdims bool) *Node { return reduceNode(redMean, x, axes, keepdims, 0) }

// Max returns the maximum of x over axes (see Sum). The derivative goes to
// the positions of the maximum, split evenly between ties.
func Max(x *Node, axes []int, keepdims bool) *Node { return reduceNode(redMax, x, axes, keepdims, 0) }

// Min returns the minimum of x over axes (see Sum), with Max's derivative
// convention.
func Min(x *Node, axes []int, keepdims bool) *Node { return reduceNode(redMin, x, axes, keepdims, 0) }

// Prod returns the product of x over axes (see Sum). Its derivative
// Π_{j≠i} xⱼ is computed without dividing by xᵢ, so it is exact where x has
// zeros (∂/∂x of Π[0 2 3] is [6 0 0]), and so are second derivatives.
func Prod(x *Node, axes []int, keepdims bool) *Node { return reduceNode(redProd, x, axes, keepdims, 0) }

// LogSumExp returns log Σ exp(x) over axes (see Sum), computed stably.
func LogSumExp(x *Node, axes []int, keepdims bool) *Node {
	return reduceNode(redLSE, x, axes, keepdims, 0)
}

// Variance returns Σ(x − mean)²/(n − ddof) over axes (see Sum), where n is
// the number of elements reduced.
func Variance(x *Node, axes []int, keepdims bool, ddof int) *Node {
	return reduceNode(redVar, x, axes, keepdims, ddof)
}

type softmaxOp struct {
	axis int
	log  bool
}

func (o softmaxOp) Name() string {
	if o.log {
		return "log_softmax"
	}
	return "softmax"
}

func (softmaxOp) Arity() int { return 1 }

func (o softmaxOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	dst := g.AllocUninit(in[0].DType(), in[0].Shape()...)
	if o.log {
		return kern.LogSoftmax(dst, in[0], o.axis)
	}
	return kern.Softmax(dst, in[0], o.axis)
}

func (o softmaxOp) check(in []*Node) {
	if o.axis >= in[0].Dim() {
		tensor.Fail(o.Name(), "axis %d out of range for operand %s", o.axis, Describe(in[0]))
	}
}

// The Jacobian is symmetric for softmax, s ⊙ (v − Σ v s) (SoftmaxGrad, one
// fused pass), and for log-softmax transposes to v − s·Σv (reverse) or
// v − Σ(s v) (forward), with s = softmax(x) recovered from the output.
func (o softmaxOp) VJP(out, ct *Node, needs []bool) []*Node {
	if o.log {
		return cotangents(out, Sub(ct, Mul(Exp(out), Sum(ct, []int{o.axis}, true))))
	}
	return cotangents(out, apply(softmaxGradOp{o.axis}, out, ct))
}

func (o softmaxOp) JVP(out *Node, t []*Node) *Node {
	if o.log {
		return Sub(t[0], Sum(Mul(Exp(out), t[0]), []int{o.axis}, true))
	}
	return apply(softmaxGradOp{o.axis}, out, t[0])
}

func (o softmaxOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return Apply(softmaxOp{shiftAxis(o.axis, axes[0]), o.log}, in[0]), axes[0]
}

// softmaxGradOp is y ⊙ (v − Σ v ⊙ y) along axis (tensor.SoftmaxGrad):
// softmax's Jacobian at the output y applied to v.
type softmaxGradOp struct{ axis int }

func (softmaxGradOp) Name() string { return "softmax_grad" }

func (softmaxGradOp) Arity() int { return 2 }

func (o softmaxGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.SoftmaxGrad(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], in[1], o.axis)
}

func (o softmaxGradOp) check(in []*Node) {
	y, v := in[0], in[1]
	if y.DType() != v.DType() || !slices.Equal(y.Shape(), v.Shape()) {
		tensor.Fail("softmax_grad", "operands must have one shape and dtype: %s", Describe(y, v))
	}
	if o.axis < 0 || o.axis >= y.Dim() {
		tensor.Fail("softmax_grad", "axis %d out of range for operand %s", o.axis, Describe(y))
	}
}

// With s = Σ v ⊙ y: ∂f/∂v is the symmetric Jacobian itself, and ∂f/∂y
// applied to u is u ⊙ (v − s) − y·Σ(v ⊙ u), transposed g ⊙ (v − s) − v·Σ(g ⊙ y).
func (o softmaxGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	y, v := out.inputs[0], out.inputs[1]
	ax := []int{o.axis}
	var dy, dv *Node
	if needs[0] {
		s := Sum(Mul(v, y), ax, true)
		dy = Sub(Mul(ct, Sub(v, s)), Mul(v, Sum(Mul(ct, y), ax, true)))
	}
	if needs[1] {
		dv = apply(softmaxGradOp{o.axis}, y, ct)
	}
	return cotangents(out, dy, dv)
}

func (o softmaxGradOp) JVP(out *Node, t []*Node) *Node {
	y, v := out.inputs[0], out.inputs[1]
	ax := []int{o.axis}
	var ty, tv *Node
	if t[0] != nil {
		s := Sum(Mul(v, y), ax, true)
		ty = Sub(Mul(t[0], Sub(v, s)), Mul(y, Sum(Mul(v, t[0]), ax, true)))
	}
	if t[1] != nil {
		tv = apply(softmaxGradOp{o.axis}, y, t[1])
	}
	return addTangents(out, ty, tv)
}

// y and v need one shape: a shared one is copied for every example.
func (o softmaxGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	if axes[0] == axes[1] {
		return Apply(softmaxGradOp{shiftAxis(o.axis, axes[0])}, in...), axes[0]
	}
	return Apply(softmaxGradOp{o.axis + 1}, b.toFront(in[0], axes[0]), b.toFront(in[1], axes[1])), 0
}

// SoftmaxGrad returns y ⊙ (v − Σ v ⊙ y) along axis: for y = Softmax(x,
// axis), the product of softmax's Jacobian at x with v (the Jacobian is
// symmetric, so this is both the VJP and the JVP). y and v must have one
// shape and dtype.
func SoftmaxGrad(y, v *Node, axis int) *Node {
	checkNodes("softmax_grad", y, v)
	op := softmaxGradOp{normAxis("softmax_grad", y, axis)}
	op.check([]*Node{y, v})
	return apply(op, y, v)
}

// Softmax returns exp(x)/Σexp(x) along axis, computed stably.
func Softmax(x *Node, axis int) *Node {
	checkNodes("softmax", x)
	return apply(softmaxOp{axis: normAxis("softmax", x, axis)}, x)
}

// LogSoftmax returns x − LogSumExp(x) along axis, computed stably.
func LogSoftmax(x *Node, axis int) *Node {
	checkNodes("log_softmax", x)
	return apply(softmaxOp{axis: normAxis("log_softmax", x, axis), log: true}, x)
}

// normAxis resolves a possibly negative axis of x, panicking for op when it
// is out of range.
func normAxis(op string, x *Node, axis int) int {
	a := axis
	if a < 0 {
		a += x.Dim()
	}
	if a < 0 || a >= x.Dim() {
		tensor.Fail(op, "axis %d out of range for operand %s", axis, Describe(x))
	}
	return a
}

// normAxes resolves axes of x (nil or empty: all) to a sorted list of
// distinct non-negative axes, panicking for op on a bad or repeated axis.
func normAxes(op string, x *Node, axes []int) []int {
	nd := x.Dim()
	if len(axes) == 0 {
		all := make([]int, nd)
		for i := range all {
			all[i] = i
		}
		return all
	}
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = normAxis(op, x, a)
	}
	sort.Ints(out)
	for i := 1; i < len(out); i++ {
		if out[i] == out[i-1] {
			tensor.Fail(op, "axis %d repeated in %v for operand %s", out[i], axes, Describe(x))
		}
	}
	return out
}

// reducedShape appends to out shape with the (normalised) axes removed,
// or set to 1 with keepdims.
func reducedShape(out, shape, axes []int, keepdims bool) []int {
	j := 0
	for i, d := range shape {
		if j < len(axes) && axes[j] == i {
			j++
			if keepdims {
				out = append(out, 1)
			}
			continue
		}
		out = append(out, d)
	}
	return out
}
