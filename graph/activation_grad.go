package graph

import "github.com/gradus-ml/gradus/tensor"

// Fused derivative rules of the saturating activations. Sigmoid's VJP
// would otherwise be Mul(v, Mul(y, Sigmoid(Neg(x)))) and Tanh's
// Mul(v, AddScalar(Neg(Square(y)), 1)), four elementwise ops with a
// temporary each; these compute the same values, bit for bit, in one pass
// (on 32×512 float32: 17 µs against 33 µs for sigmoid, 7 µs against 27 µs
// for tanh).

func init() {
	Register(sigmoidGradOp{})
	Register(tanhGradOp{})
}

// sigmoidGradOp is v·σ(x)·σ(−x) (tensor.SigmoidGrad).
type sigmoidGradOp struct{}

func (sigmoidGradOp) Name() string { return "sigmoid_grad" }

func (sigmoidGradOp) Arity() int { return 2 }

func (sigmoidGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.SigmoidGradTo(g.AllocUninit(in[0].DType(), broadcastShape("sigmoid_grad", in[0], in[1])...), in[0], in[1])
}

// sigmoidCurv returns w·s'(x) for s = σ(x)·σ(−x): s' = s·(σ(−x) − σ(x)).
func sigmoidCurv(w, x *Node) *Node {
	return Mul(SigmoidGrad(w, x), Sub(Sigmoid(Neg(x)), Sigmoid(x)))
}

func (sigmoidGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	v, x := out.inputs[0], out.inputs[1]
	var dv, dx *Node
	if needs[0] {
		dv = SumTo(SigmoidGrad(ct, x), v.Shape()...)
	}
	if needs[1] {
		dx = SumTo(sigmoidCurv(Mul(ct, v), x), x.Shape()...)
	}
	return cotangents(out, dv, dx)
}

func (sigmoidGradOp) JVP(out *Node, t []*Node) *Node {
	v, x := out.inputs[0], out.inputs[1]
	var tv, tx *Node
	if t[0] != nil {
		tv = SigmoidGrad(t[0], x)
	}
	if t[1] != nil {
		tx = sigmoidCurv(Mul(v, t[1]), x)
	}
	return addTangents(out, tv, tx)
}

// SigmoidGrad returns v·σ(x)·σ(−x) with broadcasting: the vector-Jacobian
// (and Jacobian-vector) product of Sigmoid at x with v.
func SigmoidGrad(v, x *Node) *Node {
	checkBinary("sigmoid_grad", v, x)
	return Apply(sigmoidGradOp{}, v, x)
}

// tanhGradOp is v·(1 − y²) (tensor.TanhGrad).
type tanhGradOp struct{}

func (tanhGradOp) Name() string { return "tanh_grad" }

func (tanhGradOp) Arity() int { return 2 }

func (tanhGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.TanhGradTo(g.AllocUninit(in[0].DType(), broadcastShape("tanh_grad", in[0], in[1])...), in[0], in[1])
}

func (tanhGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	v, y := out.inputs[0], out.inputs[1]
	var dv, dy *Node
	if needs[0] {
		dv = SumTo(TanhGrad(ct, y), v.Shape()...)
	}
	if needs[1] {
		dy = SumTo(Mul(Mul(ct, v), MulScalar(y, -2)), y.Shape()...)
	}
	return cotangents(out, dv, dy)
}

func (tanhGradOp) JVP(out *Node, t []*Node) *Node {
	v, y := out.inputs[0], out.inputs[1]
	var tv, ty *Node
	if t[0] != nil {
		tv = TanhGrad(t[0], y)
	}
	if t[1] != nil {
		ty = Mul(Mul(v, t[1]), MulScalar(y, -2))
	}
	return addTangents(out, tv, ty)
}

// TanhGrad returns v·(1 − y²) with broadcasting: for y = Tanh(x), the
// vector-Jacobian (and Jacobian-vector) product of Tanh with v.
func TanhGrad(v, y *Node) *Node {
	checkBinary("tanh_grad", v, y)
	return Apply(tanhGradOp{}, v, y)
}
