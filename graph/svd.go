package graph

import "github.com/gradus-ml/gradus/tensor"

// svdOp is the thin SVD A = U diag(s) Vᵀ of A (..., m, n), k = min(m, n).
// Its one output packs the three results, shaped (..., m+1+n, k): rows
// 0..m−1 hold U, row m holds s, rows m+1.. hold V; SVD slices them.
//
// The rules (Townsend 2016) use F_ij = 1/(s_j² − s_i²), infinite for
// repeated singular values; svdF sets it to 0 there as eighF does, which is
// exact for functions of s and for gauge-invariant functions of U and V.
// They also need 1/s, so A must have full rank k.
type svdOp struct{ m int }

func init() { Register(svdOp{}) }

func (svdOp) Name() string { return "svd" }

func (svdOp) Arity() int { return 1 }

func (o svdOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	u, s, v, err := tensor.SVD(in[0])
	if err != nil {
		failData("svd", err)
	}
	nd := in[0].Dim()
	m, n := in[0].Shape()[nd-2], in[0].Shape()[nd-1]
	k := min(m, n)
	shape := append(append([]int{}, in[0].Shape()[:nd-2]...), m+1+n, k)
	out := g.AllocUninit(in[0].DType(), shape...)
	tensor.CopyInto(tensor.Slice(out, -2, 0, m, 1), u)
	tensor.CopyInto(tensor.Slice(out, -2, m, m+1, 1), tensor.Unsqueeze(s, -2))
	tensor.CopyInto(tensor.Slice(out, -2, m+1, m+1+n, 1), v)
	return out
}

// unpackSVD splits the packed output into U, s and V.
func unpackSVD(p *Node, m int) (u, s, v *Node) {
	r := p.Shape()[p.Dim()-2]
	return Slice(p, -2, 0, m, 1), Squeeze(Slice(p, -2, m, m+1, 1), -2), Slice(p, -2, m+1, r, 1)
}

// svdF returns F_ij = 1/(s_j² − s_i²) off ties and 0 on them (the diagonal
// included), with eighF's tolerance on the squared values.
func svdF(s *Node) *Node { return eighF(Square(s)) }

// Ā = U[(F∘(UᵀŪ − ŪᵀU))S + diag(s̄) + S(F∘(VᵀV̄ − V̄ᵀV))]Vᵀ
//
//   - (I − UUᵀ)ŪS⁻¹Vᵀ + US⁻¹V̄ᵀ(I − VVᵀ).
func (o svdOp) VJP(out, ct *Node, needs []bool) []*Node {
	u, s, v := unpackSVD(out, o.m)
	ub, sb, vb := unpackSVD(ct, o.m)
	f := svdF(s)
	sRow := Unsqueeze(s, -2) // scales columns
	sCol := Unsqueeze(s, -1) // scales rows
	utub := MatMulT(u, ub, true, false)
	vtvb := MatMulT(v, vb, true, false)
	j := Add(Mul(Mul(f, Sub(utub, Transpose(utub))), sRow), diagEmbed(sb))
	j = Add(j, Mul(sCol, Mul(f, Sub(vtvb, Transpose(vtvb)))))
	abar := MatMul(MatMul(u, j), Transpose(v))
	inv := Reciprocal(sRow)
	// (I − UUᵀ)Ū S⁻¹ Vᵀ
	uPerp := Sub(ub, MatMul(u, utub))
	abar = Add(abar, MatMulT(Mul(uPerp, inv), v, false, true))
	// U S⁻¹ V̄ᵀ (I − VVᵀ)
	vPerp := Sub(vb, MatMul(v, vtvb))
	abar = Add(abar, MatMulT(Mul(u, inv), vPerp, false, true))
	return cotangents(out, abar)
}

// With P = UᵀȦV: ṡ = diag(P), U̇ = U(F∘(PS + SPᵀ)) + (I − UUᵀ)ȦVS⁻¹,
// V̇ = V(F∘(SP + PᵀS)) + (I − VVᵀ)ȦᵀUS⁻¹.
func (o svdOp) JVP(out *Node, t []*Node) *Node {
	u, s, v := unpackSVD(out, o.m)
	a := t[0]
	f := svdF(s)
	sRow, sCol := Unsqueeze(s, -2), Unsqueeze(s, -1)
	p := MatMul(MatMulT(u, a, true, false), v)
	pt := Transpose(p)
	inv := Reciprocal(sRow)
	av := MatMul(a, v)
	udot := Add(MatMul(u, Mul(f, Add(Mul(p, sRow), Mul(sCol, pt)))), Mul(Sub(av, MatMul(u, MatMulT(u, av, true, false))), inv))
	atu := MatMulT(a, u, true, false)
	vdot := Add(MatMul(v, Mul(f, Add(Mul(sCol, p), Mul(pt, sRow)))), Mul(Sub(atu, MatMul(v, MatMulT(v, atu, true, false))), inv))
	return Concat(-2, udot, Unsqueeze(diagPart(p), -2), vdot)
}

// The batch axes lead the packed output as they lead the input.
func (o svdOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// SVD returns the thin singular value decomposition of the matrices a
// (..., m, n): u (..., m, k), s (..., k) decreasing, v (..., n, k), k =
// min(m, n), with a = u·diag(s)·vᵀ and the sign convention of tensor.SVD.
// The derivatives assume full rank (every s > 0); those of s are exact even
// for repeated singular values, those of u and v only where s is distinct
// (or for functions invariant to the choice of basis). It panics with a
// *tensor.Error when a is not a matrix, and with a *DataError when the
// input is not finite.
func SVD(a *Node) (u, s, v *Node) {
	checkNodes("svd", a)
	if a.Dim() < 2 {
		tensor.Fail("svd", "operand %s is not a matrix (want rank >= 2)", Describe(a))
	}
	m := a.Shape()[a.Dim()-2]
	return unpackSVD(Apply(svdOp{m: m}, a), m)
}
