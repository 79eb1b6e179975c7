package graph

import "github.com/gradus-ml/gradus/tensor"

// xlogy is the worked example of the package doc's "Adding an op": one
// file, one type with Forward, VJP and JVP, one registration, and a
// gradient case in autodiff's cases_elementwise_test.go.

func init() { Register(xlogyOp{}) }

// xlogyOp is x·log y, 0 where x = 0.
type xlogyOp struct{}

func (xlogyOp) Name() string { return "xlogy" }

func (xlogyOp) Arity() int { return 2 }

func (xlogyOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Xlogy(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (xlogyOp) check(in []*Node) { checkBroadcast("xlogy", in[0], in[1]) }

// ∂/∂x = log y where x ≠ 0 and 0 where x = 0 (so that 0·log 0 stays flat
// in x, as in PyTorch): Xlogy(x ≠ 0, y). ∂/∂y = x/y.
func (xlogyOp) partials(out *Node) (dx, dy func(v *Node) *Node) {
	x, y := out.inputs[0], out.inputs[1]
	dx = func(v *Node) *Node { return Mul(v, Xlogy(NotEqual(x, constLike(x, 0)), y)) }
	dy = func(v *Node) *Node { return Mul(v, Div(x, y)) }
	return dx, dy
}

func (o xlogyOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, y := out.inputs[0], out.inputs[1]
	dx, dy := o.partials(out)
	var cx, cy *Node
	if needs[0] {
		cx = SumTo(dx(ct), x.Shape()...)
	}
	if needs[1] {
		cy = SumTo(dy(ct), y.Shape()...)
	}
	return cotangents(out, cx, cy)
}

func (o xlogyOp) JVP(out *Node, t []*Node) *Node {
	dx, dy := o.partials(out)
	var tx, ty *Node
	if t[0] != nil {
		tx = dx(t[0])
	}
	if t[1] != nil {
		ty = dy(t[1])
	}
	return addTangents(out, tx, ty)
}

func (o xlogyOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Xlogy returns x·log y elementwise with NumPy broadcasting, and 0 where
// x = 0 even if y = 0: the terms of entropies and KL divergences. Its
// derivative in x is log y where x ≠ 0 and 0 where x = 0.
func Xlogy(x, y *Node) *Node {
	checkBinary("xlogy", x, y)
	return apply(xlogyOp{}, x, y)
}
