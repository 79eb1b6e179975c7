package graph

import "github.com/gradus-ml/gradus/tensor"

func init() {
	Register(choleskyGradOp{})
}

// choleskyGradOp is F(L, B) = ½ L⁻ᵀ S L⁻¹, S = T + Tᵀ − diag(T) with
// T = tril(Lᵀ B): the cotangent of A = L Lᵀ given the cotangent B of its
// factor L. F is symmetric and linear in B. The forward value runs the
// blocked factorisation backwards (tensor.CholeskyGrad); the rules below
// differentiate the formula, so they only run for higher derivatives.
type choleskyGradOp struct{}

func (choleskyGradOp) Name() string { return "cholesky_grad" }

func (choleskyGradOp) Arity() int { return 2 }

func (choleskyGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.CholeskyGradTo(g.AllocUninit(in[0].DType(), solveShape(in[0], in[1])...), in[0], in[1])
}

// With Hs = sym(H) for the cotangent H of F and G = L⁻¹ Hs L⁻ᵀ:
//
//	⟨Hs, ½ L⁻ᵀ dS L⁻¹⟩ = ⟨Φ(G), d(LᵀB)⟩  →  B̄ = L Φ(G),  L̄ ∋ tril(B Φ(G)ᵀ)
//	dF = −L⁻ᵀ dLᵀ F − F dL L⁻¹          →  L̄ ∋ −2 tril(F Hs L⁻ᵀ) = −2 tril(F L G)
//
// Only the lower triangles of L and B are read, so their cotangents are
// lower triangular (tril(B Φ(G)ᵀ) depends on B's lower triangle alone).
func (choleskyGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	l, b := out.inputs[0], out.inputs[1]
	hs := MulScalar(Add(ct, Transpose(ct)), 0.5)
	gm := TriSolve(l, Transpose(TriSolve(l, hs, true, false)), true, false)
	phi := PhiLower(gm)
	bbar := TriMatMul(l, phi, false)
	lg := TriMatMul(l, gm, false)
	lbar := Tril(Sub(MatMulT(b, phi, false, true), MulScalar(MatMul(out, lg), 2)))
	return cotangents(out, SumTo(lbar, l.Shape()...), SumTo(bbar, b.Shape()...))
}

// Ḟ = F(L, Ḃ) + ½ L⁻ᵀ Ṡ L⁻¹ − (P + Pᵀ), with Ṡ the symmetric matrix whose
// lower triangle is that of L̇ᵀB and P = L⁻ᵀ L̇ᵀ F (L̇ masked to its lower
// triangle).
func (op choleskyGradOp) JVP(out *Node, t []*Node) *Node {
	l, b := out.inputs[0], out.inputs[1]
	var y *Node
	if t[1] != nil {
		y = Apply(op, l, t[1])
	}
	if t[0] != nil {
		sdot := SymmetrizeLower(TriMatMulLower(t[0], b, true))
		half := MulScalar(TriSolve(l, Transpose(TriSolve(l, sdot, true, true)), true, true), 0.5)
		p := TriSolve(l, MatMulT(Tril(t[0]), out, true, false), true, true)
		yl := Sub(half, Add(p, Transpose(p)))
		if y == nil {
			y = yl
		} else {
			y = Add(y, yl)
		}
	}
	return y
}

// Linear-algebra ops act on the last two axes and broadcast the others.
func (o choleskyGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// CholeskyGrad returns Ā, the cotangent of the symmetric positive definite
// matrices A (..., n, n) given their lower Cholesky factors l = chol(A) and
// the cotangents lbar of those factors: the rule behind the derivative of
// Cholesky, exposed for custom ops built on a factorisation. Only the lower
// triangles of l and lbar are read; Ā is symmetric. Batch axes broadcast.
// It panics with a *tensor.Error when the shapes or dtypes do not fit.
func CholeskyGrad(l, lbar *Node) *Node {
	checkSolve("cholesky_grad", l, lbar)
	if lbar.Dim() < 2 || lbar.Shape()[lbar.Dim()-1] != lbar.Shape()[lbar.Dim()-2] {
		tensor.Fail("cholesky_grad", "need square cotangents: %s", Describe(l, lbar))
	}
	return Apply(choleskyGradOp{}, l, lbar)
}
