package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The reverse sweep sums the cotangents of many unit-step slices of one
// node in one Concat and the cotangents of a weight's many products in
// one GEMM; both must equal the sums worked out element by element.
func TestSliceCotangentsAssembled(t *testing.T) {
	type win struct{ axis, start, stop int }
	for _, c := range []struct {
		name string
		wins []win
	}{
		{"tiled", []win{{0, 2, 4}, {0, 0, 2}, {0, 4, 5}}},
		{"gaps and repeats", []win{{0, 1, 2}, {0, 3, 5}, {0, 1, 2}}},
		{"overlapping", []win{{0, 0, 3}, {0, 2, 5}, {0, 1, 2}}},
		{"two axes", []win{{0, 0, 2}, {1, 1, 3}, {0, 3, 4}, {1, 0, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := tensor.NewRNG(3)
			g := graph.New()
			x := g.Var(rng.Normal(tensor.Float64, 0, 1, 5, 3))
			dense := rng.Normal(tensor.Float64, 0, 1, 5, 3)
			loss := graph.Sum(graph.Mul(x, g.Const(dense)), nil, false)
			want := dense.Clone()
			for _, w := range c.wins {
				s := graph.Slice(x, w.axis, w.start, w.stop, 1)
				r := rng.Normal(tensor.Float64, 0, 1, s.Shape()...)
				loss = graph.Add(loss, graph.Sum(graph.Mul(s, g.Const(r)), nil, false))
				for i := range r.Shape()[0] {
					for j := range r.Shape()[1] {
						wi, wj := i, j
						if w.axis == 0 {
							wi += w.start
						} else {
							wj += w.start
						}
						want.SetAt(want.At(wi, wj)+r.At(i, j), wi, wj)
					}
				}
			}
			got := autodiff.Grad(loss, x)[0]
			require.InDeltaSlice(t, want.Values(), got.Value().Values(), 1e-12)
		})
	}
}

func TestWeightCotangentsOneProduct(t *testing.T) {
	rng := tensor.NewRNG(4)
	g := graph.New()
	w := g.Var(rng.Normal(tensor.Float64, 0, 1, 4, 3))
	b := g.Var(rng.Normal(tensor.Float64, 0, 1, 4))
	want := tensor.Zeros(tensor.Float64, 4, 3)
	var loss *graph.Node
	for k := range 3 {
		a := rng.Normal(tensor.Float64, 0, 1, 2, 3)
		r := rng.Normal(tensor.Float64, 0, 1, 2, 4)
		y := graph.MatMulT(g.Const(a), w, false, true)
		if k == 1 {
			y = graph.Linear(g.Const(a), w, b)
		}
		term := graph.Sum(graph.Mul(y, g.Const(r)), nil, false)
		if loss == nil {
			loss = term
		} else {
			loss = graph.Add(loss, term)
		}
		want = tensor.Add(want, tensor.MatMul(tensor.Transpose(r), a))
	}
	got := autodiff.Grad(loss, w)[0]
	require.InDeltaSlice(t, want.Values(), got.Value().Values(), 1e-12)
}

// A batch of weights (2, 4, 3) used in three batched products x·wᵀ: its
// cotangent, summed as one batched product over the uses, is Σ rᵀ·a per
// batch entry, worked out here entry by entry.
func TestBatchedWeightCotangentsOneProduct(t *testing.T) {
	rng := tensor.NewRNG(5)
	g := graph.New()
	w := g.Var(rng.Normal(tensor.Float64, 0, 1, 2, 4, 3))
	want := make([]float64, 2*4*3)
	var loss *graph.Node
	for range 3 {
		a := rng.Normal(tensor.Float64, 0, 1, 2, 5, 3)
		r := rng.Normal(tensor.Float64, 0, 1, 2, 5, 4)
		term := graph.Sum(graph.Mul(graph.MatMulT(g.Const(a), w, false, true), g.Const(r)), nil, false)
		if loss == nil {
			loss = term
		} else {
			loss = graph.Add(loss, term)
		}
		av, rv := a.Values(), r.Values()
		for bi := range 2 {
			for i := range 4 {
				for j := range 3 {
					for k := range 5 {
						want[(bi*4+i)*3+j] += rv[(bi*5+k)*4+i] * av[(bi*5+k)*3+j]
					}
				}
			}
		}
	}
	got := autodiff.Grad(loss, w)[0]
	require.Equal(t, []int{2, 4, 3}, got.Shape())
	require.InDeltaSlice(t, want, got.Value().Values(), 1e-12)
}
