package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
)

// Cases for diagonal and add_diag, the ops that add noise or jitter to a
// covariance without an n×n identity. Both are linear, so the squared
// cases give the second-order modes a nonzero curvature to check.
func init() {
	diag := func(xs []*graph.Node) *graph.Node { return graph.Diagonal(xs[0]) }
	addCase("diagonal", opCase{name: "(3,3)", inputs: trmmNormal([]int{3, 3}), f: diag})
	addCase("diagonal", opCase{name: "batched (2,4,4)", inputs: trmmNormal([]int{2, 4, 4}), f: diag})
	addCase("diagonal", opCase{name: "transposed (3,3)", inputs: trmmNormal([]int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Diagonal(graph.Transpose(xs[0])) }})
	addCase("diagonal", opCase{name: "squared, for curvature (2,3,3)", inputs: trmmNormal([]int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			y := graph.Diagonal(xs[0])
			return graph.Mul(y, y)
		}})

	addDiag := func(xs []*graph.Node) *graph.Node { return graph.AddDiag(xs[0], xs[1]) }
	for _, tc := range []struct {
		name   string
		shapes [][]int
	}{
		{"(3,3) + scalar", [][]int{{3, 3}, {}}},
		{"(3,3) + (3,)", [][]int{{3, 3}, {3}}},
		{"batched (2,3,3) + shared (3,)", [][]int{{2, 3, 3}, {3}}},
		{"batched (2,3,3) + per-matrix (2,3)", [][]int{{2, 3, 3}, {2, 3}}},
		{"broadcast (3,3) + (2,3)", [][]int{{3, 3}, {2, 3}}},
		{"broadcast (2,1,2,2) + (3,2)", [][]int{{2, 1, 2, 2}, {3, 2}}},
	} {
		addCase("add_diag", opCase{name: tc.name, inputs: trmmNormal(tc.shapes...), f: addDiag})
	}
	// Squared, so the second-order modes see curvature in both inputs,
	// including through the broadcast.
	for _, tc := range []struct {
		name   string
		shapes [][]int
	}{
		{"squared (3,3) + scalar", [][]int{{3, 3}, {}}},
		{"squared broadcast (3,3) + (2,3)", [][]int{{3, 3}, {2, 3}}},
	} {
		addCase("add_diag", opCase{name: tc.name, inputs: trmmNormal(tc.shapes...),
			f: func(xs []*graph.Node) *graph.Node {
				y := graph.AddDiag(xs[0], xs[1])
				return graph.Mul(y, y)
			}})
	}
	// The GP's use: a kernel matrix plus a noise scalar, through Cholesky
	// and its log determinant (x·xᵀ + (d² + 1)·I is positive definite).
	addCase("add_diag", opCase{name: "log det of x·xᵀ + (d²+1)·I", inputs: trmmNormal([]int{3, 3}, []int{}),
		f: func(xs []*graph.Node) *graph.Node {
			k := graph.MatMulT(xs[0], xs[0], false, true)
			noise := graph.AddScalar(graph.Mul(xs[1], xs[1]), 1)
			return graph.LogDetChol(graph.Cholesky(graph.AddDiag(k, noise)))
		}})
}
