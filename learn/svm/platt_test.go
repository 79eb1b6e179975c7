package svm_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/tensor"
)

// Labels drawn from the sigmoid 1/(1 + exp(−2f + 0.5)) (A = −2, B = 0.5)
// over many decision values: the maximum-likelihood fit recovers A and B
// to within their sampling error.
func TestPlattRecoversASigmoid(t *testing.T) {
	rng := tensor.NewRNG(1)
	n := 20000
	f := make([]float64, n)
	labels := make([]int, n)
	for i := range f {
		f[i] = 4*rng.Float64() - 2
		if rng.Float64() < 1/(1+math.Exp(-2*f[i]+0.5)) {
			labels[i] = 1
		}
	}
	p, err := svm.FitPlatt(tensor.FromFloat64s(f, n), labels, svm.PlattOptions{})
	require.NoError(t, err)
	assert.InDelta(t, -2, p.A, 0.1)
	assert.InDelta(t, 0.5, p.B, 0.06)
	pr := p.PredictProba(tensor.FromFloat64s([]float64{-10, 0, 10}, 3))
	assert.Equal(t, []int{3, 2}, pr.Shape())
	assert.Less(t, pr.At(0, 1), 1e-6)
	assert.InDelta(t, 1/(1+math.Exp(p.B)), pr.At(1, 1), 1e-15)
	assert.InDelta(t, 1-1/(1+math.Exp(p.B)), pr.At(1, 0), 1e-15)
	assert.Greater(t, pr.At(2, 1), 1-1e-6)
	_, err = svm.FitPlatt(tensor.FromFloat64s([]float64{1, 2}, 2), []int{1, 1}, svm.PlattOptions{})
	assert.ErrorContains(t, err, "both classes")
	_, err = svm.FitPlatt(tensor.FromFloat64s([]float64{1, 2}, 2), []int{1, 2}, svm.PlattOptions{})
	assert.ErrorContains(t, err, "label 1 is 2")
	_, err = svm.FitPlatt(tensor.FromFloat64s([]float64{1, math.NaN()}, 2), []int{1, 0}, svm.PlattOptions{})
	assert.ErrorContains(t, err, "is NaN")
}
