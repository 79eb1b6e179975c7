package graph

import "github.com/gradus-ml/gradus/tensor"

// Differentiable linear algebra. Matrices are the last two axes; leading
// axes are batch axes. The rules follow the literature (Murray 2016 for the
// Cholesky factor, Giles 2008 for the others) and are written with graph
// ops, solving with triangular or LU factors instead of forming inverses.

func init() {
	Register(triMaskOp{})
	Register(choleskyOp{})
	Register(triSolveOp{})
	Register(choleskySolveOp{})
	Register(solveOp{})
	Register(inverseOp{})
	Register(logAbsDetOp{})
	Register(detOp{})
	Register(eighOp{})
}

// triMaskOp multiplies the strictly lower triangle, the diagonal and the
// strictly upper triangle of the matrices in x by three constants. It is
// linear and self-adjoint, so both rules apply the same mask.
type triMaskOp struct{ lower, diag, upper float64 }

func (triMaskOp) Name() string { return "tri_mask" }

func (triMaskOp) Arity() int { return 1 }

func (op triMaskOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.TriMaskTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], op.lower, op.diag, op.upper)
}

func (op triMaskOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{Apply(op, ct)} }

func (op triMaskOp) JVP(out *Node, t []*Node) *Node { return Apply(op, t[0]) }

// Linear-algebra ops act on the last two axes and broadcast the others.
func (o triMaskOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

func triMask(name string, x *Node, lower, diag, upper float64) *Node {
	checkNodes(name, x)
	if x.Dim() < 2 {
		tensor.Fail(name, "operand %s is not a matrix (want rank >= 2)", Describe(x))
	}
	return Apply(triMaskOp{lower, diag, upper}, x)
}

// Tril returns the lower triangle (diagonal included) of the matrices in x
// (..., m, n), with zeros above the diagonal. It panics if x has rank < 2.
func Tril(x *Node) *Node { return triMask("Tril", x, 1, 1, 0) }

// Triu returns the upper triangle (diagonal included) of the matrices in x
// (..., m, n), with zeros below the diagonal. It panics if x has rank < 2.
func Triu(x *Node) *Node { return triMask("Triu", x, 0, 1, 1) }

// PhiLower returns the lower triangle of the matrices in x with the
// diagonal halved: the Φ of Murray's Cholesky derivative, for which
// Φ(S) + Φ(S)ᵀ = S when S is symmetric. It panics if x has rank < 2.
func PhiLower(x *Node) *Node { return triMask("PhiLower", x, 1, 0.5, 0) }

// sym returns (x + xᵀ)/2 over the last two axes.
func sym(x *Node) *Node { return MulScalar(Add(x, Transpose(x)), 0.5) }

// diagPart returns the diagonals (..., n) of the matrices x (..., n, n):
// every (n+1)-th element of each flattened matrix.
func diagPart(x *Node) *Node {
	s := x.Shape()
	n := s[len(s)-1]
	flat := Reshape(x, append(append([]int{}, s[:len(s)-2]...), n*n)...)
	return Slice(flat, -1, 0, n*n, n+1)
}

// diagEmbed returns the diagonal matrices (..., n, n) with diagonals v
// (..., n), the adjoint of diagPart.
func diagEmbed(v *Node) *Node {
	s := v.Shape()
	n := s[len(s)-1]
	batch := s[:len(s)-1]
	flat := ScatterSlice(v, append(append([]int{}, batch...), n*n), -1, 0, n*n, n+1)
	return Reshape(flat, append(append([]int{}, batch...), n, n)...)
}

// choleskyOp is the lower Cholesky factor L of A = L·Lᵀ. Only the lower
// triangle of A is read by the kernel, but the rules treat A as symmetric
// (they use sym(Ȧ) and return a symmetric Ā), as JAX and PyTorch do: the
// derivative is the one of A ↦ chol((A + Aᵀ)/2).
type choleskyOp struct{}

func (choleskyOp) Name() string { return "cholesky" }

func (choleskyOp) Arity() int { return 1 }

func (choleskyOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	l, err := tensor.CholeskyTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
	if err != nil {
		failData("cholesky", err)
	}
	return l
}

// Ā = ½ L⁻ᵀ S L⁻¹ with S the symmetric matrix whose lower triangle is that
// of Lᵀ L̄ (Murray 2016). The value is computed by running the blocked
// factorisation backwards (cholesky_grad), at about 2n³/3 flops against
// the formula's 2n³; the formula gives that op's own derivatives.
func (choleskyOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, CholeskyGrad(out, ct))
}

// L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ), with L⁻¹ Ȧ L⁻ᵀ = L⁻¹ (L⁻¹ Ȧ)ᵀ for symmetric Ȧ.
func (choleskyOp) JVP(out *Node, t []*Node) *Node {
	l := out
	y := TriSolve(l, sym(t[0]), true, false)
	z := TriSolve(l, Transpose(y), true, false)
	return TriMatMul(l, PhiLower(z), false)
}

func (o choleskyOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// Cholesky returns the lower Cholesky factor L of the symmetric positive
// definite matrices a (..., n, n), so that a = L·Lᵀ. Only the lower triangle
// of a is read; the derivatives are those of the symmetric part of a
// (both rules symmetrise). It panics with a *tensor.Error when a is not a
// stack of square matrices, and with a *DataError wrapping a
// *tensor.NotPositiveDefiniteError when a matrix is not positive definite;
// recover the latter with tensor.Recover and inspect it with errors.As.
func Cholesky(a *Node) *Node {
	checkSquare("cholesky", a)
	return Apply(choleskyOp{}, a)
}

// triSolveOp is X = op(A)⁻¹ B for triangular A; b is always a matrix here
// (the constructor turns a vector into a column).
type triSolveOp struct{ lower, trans bool }

func (triSolveOp) Name() string { return "trisolve" }

func (triSolveOp) Arity() int { return 2 }

func (op triSolveOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.TriSolveTo(g.AllocUninit(in[0].DType(), solveShape(in[0], in[1])...), in[0], in[1], op.lower, op.trans)
}

// triangle keeps the triangle of x that the kernel reads from A.
func (op triSolveOp) triangle(x *Node) *Node {
	if op.lower {
		return Tril(x)
	}
	return Triu(x)
}

// B̄ = op(A)⁻ᵀ X̄; Ā = −B̄Xᵀ (or −XB̄ᵀ when A enters transposed), restricted
// to A's triangle.
func (op triSolveOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	bbar := TriSolve(a, ct, op.lower, !op.trans)
	// The minus sign goes on whichever is smaller, B̄ or Ā (exact either
	// way): with few right-hand sides, such as a GP's one, B̄ is a vector
	// and Ā an n×n matrix.
	nbar := bbar
	if bbar.Size() < a.Size() {
		nbar = Neg(bbar)
	}
	var g *Node
	if op.trans {
		g = MatMulT(out, nbar, false, true)
	} else {
		g = MatMulT(nbar, out, false, true)
	}
	g = op.triangle(g)
	if nbar == bbar {
		g = Neg(g)
	}
	return []*Node{
		SumTo(g, a.Shape()...),
		SumTo(bbar, b.Shape()...),
	}
}

// Ẋ = op(A)⁻¹ (Ḃ − op(Ȧ) X).
func (op triSolveOp) JVP(out *Node, t []*Node) *Node {
	rhs := t[1]
	if t[0] != nil {
		dax := MatMulT(op.triangle(t[0]), out, op.trans, false)
		if rhs == nil {
			rhs = Neg(dax)
		} else {
			rhs = Sub(rhs, dax)
		}
	}
	return TriSolve(out.inputs[0], rhs, op.lower, op.trans)
}

func (o triSolveOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// TriSolve solves op(A)·X = B for X, where a (..., n, n) is lower or upper
// triangular as lower says and op(A) is A, or Aᵀ when trans is set. b is
// (..., n, k) or a vector (n,); batch axes broadcast. Only the selected
// triangle of a is read, and the gradient with respect to a is confined to
// it. A zero on the diagonal gives infinities or NaNs, not an error. It
// panics with a *tensor.Error when the shapes or dtypes do not fit.
func TriSolve(a, b *Node, lower, trans bool) *Node {
	checkSolve("trisolve", a, b)
	if b.Dim() == 1 {
		return Squeeze(Apply(triSolveOp{lower, trans}, a, Unsqueeze(b, -1)), -1)
	}
	return Apply(triSolveOp{lower, trans}, a, b)
}

// choleskySolveOp is X = (L Lᵀ)⁻¹ B given the lower Cholesky factor L.
type choleskySolveOp struct{}

func (choleskySolveOp) Name() string { return "cholesky_solve" }

func (choleskySolveOp) Arity() int { return 2 }

func (choleskySolveOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.CholeskySolveTo(g.AllocUninit(in[0].DType(), solveShape(in[0], in[1])...), in[0], in[1])
}

// With A = L Lᵀ: B̄ = A⁻¹ X̄, Ā = −B̄ Xᵀ, and since dA = dL Lᵀ + L dLᵀ,
// L̄ = tril((Ā + Āᵀ) L). The kernel reads only L's lower triangle, so the
// rules mask L wherever they multiply by it.
func (choleskySolveOp) VJP(out, ct *Node, needs []bool) []*Node {
	l, b := out.inputs[0], out.inputs[1]
	bbar := CholeskySolve(l, ct)
	abar := MatMulT(bbar, out, false, true)
	lbar := Neg(Tril(MatMul(Add(abar, Transpose(abar)), Tril(l))))
	return cotangents(out, SumTo(lbar, l.Shape()...), SumTo(bbar, b.Shape()...))
}

// Ẋ = A⁻¹ (Ḃ − Ȧ X) with Ȧ = M + Mᵀ, M = tril(L̇) Lᵀ.
func (choleskySolveOp) JVP(out *Node, t []*Node) *Node {
	l := out.inputs[0]
	rhs := t[1]
	if t[0] != nil {
		m := MatMulT(Tril(t[0]), Tril(l), false, true)
		dax := MatMul(Add(m, Transpose(m)), out)
		if rhs == nil {
			rhs = Neg(dax)
		} else {
			rhs = Sub(rhs, dax)
		}
	}
	return CholeskySolve(l, rhs)
}

func (o choleskySolveOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// CholeskySolve returns A⁻¹·B given the lower Cholesky factor l of A
// (A = L·Lᵀ, as Cholesky returns it); b is (..., n, k) or a vector (n,),
// and batch axes broadcast. Only the lower triangle of l is read. It panics
// with a *tensor.Error when the shapes or dtypes do not fit.
func CholeskySolve(l, b *Node) *Node {
	checkSolve("cholesky_solve", l, b)
	if b.Dim() == 1 {
		return Squeeze(Apply(choleskySolveOp{}, l, Unsqueeze(b, -1)), -1)
	}
	return Apply(choleskySolveOp{}, l, b)
}

// LogDetChol returns log det A = 2 Σᵢ log Lᵢᵢ for each lower Cholesky
// factor l (..., n, n) of A, shaped (...). It is composed of graph ops, so
// its gradient (2/Lᵢᵢ on the diagonal) comes from them. It panics if l is
// not a stack of square matrices.
func LogDetChol(l *Node) *Node {
	checkSquare("LogDetChol", l)
	return MulScalar(Sum(Log(diagPart(l)), []int{-1}, false), 2)
}

// solveOp is X = A⁻¹ B by LU with partial pivoting; b is a matrix here.
type solveOp struct{}

func (solveOp) Name() string { return "solve" }

func (solveOp) Arity() int { return 2 }

func (solveOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x, err := tensor.SolveTo(g.AllocUninit(in[0].DType(), solveShape(in[0], in[1])...), in[0], in[1])
	if err != nil {
		failData("solve", err)
	}
	return x
}

// B̄ = A⁻ᵀ X̄, Ā = −B̄ Xᵀ.
func (solveOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	bbar := Solve(Transpose(a), ct)
	abar := Neg(MatMulT(bbar, out, false, true))
	return cotangents(out, SumTo(abar, a.Shape()...), SumTo(bbar, b.Shape()...))
}

// Ẋ = A⁻¹ (Ḃ − Ȧ X).
func (solveOp) JVP(out *Node, t []*Node) *Node {
	rhs := t[1]
	if t[0] != nil {
		dax := MatMul(t[0], out)
		if rhs == nil {
			rhs = Neg(dax)
		} else {
			rhs = Sub(rhs, dax)
		}
	}
	return Solve(out.inputs[0], rhs)
}

func (o solveOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// Solve returns X = A⁻¹·B for square matrices a (..., n, n) by LU
// factorisation with partial pivoting; b is (..., n, k) or a vector (n,),
// and batch axes broadcast. It panics with a *tensor.Error when the shapes
// or dtypes do not fit, and with a *DataError wrapping tensor.ErrSingular
// when a matrix is singular.
func Solve(a, b *Node) *Node {
	checkSolve("solve", a, b)
	if b.Dim() == 1 {
		return Squeeze(Apply(solveOp{}, a, Unsqueeze(b, -1)), -1)
	}
	return Apply(solveOp{}, a, b)
}

// inverseOp is A⁻¹.
type inverseOp struct{}

func (inverseOp) Name() string { return "inverse" }

func (inverseOp) Arity() int { return 1 }

func (inverseOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x, err := tensor.InverseTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
	if err != nil {
		failData("inverse", err)
	}
	return x
}

// Ā = −A⁻ᵀ C A⁻ᵀ, reusing the output A⁻¹.
func (inverseOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Neg(MatMulT(out, MatMulT(ct, out, false, true), true, false)))
}

// d(A⁻¹) = −A⁻¹ Ȧ A⁻¹.
func (inverseOp) JVP(out *Node, t []*Node) *Node {
	return Neg(MatMul(out, MatMul(t[0], out)))
}

func (o inverseOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// Inverse returns the inverses of the square matrices a (..., n, n).
// Prefer Solve when the inverse is multiplied by something. It panics with
// a *tensor.Error when a is not a stack of square matrices, and with a
// *DataError wrapping tensor.ErrSingular when a matrix is singular.
func Inverse(a *Node) *Node {
	checkSquare("inverse", a)
	return Apply(inverseOp{}, a)
}

// logAbsDetOp is log |det A|, shaped like A's batch axes.
type logAbsDetOp struct{}

func (logAbsDetOp) Name() string { return "log_abs_det" }

func (logAbsDetOp) Arity() int { return 1 }

func (logAbsDetOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	_, la, err := tensor.SlogDet(in[0])
	if err != nil {
		failData("log_abs_det", err)
	}
	return la
}

// ∇ log|det A| = A⁻ᵀ.
func (logAbsDetOp) VJP(out, ct *Node, needs []bool) []*Node {
	a := out.inputs[0]
	return cotangents(out, Mul(Unsqueeze(Unsqueeze(ct, -1), -1), Transpose(Inverse(a))))
}

// d log|det A| = tr(A⁻¹ Ȧ) = Σᵢⱼ (A⁻ᵀ)ᵢⱼ Ȧᵢⱼ.
func (logAbsDetOp) JVP(out *Node, t []*Node) *Node {
	a := out.inputs[0]
	return Sum(Mul(Transpose(Inverse(a)), t[0]), []int{-2, -1}, false)
}

func (o logAbsDetOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// LogAbsDet returns log |det A| for the square matrices a (..., n, n),
// shaped (...): the second result of numpy.linalg.slogdet. Its gradient is
// A⁻ᵀ, so it needs A to be non-singular. It panics with a *tensor.Error
// when a is not a stack of square matrices.
func LogAbsDet(a *Node) *Node {
	checkSquare("log_abs_det", a)
	return Apply(logAbsDetOp{}, a)
}

// detOp is det A, shaped like A's batch axes.
type detOp struct{}

func (detOp) Name() string { return "det" }

func (detOp) Arity() int { return 1 }

func (detOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	d, err := tensor.Det(in[0])
	if err != nil {
		failData("det", err)
	}
	return d
}

// ∇ det A = det(A) A⁻ᵀ (Jacobi's formula).
func (detOp) VJP(out, ct *Node, needs []bool) []*Node {
	a := out.inputs[0]
	s := Unsqueeze(Unsqueeze(Mul(ct, out), -1), -1)
	return cotangents(out, Mul(s, Transpose(Inverse(a))))
}

// d det A = det(A) tr(A⁻¹ Ȧ).
func (detOp) JVP(out *Node, t []*Node) *Node {
	a := out.inputs[0]
	return Mul(out, Sum(Mul(Transpose(Inverse(a)), t[0]), []int{-2, -1}, false))
}

func (o detOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// Det returns the determinants of the square matrices a (..., n, n), shaped
// (...). Its value is defined for singular matrices, but its gradient
// det(A)·A⁻ᵀ is computed with an inverse, so differentiating at a singular
// matrix panics with a *DataError. It panics with a *tensor.Error when a is
// not a stack of square matrices.
func Det(a *Node) *Node {
	checkSquare("det", a)
	return Apply(detOp{}, a)
}

// eighOp is the eigendecomposition A = V diag(w) Vᵀ of a symmetric A. Its
// one output packs both results, shaped (..., n+1, n): rows 0..n-1 hold V
// (eigenvectors in columns) and row n holds w (ascending), so that the VJP
// receives a single cotangent. Eigh slices it.
//
// The rules (Giles 2008) use F_ij = 1/(w_j − w_i), which is infinite for
// repeated eigenvalues; eighF sets it to 0 there, which is exact for
// functions of the eigenvalues (see eighF). Like Cholesky, the rules treat
// A as symmetric: they use sym(Ȧ) and return a symmetric Ā.
type eighOp struct{}

func (eighOp) Name() string { return "eigh" }

func (eighOp) Arity() int { return 1 }

func (eighOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	w, v, err := tensor.Eigh(in[0])
	if err != nil {
		failData("eigh", err)
	}
	shape := append([]int{}, in[0].Shape()...)
	n := shape[len(shape)-1]
	shape[len(shape)-2] = n + 1
	out := g.AllocUninit(in[0].DType(), shape...)
	tensor.CopyInto(tensor.Slice(out, -2, 0, n, 1), v)
	tensor.CopyInto(tensor.Slice(out, -2, n, n+1, 1), tensor.Unsqueeze(w, -2))
	return out
}

// unpackEigh splits a packed (..., n+1, n) node into w (..., n) and V.
func unpackEigh(p *Node) (w, v *Node) {
	n := p.Shape()[p.Dim()-1]
	return Squeeze(Slice(p, -2, n, n+1, 1), -2), Slice(p, -2, 0, n, 1)
}

// eighF returns F with F_ij = 1/(w_j − w_i) for distinct eigenvalues and 0
// where |w_j − w_i| ≤ tol (the diagonal included), tol = 8·n·ε·max|w| per
// matrix, about the accuracy of computed eigenvalues. For repeated
// eigenvalues the eigenvectors are not unique and 1/(w_j − w_i) is infinite;
// with F = 0 there the rules give the exact derivative of any function of
// w alone and of gauge-invariant functions of v (JAX masks F the same way),
// instead of poisoning everything with Inf·0 = NaN. The reciprocal is taken
// of a safe denominator ("double where"), so second derivatives stay
// finite too. The mask is built from comparisons, which carry no gradient.
func eighF(w *Node) *Node {
	n := w.Shape()[w.Dim()-1]
	eps := 2.220446049250313e-16
	if w.DType() == tensor.Float32 {
		eps = 1.1920929e-07
	}
	d := Sub(Unsqueeze(w, -2), Unsqueeze(w, -1)) // d_ij = w_j − w_i
	scale := Unsqueeze(Max(Abs(w), []int{-1}, true), -1)
	tie := LessEqual(Abs(d), MulScalar(scale, 8*float64(n)*eps))
	zero, one := constLike(w, 0), constLike(w, 1)
	return Where(tie, zero, Reciprocal(Where(tie, one, d)))
}

// Ā = sym(V (diag(w̄) + F ∘ (Vᵀ V̄)) Vᵀ).
func (eighOp) VJP(out, ct *Node, needs []bool) []*Node {
	w, v := unpackEigh(out)
	wbar, vbar := unpackEigh(ct)
	inner := Add(diagEmbed(wbar), Mul(eighF(w), MatMulT(v, vbar, true, false)))
	return cotangents(out, sym(MatMul(v, MatMulT(inner, v, false, true))))
}

// With M = Vᵀ sym(Ȧ) V: ẇ = diag(M), V̇ = V (F ∘ M).
func (eighOp) JVP(out *Node, t []*Node) *Node {
	w, v := unpackEigh(out)
	m := MatMulT(v, MatMul(sym(t[0]), v), true, false)
	vdot := MatMul(v, Mul(eighF(w), m))
	return Concat(-2, vdot, Unsqueeze(diagPart(m), -2))
}

func (o eighOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// Eigh returns the eigenvalues w (..., n), in ascending order, and the
// orthonormal eigenvectors v (..., n, n), in columns, of the symmetric
// matrices a (..., n, n), so that a = v·diag(w)·vᵀ. Only the symmetric part
// of a matters to the derivatives. Derivatives of w are exact even for
// repeated eigenvalues (the gradient of w's sum at the identity is the
// identity). Derivatives of v are undefined where eigenvalues repeat (the
// eigenvectors of a repeated eigenvalue can be any orthonormal basis of its
// eigenspace): there the rules drop the terms that would divide by zero
// (the difference of two eigenvalues within a small relative tolerance),
// which is exact only for functions that do not depend on the choice of
// basis, such as projectors onto whole eigenspaces. Each eigenvector's sign
// is arbitrary too, so differentiate only functions that do not depend on
// it. It
// panics with a *tensor.Error when a is not a stack of square matrices,
// and with a *DataError when the kernel fails to converge.
func Eigh(a *Node) (w, v *Node) {
	checkSquare("eigh", a)
	return unpackEigh(Apply(eighOp{}, a))
}

// checkSquare panics unless a is a stack of square matrices.
func checkSquare(op string, a *Node) int {
	checkNodes(op, a)
	s := a.Shape()
	if len(s) < 2 || s[len(s)-1] != s[len(s)-2] {
		tensor.Fail(op, "operand %s is not a square matrix or a stack of them (want (..., n, n))", Describe(a))
	}
	return s[len(s)-1]
}

// checkSolve checks a square (..., n, n) and b (..., n, k) or (n,) with
// broadcasting batch axes.
func checkSolve(op string, a, b *Node) {
	checkNodes(op, a, b)
	if a.g != b.g {
		tensor.Fail(op, "operands %s belong to different graphs", Describe(a, b))
	}
	if a.DType() != b.DType() {
		tensor.Fail(op, "mixed dtypes: %s", Describe(a, b))
	}
	n := checkSquare(op, a)
	bs := b.Shape()
	switch {
	case len(bs) == 1 && bs[0] == n:
	case len(bs) >= 2 && bs[len(bs)-2] == n:
		as := a.Shape()
		tensor.BroadcastShapes(op, as[:len(as)-2], bs[:len(bs)-2])
	default:
		tensor.Fail(op, "right-hand side does not fit the matrix: %s (want (..., %d, k) or (%d,))", Describe(a, b), n, n)
	}
}

// solveShape is the shape of op(A)⁻¹·B for a square (..., n, n) and a
// matrix right-hand side b (..., n, k): the batch dims broadcast. The
// constructors have checked the operands.
func solveShape(a, b *tensor.Tensor) []int {
	as, bs := a.Shape(), b.Shape()
	batch := tensor.BroadcastShapes("solve", as[:len(as)-2], bs[:len(bs)-2])
	return append(batch, bs[len(bs)-2:]...)
}
