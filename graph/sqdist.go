package graph

import "github.com/gradus-ml/gradus/tensor"

func init() {
	Register(sqDistOp{})
}

// sqDistOp is R = pairwise squared distances between the rows of A (n, d)
// and B (m, d): Rᵢⱼ = Σₖ (Aᵢₖ − Bⱼₖ)², one pass instead of the product,
// two broadcast additions and the clamp of the ‖a‖² + ‖b‖² − 2a·b form.
type sqDistOp struct{}

func (sqDistOp) Name() string { return "sq_dist" }

func (sqDistOp) Arity() int { return 2 }

func (sqDistOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.SqDist(g.AllocUninit(in[0].DType(), in[0].Shape()[0], in[1].Shape()[0]), in[0], in[1])
}

func (sqDistOp) check(in []*Node) { checkSqDist(in[0], in[1]) }

func checkSqDist(a, b *Node) {
	if a.Dim() != 2 || b.Dim() != 2 || a.Shape()[1] != b.Shape()[1] || a.DType() != b.DType() {
		tensor.Fail("sq_dist", "need points (n, d) and (m, d) with the same d and dtype, got %s", Describe(a, b))
	}
}

// Ā = 2(diag(R̄·1)·A − R̄·B) and B̄ = 2(diag(R̄ᵀ·1)·B − R̄ᵀ·A).
func (sqDistOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	var abar, bbar *Node
	if needs[0] {
		abar = MulScalar(Sub(Mul(Sum(ct, []int{1}, true), a), MatMul(ct, b)), 2)
	}
	if needs[1] {
		bbar = MulScalar(Sub(Mul(Transpose(Sum(ct, []int{0}, true)), b), MatMulT(ct, a, true, false)), 2)
	}
	return cotangents(out, abar, bbar)
}

// Ṙᵢⱼ = 2 Σₖ (Aᵢₖ − Bⱼₖ)(Ȧᵢₖ − Ḃⱼₖ)
//
//	= 2(Aᵢ·Ȧᵢ − Ȧᵢ·Bⱼ) + 2(Bⱼ·Ḃⱼ − Aᵢ·Ḃⱼ).
func (sqDistOp) JVP(out *Node, t []*Node) *Node {
	a, b := out.inputs[0], out.inputs[1]
	var y *Node
	if t[0] != nil {
		y = Sub(Sum(Mul(a, t[0]), []int{1}, true), MatMulT(t[0], b, false, true))
	}
	if t[1] != nil {
		m := b.Shape()[0]
		yb := Sub(Reshape(Sum(Mul(b, t[1]), []int{1}, false), 1, m), MatMulT(a, t[1], false, true))
		if y == nil {
			y = yb
		} else {
			y = Add(y, yb)
		}
	}
	return MulScalar(y, 2)
}

// Points of one side batched are more points; both batched, the op has no batched kernel and loops.
func (o sqDistOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	a, b2 := in[0], in[1]
	switch {
	case axes[1] == NotBatched: // more points in a
		d := SqDist(b.foldN(a, axes[0]), b2)
		return Reshape(d, b.size, d.Shape()[0]/b.size, d.Shape()[1]), 0
	case axes[0] == NotBatched: // more points in b
		d := SqDist(a, b.foldN(b2, axes[1]))
		return Reshape(d, d.Shape()[0], b.size, d.Shape()[1]/b.size), 1
	}
	return BatchLoop(b, o, in, axes)
}

// SqDist returns the pairwise squared Euclidean distances between the rows
// of a (n, d) and b (m, d), shape (n, m): the distance matrix of kernel
// methods. Equal rows give exactly zero (with up to 32 features the
// differences are summed directly; see tensor.SqDist), and the result is
// never negative. Pass the same node twice for the distances within one
// set of points. It panics with a *tensor.Error when the shapes or dtypes
// do not fit.
func SqDist(a, b *Node) *Node {
	checkNodes("sq_dist", a, b)
	checkSqDist(a, b)
	return apply(sqDistOp{}, a, b)
}
