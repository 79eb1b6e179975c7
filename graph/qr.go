package graph

import "github.com/gradus-ml/gradus/tensor"

// qrOp is the thin QR A = QR of A (..., m, n), m ≥ n. Its one output packs
// Q over R, shaped (..., m+n, n); QR slices it. The rules are those of
// PyTorch's and JAX's reduced QR (Walter and Lehmann 2018), with R⁻¹
// applied by triangular solves; they need R invertible (A of full rank).
type qrOp struct{ m int }

func init() { Register(qrOp{}) }

func (qrOp) Name() string { return "qr" }

func (qrOp) Arity() int { return 1 }

func (qrOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	q, r, err := tensor.QR(in[0])
	if err != nil {
		failData("qr", err)
	}
	nd := in[0].Dim()
	m, n := in[0].Shape()[nd-2], in[0].Shape()[nd-1]
	shape := append(append([]int{}, in[0].Shape()[:nd-2]...), m+n, n)
	out := g.AllocUninit(in[0].DType(), shape...)
	tensor.CopyInto(tensor.Slice(out, -2, 0, m, 1), q)
	tensor.CopyInto(tensor.Slice(out, -2, m, m+n, 1), r)
	return out
}

func unpackQR(p *Node, m int) (q, r *Node) {
	return Slice(p, -2, 0, m, 1), Slice(p, -2, m, p.Shape()[p.Dim()-2], 1)
}

// rightSolveR returns X with X·R = B (R upper triangular).
func rightSolveR(b, r *Node) *Node { return Transpose(TriSolve(r, Transpose(b), false, true)) }

// With M = R·R̄ᵀ − Q̄ᵀ·Q: Ā = (Q̄ + Q·copyltu(M))·R⁻ᵀ, copyltu(M) being the
// symmetric matrix with M's lower triangle (SymmetrizeLower).
func (o qrOp) VJP(out, ct *Node, needs []bool) []*Node {
	q, r := unpackQR(out, o.m)
	qb, rb := unpackQR(ct, o.m)
	mm := Sub(MatMulT(r, rb, false, true), MatMulT(qb, q, true, false))
	z := Add(qb, MatMul(q, SymmetrizeLower(mm)))
	// Y·Rᵀ = Z  ⇔  R·Yᵀ = Zᵀ.
	return cotangents(out, Transpose(TriSolve(r, Transpose(z), false, false)))
}

// With X = Ȧ·R⁻¹, C = QᵀX and Ω = tril(C, −1) − tril(C, −1)ᵀ:
// Q̇ = Q(Ω − C) + X, Ṙ = (C − Ω)·R.
func (o qrOp) JVP(out *Node, t []*Node) *Node {
	q, r := unpackQR(out, o.m)
	x := rightSolveR(t[0], r)
	c := MatMulT(q, x, true, false)
	low := Apply(triMaskOp{1, 0, 0}, c)
	omega := Sub(low, Transpose(low))
	qdot := Add(MatMul(q, Sub(omega, c)), x)
	rdot := MatMul(Sub(c, omega), r)
	return Concat(-2, qdot, rdot)
}

// The batch axes lead the packed output as they lead the input.
func (o qrOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// QR returns the thin QR factorisation of the matrices a (..., m, n),
// m ≥ n: q (..., m, n) with orthonormal columns and r (..., n, n) upper
// triangular with a positive diagonal. The derivatives need a of full
// rank. It panics with a *tensor.Error when a is not a matrix or is wider
// than tall, and with a *DataError for input that is not finite.
func QR(a *Node) (q, r *Node) {
	checkNodes("qr", a)
	if a.Dim() < 2 || a.Shape()[a.Dim()-2] < a.Shape()[a.Dim()-1] {
		tensor.Fail("qr", "operand %s must be a matrix with at least as many rows as columns", Describe(a))
	}
	m := a.Shape()[a.Dim()-2]
	return unpackQR(Apply(qrOp{m: m}, a), m)
}
