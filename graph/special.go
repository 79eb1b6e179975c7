package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// Polygamma is the op behind the derivatives of Digamma. Making the order a
// parameter closes the chain: d/dx ψ⁽ⁿ⁾ = ψ⁽ⁿ⁺¹⁾, so Lgamma and Digamma can
// be differentiated to any order. tensor.Polygamma is the kernel.

func init() { Register(polygammaOp{}) }

type polygammaOp struct{ n int }

func (polygammaOp) Name() string { return "polygamma" }

func (polygammaOp) Arity() int { return 1 }

func (o polygammaOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.PolygammaTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), o.n, in[0])
}

func (o polygammaOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Mul(ct, Polygamma(o.n+1, out.inputs[0])))
}

func (o polygammaOp) JVP(out *Node, t []*Node) *Node {
	return Mul(t[0], Polygamma(o.n+1, out.inputs[0]))
}

func (o polygammaOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Polygamma returns ψ⁽ⁿ⁾(x), the n-th derivative of the digamma function
// (n = 1 is the trigamma function); n = 0 is Digamma. It is accurate for
// x > 0 and uses the recurrence for negative non-integers (slowly for very
// negative x); it is +Inf or NaN at the poles 0, −1, −2, …. It panics for
// n < 0.
func Polygamma(n int, x *Node) *Node {
	switch {
	case n < 0:
		tensor.Fail("polygamma", "negative order %d (operand %s)", n, Describe(x))
	case n == 0:
		return Digamma(x)
	}
	return Apply(polygammaOp{n}, x)
}
