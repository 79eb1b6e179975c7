package svm

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Pairwise probabilities that are consistent, r[i][j] = pᵢ/(pᵢ + pⱼ),
// come from exactly one p, which the coupling recovers.
func TestCoupleRecoversConsistentProbabilities(t *testing.T) {
	want := []float64{0.5, 0.3, 0.15, 0.05}
	k := len(want)
	r := make([][]float64, k)
	for i := range r {
		r[i] = make([]float64, k)
		for j := range r[i] {
			if i != j {
				r[i][j] = want[i] / (want[i] + want[j])
			}
		}
	}
	got := make([]float64, k)
	couple(r, got)
	assert.InDeltaSlice(t, want, got, 1e-3)
}

// Two classes: PredictProba is the Platt sigmoid fitted to the machine's
// training decision values, in the columns of Classes; without Probability
// it panics.
func TestSVCPredictProbaBinary(t *testing.T) {
	x := tensor.FromFloat64s([]float64{-2, -1.5, -1, -0.2, 0.3, 0.1, 1, 1.4, 2, -0.4}, 10, 1)
	labels := []int{3, 3, 3, 3, 7, 3, 7, 7, 7, 7}
	m, err := FitSVC(context.Background(), x, labels, SVCOptions{Kernel: kernel.NewRBF(1), Probability: true})
	require.NoError(t, err)
	b := m.Machines[0]
	target := make([]int, len(labels))
	for i, l := range labels {
		if l == b.Positive {
			target[i] = 1
		}
	}
	pl, err := FitPlatt(b.Decision(x), target, PlattOptions{})
	require.NoError(t, err)
	xs := tensor.FromFloat64s([]float64{-3, 0, 3}, 3, 1)
	p := m.PredictProba(xs)
	require.Equal(t, []int{3, 2}, p.Shape())
	want := pl.PredictProba(b.Decision(xs))
	pos := 0
	if m.Classes[1] == b.Positive {
		pos = 1
	}
	for i := range 3 {
		assert.InDelta(t, want.At(i, 1), p.At(i, pos), 1e-12)
		assert.InDelta(t, 1, p.At(i, 0)+p.At(i, 1), 1e-12)
	}
	assert.Greater(t, p.At(2, 1), p.At(0, 1), "class 7 lies to the right")

	plain, err := FitSVC(context.Background(), x, labels, SVCOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	assert.Panics(t, func() { plain.PredictProba(xs) })
}

// Three classes, one-vs-one and one-vs-rest: rows are distributions and
// their largest entry picks the predicted class on nearly every iris row.
func TestSVCPredictProbaIris(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	for _, ovr := range []bool{false, true} {
		m, err := FitSVC(context.Background(), x, labels, SVCOptions{Kernel: kernel.NewRBF(1), OneVsRest: ovr, Probability: true})
		require.NoError(t, err)
		p := m.PredictProba(x)
		require.Equal(t, []int{150, 3}, p.Shape())
		pred := m.Predict(x)
		agree := 0
		for i := range 150 {
			s, best := 0.0, 0
			for c := range 3 {
				s += p.At(i, c)
				if p.At(i, c) > p.At(i, best) {
					best = c
				}
			}
			assert.InDelta(t, 1, s, 1e-9)
			if m.Classes[best] == pred[i] {
				agree++
			}
		}
		assert.GreaterOrEqual(t, agree, 145, "one-vs-rest %v", ovr)
		assert.False(t, math.IsNaN(p.At(0, 0)))
	}
}
