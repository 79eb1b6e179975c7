package graph

import "github.com/gradus-ml/gradus/tensor"

func init() { Register(reluGradOp{}) }

// reluGradOp is v·sign(y), the ReLU's derivative rule given its output y,
// fused into one kernel (tensor.ReluGrad) instead of Mul(v, Sign(y)). It is
// linear in v and locally constant in y.
type reluGradOp struct{}

func (reluGradOp) Name() string { return "relu_grad" }

func (reluGradOp) Arity() int { return 2 }

func (reluGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.ReluGradTo(g.AllocUninit(in[0].DType(), broadcastShape("relu_grad", in[0], in[1])...), in[0], in[1])
}

func (reluGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	v, y := out.inputs[0], out.inputs[1]
	if !needs[0] {
		return cotangents(out, nil, nil)
	}
	return cotangents(out, SumTo(ReluGrad(ct, y), v.Shape()...), nil)
}

func (reluGradOp) JVP(out *Node, t []*Node) *Node {
	if t[0] == nil {
		return nil
	}
	return BroadcastTo(ReluGrad(t[0], out.inputs[1]), out.Shape()...)
}

// ReluGrad returns v·sign(y) with broadcasting: for y = Relu(x), the
// vector-Jacobian (and Jacobian-vector) product of the ReLU with v. Its
// derivative with respect to y is zero.
func ReluGrad(v, y *Node) *Node {
	checkBinary("relu_grad", v, y)
	return Apply(reluGradOp{}, v, y)
}
