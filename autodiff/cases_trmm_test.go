package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Cases for tri_matmul, the triangular product behind the Cholesky rules.
// L is a free normal matrix: only its lower triangle is read, so the
// gradient check also confirms nothing flows to the upper one.
func init() {
	for _, tc := range []struct {
		name  string
		trans bool
	}{{"L·B", false}, {"Lᵀ·B", true}} {
		trans := tc.trans
		addCase("tri_matmul", opCase{name: tc.name + " (4,4)·(4,3)", inputs: trmmNormal([]int{4, 4}, []int{4, 3}),
			f: func(xs []*graph.Node) *graph.Node { return graph.TriMatMul(xs[0], xs[1], trans) }})
		addCase("tri_matmul", opCase{name: "lower(" + tc.name + ") (4,4)·(4,4)", inputs: trmmNormal([]int{4, 4}, []int{4, 4}),
			f: func(xs []*graph.Node) *graph.Node { return graph.TriMatMulLower(xs[0], xs[1], trans) }})
	}
	addCase("tri_matmul", opCase{name: "vector rhs", inputs: trmmNormal([]int{3, 3}, []int{3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.TriMatMul(xs[0], xs[1], false) }})
	addCase("tri_matmul", opCase{name: "broadcast (2,3,3) and (3,2)", inputs: trmmNormal([]int{2, 3, 3}, []int{3, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.TriMatMul(xs[0], xs[1], true) }})
	addCase("tri_matmul", opCase{name: "squared, for curvature", inputs: trmmNormal([]int{3, 3}, []int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			y := graph.TriMatMulLower(xs[0], xs[1], true)
			return graph.Mul(y, y)
		}})
}

// trmmNormal samples standard normal inputs of the given shapes.
func trmmNormal(shapes ...[]int) func(rng *tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			out[i] = rng.Normal(tensor.Float64, 0, 1, s...)
		}
		return out
	}
}

// Cases for cholesky_grad, the reverse sweep behind the Cholesky rule (its
// own rules differentiate Murray's formula). L gets a dominant diagonal so
// the solves are well conditioned; (36, 36) runs the blocked sweep.
func init() {
	for _, shapes := range [][2][]int{{{4, 4}, {4, 4}}, {{2, 3, 3}, {3, 3}}, {{36, 36}, {36, 36}}} {
		addCase("cholesky_grad", opCase{name: fmt.Sprint(shapes[0], " and ", shapes[1]), inputs: trmmNormal(shapes[0], shapes[1]),
			f: func(xs []*graph.Node) *graph.Node { return graph.CholeskyGrad(trmmDominant(xs[0]), xs[1]) }})
	}
	addCase("cholesky_grad", opCase{name: "squared, for curvature (3,3)", inputs: trmmNormal([]int{3, 3}, []int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			y := graph.CholeskyGrad(trmmDominant(xs[0]), xs[1])
			return graph.Mul(y, y)
		}})
}

// trmmDominant adds 4 to the diagonal of the square matrices in x.
func trmmDominant(x *graph.Node) *graph.Node {
	n := x.Shape()[x.Dim()-1]
	return graph.Add(x, x.Graph().Const(tensor.MulScalar(tensor.Eye(x.DType(), n), 4)))
}

func init() {
	addCase("sym_lower", opCase{name: "(3,3)", inputs: trmmNormal([]int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.SymmetrizeLower(xs[0]) }})
	addCase("sym_lower", opCase{name: "batched, squared (2,4,4)", inputs: trmmNormal([]int{2, 4, 4}),
		f: func(xs []*graph.Node) *graph.Node {
			y := graph.SymmetrizeLower(xs[0])
			return graph.Mul(y, y)
		}})
}

// TestCholeskyLogDetGradLarge checks the Cholesky rule at a size where the
// blocked triangular kernels recurse, against the identity
// ∂ log det A / ∂A = A⁻¹, i.e. A·G = I.
func TestCholeskyLogDetGradLarge(t *testing.T) {
	const n = 90
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-9
		if dt == tensor.Float32 {
			tol = 2e-3
		}
		rng := tensor.NewRNG(9)
		m := rng.Normal(tensor.Float64, 0, 1, n, n)
		a := tensor.AddTo(nil, tensor.MatMulT(m, m, false, true), tensor.MulScalar(tensor.Eye(tensor.Float64, n), float64(n))).Cast(dt)
		g := graph.New()
		av := g.Var(a)
		grad := autodiff.Grad(graph.LogDetChol(graph.Cholesky(av)), av)[0].Value()
		prod := tensor.MatMul(a, grad).Values()
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				assert.InDelta(t, want, prod[i*n+j], tol, "%v (%d,%d)", dt, i, j)
			}
		}
	}
}
