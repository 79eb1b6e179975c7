package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for the linear-algebra ops (graph/linalg.go).
// Matrices are sampled well conditioned: N(0, 0.5²) entries plus 2.5·I, so
// solves, inverses and determinants are far from singular and triangular
// factors have diagonals near 2.5. Ops that need a symmetric input
// (Cholesky, Eigh) get it from an unconstrained one inside f (A = M Mᵀ + 4I,
// A = 0.25(S + Sᵀ) + diag(0, 2, 4, ...)), so finite differences stay in the
// valid domain; Eigh's diagonal keeps the eigenvalues well separated.

// linMatrix samples a well-conditioned (batch..., n, n) matrix.
func linMatrix(rng *tensor.RNG, n int, batch ...int) *tensor.Tensor {
	shape := append(append([]int{}, batch...), n, n)
	return tensor.Add(rng.Normal(tensor.Float64, 0, 0.5, shape...), tensor.MulScalar(tensor.Eye(tensor.Float64, n), 2.5))
}

// linMatrixAnd samples a well-conditioned matrix (batch..., n, n) followed
// by N(0, 1) tensors of the given shapes.
func linMatrixAnd(n int, batch []int, shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := []*tensor.Tensor{linMatrix(rng, n, batch...)}
		for _, s := range shapes {
			out = append(out, rng.Normal(tensor.Float64, 0, 1, s...))
		}
		return out
	}
}

// linNormal samples N(0, 1) tensors of the given shapes.
func linNormal(shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			out[i] = rng.Normal(tensor.Float64, 0, 1, s...)
		}
		return out
	}
}

// linEye returns the n×n identity times s as a constant in x's graph and dtype.
func linEye(x *graph.Node, n int, s float64) *graph.Node {
	return x.Graph().Const(tensor.MulScalar(tensor.Eye(x.DType(), n), s))
}

// linSPD maps an unconstrained m (..., n, n) to M Mᵀ + 4I.
func linSPD(m *graph.Node) *graph.Node {
	n := m.Shape()[m.Dim()-1]
	return graph.Add(graph.MatMulT(m, m, false, true), linEye(m, n, 4))
}

// linSeparated maps an unconstrained s (..., n, n) to the symmetric
// 0.25(S + Sᵀ) + diag(0, 2, 4, ...), whose eigenvalues are well separated.
func linSeparated(s *graph.Node) *graph.Node {
	n := s.Shape()[s.Dim()-1]
	d := make([]float64, n*n)
	for i := range n {
		d[i*n+i] = 2 * float64(i)
	}
	diag := s.Graph().Const(tensor.FromValues(s.DType(), d, n, n))
	return graph.Add(graph.MulScalar(graph.Add(s, graph.Transpose(s)), 0.25), diag)
}

// linEighBoth combines eigenvalues and eigenvectors sign-invariantly: each
// eigenvector enters squared.
func linEighBoth(xs []*graph.Node) *graph.Node {
	w, v := graph.Eigh(linSeparated(xs[0]))
	return graph.Add(graph.Mul(v, v), graph.Unsqueeze(w, -2))
}

func init() {
	addCase("tri_mask", opCase{name: "tril (3,4)", inputs: linNormal([]int{3, 4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Tril(xs[0]) }})
	addCase("tri_mask", opCase{name: "triu (2,3,3)", inputs: linNormal([]int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Triu(xs[0]) }})
	addCase("tri_mask", opCase{name: "phi_lower (4,3)", inputs: linNormal([]int{4, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.PhiLower(xs[0]) }})

	addCase("cholesky", opCase{name: "M Mᵀ + 4I (4,4)", inputs: linNormal([]int{4, 4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Cholesky(linSPD(xs[0])) }})
	addCase("cholesky", opCase{name: "batched (2,3,3)", inputs: linNormal([]int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Cholesky(linSPD(xs[0])) }})
	addCase("cholesky", opCase{name: "log det through the factor (5,5)", inputs: linNormal([]int{5, 5}),
		f: func(xs []*graph.Node) *graph.Node { return graph.LogDetChol(graph.Cholesky(linSPD(xs[0]))) }})

	for _, tc := range []struct {
		name         string
		lower, trans bool
	}{{"lower", true, false}, {"lower trans", true, true}, {"upper", false, false}, {"upper trans", false, true}} {
		lower, trans := tc.lower, tc.trans
		addCase("trisolve", opCase{name: tc.name + " (3,3)·X = (3,2)", inputs: linMatrixAnd(3, nil, []int{3, 2}),
			f: func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], lower, trans) }})
	}
	addCase("trisolve", opCase{name: "vector rhs", inputs: linMatrixAnd(4, nil, []int{4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], true, false) }})
	addCase("trisolve", opCase{name: "broadcast (2,3,3) and (3,2)", inputs: linMatrixAnd(3, []int{2}, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], false, true) }})
	addCase("trisolve", opCase{name: "broadcast (3,3) and (2,3,1)", inputs: linMatrixAnd(3, nil, []int{2, 3, 1}),
		f: func(xs []*graph.Node) *graph.Node { return graph.TriSolve(xs[0], xs[1], true, true) }})

	addCase("cholesky_solve", opCase{name: "(3,3) and (3,2)", inputs: linMatrixAnd(3, nil, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.CholeskySolve(xs[0], xs[1]) }})
	addCase("cholesky_solve", opCase{name: "vector rhs", inputs: linMatrixAnd(4, nil, []int{4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.CholeskySolve(xs[0], xs[1]) }})
	addCase("cholesky_solve", opCase{name: "broadcast (2,3,3) and (3,1)", inputs: linMatrixAnd(3, []int{2}, []int{3, 1}),
		f: func(xs []*graph.Node) *graph.Node { return graph.CholeskySolve(xs[0], xs[1]) }})
	addCase("cholesky_solve", opCase{name: "through cholesky", inputs: linNormal([]int{3, 3}, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.CholeskySolve(graph.Cholesky(linSPD(xs[0])), xs[1]) }})

	addCase("solve", opCase{name: "(3,3) and (3,2)", inputs: linMatrixAnd(3, nil, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Solve(xs[0], xs[1]) }})
	addCase("solve", opCase{name: "vector rhs", inputs: linMatrixAnd(4, nil, []int{4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Solve(xs[0], xs[1]) }})
	addCase("solve", opCase{name: "broadcast (2,3,3) and (3,2)", inputs: linMatrixAnd(3, []int{2}, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Solve(xs[0], xs[1]) }})

	addCase("inverse", opCase{name: "(3,3)", inputs: linMatrixAnd(3, nil),
		f: func(xs []*graph.Node) *graph.Node { return graph.Inverse(xs[0]) }})
	addCase("inverse", opCase{name: "batched (2,3,3)", inputs: linMatrixAnd(3, []int{2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Inverse(xs[0]) }})

	addCase("log_abs_det", opCase{name: "(4,4)", inputs: linMatrixAnd(4, nil),
		f: func(xs []*graph.Node) *graph.Node { return graph.LogAbsDet(xs[0]) }})
	addCase("log_abs_det", opCase{name: "negative determinant", inputs: linMatrixAnd(3, nil),
		f: func(xs []*graph.Node) *graph.Node { return graph.LogAbsDet(graph.Neg(xs[0])) }})
	addCase("log_abs_det", opCase{name: "batched (2,3,3)", inputs: linMatrixAnd(3, []int{2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.LogAbsDet(xs[0]) }})

	addCase("det", opCase{name: "(3,3)", inputs: linMatrixAnd(3, nil),
		f: func(xs []*graph.Node) *graph.Node { return graph.Det(xs[0]) }})
	addCase("det", opCase{name: "batched (2,2,2)", inputs: linMatrixAnd(2, []int{2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Det(xs[0]) }})

	addCase("eigh", opCase{name: "values and squared vectors (3,3)", inputs: linNormal([]int{3, 3}), f: linEighBoth})
	addCase("eigh", opCase{name: "values and squared vectors (4,4)", inputs: linNormal([]int{4, 4}), f: linEighBoth})
	addCase("eigh", opCase{name: "values, batched (2,3,3)", inputs: linNormal([]int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node { w, _ := graph.Eigh(linSeparated(xs[0])); return w }})
	addCase("eigh", opCase{name: "reconstruction V diag(w) Vᵀ", inputs: linNormal([]int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			w, v := graph.Eigh(linSeparated(xs[0]))
			return graph.MatMulT(graph.Mul(v, graph.Unsqueeze(w, -2)), v, false, true)
		}})
}

// linSVDAll returns U, s and V of the thin SVD flattened into one vector,
// so the check covers every output's rules. Random Gaussian matrices have
// distinct, non-zero singular values with probability one; the sign
// convention is constant under the finite-difference steps.
func linSVDAll(xs []*graph.Node) *graph.Node {
	u, s, v := graph.SVD(xs[0])
	return graph.Concat(0, graph.Reshape(u, -1), s, graph.Reshape(v, -1))
}

func init() {
	addCase("svd", opCase{name: "tall (5,3)", inputs: linNormal([]int{5, 3}), f: linSVDAll})
	addCase("svd", opCase{name: "wide (3,4)", inputs: linNormal([]int{3, 4}), f: linSVDAll})
	addCase("svd", opCase{name: "square batched (2,3,3), values", inputs: linNormal([]int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node { _, s, _ := graph.SVD(xs[0]); return s }})
	addCase("svd", opCase{name: "reconstruction U diag(s) Vᵀ", inputs: linNormal([]int{4, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			u, s, v := graph.SVD(xs[0])
			return graph.MatMulT(graph.Mul(u, graph.Unsqueeze(s, -2)), v, false, true)
		}})
}

func linQRAll(xs []*graph.Node) *graph.Node {
	q, r := graph.QR(xs[0])
	return graph.Concat(0, graph.Reshape(q, -1), graph.Reshape(r, -1))
}

func init() {
	addCase("qr", opCase{name: "tall (5,3)", inputs: linNormal([]int{5, 3}), f: linQRAll})
	addCase("qr", opCase{name: "square batched (2,3,3)", inputs: linNormal([]int{2, 3, 3}), f: linQRAll})
	addCase("qr", opCase{name: "reconstruction QR", inputs: linNormal([]int{4, 2}),
		f: func(xs []*graph.Node) *graph.Node { q, r := graph.QR(xs[0]); return graph.MatMul(q, r) }})
}
