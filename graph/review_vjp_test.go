package graph_test

// Review: hand-worked reverse-mode values for the shape ops whose VJPs
// scatter or rearrange (duplicate gather indices, negative-step slices,
// unused split pieces, concat with an empty piece, pad, stack, permute) and
// for a triangular solve, in both dtypes. GradCheck covers these against
// finite differences at random points; these pin exact values.

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func TestReviewShapeVJPHandWorked(t *testing.T) {
	sum := func(n *graph.Node) *graph.Node { return graph.Sum(n, nil, false) }
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-6
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5}, 5))
			w := g.Const(tensor.FromValues(dt, []float64{1, 10, 100}, 3))
			m := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
			cases := []struct {
				name string
				y    func() *graph.Node
				wrt  *graph.Node
				want []float64
			}{
				// Index 1 is picked twice: its cotangents 1 and 10 add up.
				{"IndexSelect duplicate indices", func() *graph.Node {
					return sum(graph.Mul(graph.IndexSelect(x, 0, []int{1, 1, 4}), w))
				}, x, []float64{0, 11, 0, 0, 100}},
				// x[4], x[2], x[0] get weights 1, 10, 100.
				{"Slice with step -2", func() *graph.Node {
					return sum(graph.Mul(graph.Slice(x, 0, 4, -6, -2), w))
				}, x, []float64{100, 0, 10, 0, 1}},
				// Only the second piece is used: d Σ p² = 2p there, 0 elsewhere.
				{"Split with an unused piece", func() *graph.Node {
					return sum(graph.Square(graph.Split(x, 0, 2, 3)[1]))
				}, x, []float64{0, 0, 6, 8, 10}},
				// Pad (x0, x1) on the left with a constant: weights 10, 100.
				{"Pad", func() *graph.Node {
					return sum(graph.Mul(graph.Pad(graph.Slice(x, 0, 0, 2, 1), [][2]int{{1, 0}}, 7), w))
				}, x, []float64{10, 100, 0, 0, 0}},
				// [] ++ (x3, x4) ++ (x0) weighted 1, 10, 100.
				{"Concat with an empty piece", func() *graph.Node {
					return sum(graph.Mul(graph.Concat(0, graph.Slice(x, 0, 0, 0, 1), graph.Slice(x, 0, 3, 5, 1),
						graph.Slice(x, 0, 0, 1, 1)), w))
				}, x, []float64{100, 0, 0, 1, 10}},
				// Σ over two stacked copies of m² is 2·Σ m²: gradient 4m.
				{"Stack of one node twice", func() *graph.Node {
					return sum(graph.Square(graph.Stack(1, m, m)))
				}, m, []float64{4, 8, 12, 16, 20, 24}},
				// ⟨mᵀ, C⟩ = ⟨m, Cᵀ⟩ with C = [[1 2] [3 4] [5 6]].
				{"Permute", func() *graph.Node {
					c := g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2))
					return sum(graph.Mul(graph.Permute(m, 1, 0), c))
				}, m, []float64{1, 3, 5, 2, 4, 6}},
			}
			for _, c := range cases {
				got := autodiff.Grad(c.y(), c.wrt)[0].Value().Values()
				require.Len(t, got, len(c.want), c.name)
				for i := range c.want {
					assert.InDelta(t, c.want[i], got[i], tol, "%s [%d]", c.name, i)
				}
			}

			// Softmax along axis 0 of m: column 0 is (1, 4), so
			// s = 1/(1+e³) and ∂s/∂m₀₀ = s(1−s), ∂s/∂m₁₀ = −s(1−s).
			s := 1 / (1 + math.Exp(3))
			pick := g.Const(tensor.FromValues(dt, []float64{1, 0, 0, 0, 0, 0}, 2, 3))
			got := autodiff.Grad(sum(graph.Mul(graph.Softmax(m, 0), pick)), m)[0].Value().Values()
			want := []float64{s * (1 - s), 0, 0, -s * (1 - s), 0, 0}
			for i := range want {
				assert.InDelta(t, want[i], got[i], tol, "softmax axis 0 [%d]", i)
			}

			// L·x = b with L = [[2 0] [1 3]], b = (2, 7): x = (1, 2). For
			// y = Σx, ∂y/∂L = −z·xᵀ on the lower triangle, where Lᵀz = 1
			// gives z = (1/3, 1/3); the upper triangle is not read.
			l := g.Var(tensor.FromValues(dt, []float64{2, 0, 1, 3}, 2, 2))
			b := g.Const(tensor.FromValues(dt, []float64{2, 7}, 2, 1))
			xs := graph.TriSolve(l, b, true, false)
			gl := autodiff.Grad(sum(xs), l)[0].Value().Values()
			wantL := []float64{-1.0 / 3, 0, -1.0 / 3, -2.0 / 3}
			for i := range wantL {
				assert.InDelta(t, wantL[i], gl[i], tol, "trisolve ∂/∂L [%d]", i)
			}
		})
	}
}
