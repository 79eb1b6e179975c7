package graph

// prodGrad returns ∂(Π x over axes)/∂xᵢ = Π_{j≠i} xⱼ, shaped like x,
// without dividing by xᵢ, so it is exact where x has zeros (PyTorch and
// JAX give the same values). With Z the zeros of one reduced group, xs = x
// with its zeros replaced by 1 and p = Π xs:
//
//	|Z| = 0: gᵢ = p/xᵢ
//	|Z| = 1: gᵢ = p at the zero, and (p/xᵢ)·s elsewhere
//	|Z| = 2: gᵢ = p·(s − xᵢ) at the two zeros, and 0 elsewhere
//	|Z| ≥ 3: gᵢ = 0
//
// where s = Σ_{j∈Z} xⱼ. The factors s and s − xᵢ are 0 in value, but
// they carry the derivative of the zero factors Π_{j∈Z, j≠i} xⱼ, so the
// result differentiates to the exact Hessian too (for example [[0 3 2]
// [3 0 0] [2 0 0]] at x = [0 2 3]); it is built from graph ops only.
func prodGrad(x *Node, axes []int) *Node {
	zero, one := constLike(x, 0), constLike(x, 1)
	z := Equal(x, zero)
	nz := Sum(z, axes, true)
	xs := Where(z, one, x)
	q := Div(Prod(xs, axes, true), xs) // Π over the non-zero xⱼ, j ≠ i
	s := Sum(Where(z, x, zero), axes, true)
	nz0 := Equal(nz, zero)
	nz1 := Equal(nz, one)
	nz2 := Equal(nz, constLike(x, 2))
	atZero := Where(nz1, one, Where(nz2, Sub(s, x), zero))
	elsewhere := Where(nz0, one, Where(nz1, s, zero))
	return Mul(q, Where(z, atZero, elsewhere))
}
