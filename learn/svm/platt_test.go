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
	pos := make([]bool, n)
	for i := range f {
		f[i] = 4*rng.Float64() - 2
		pos[i] = rng.Float64() < 1/(1+math.Exp(-2*f[i]+0.5))
	}
	p, err := svm.FitPlatt(f, pos)
	require.NoError(t, err)
	assert.InDelta(t, -2, p.A, 0.1)
	assert.InDelta(t, 0.5, p.B, 0.06)
	pr := p.Probability([]float64{-10, 0, 10})
	assert.Less(t, pr[0], 1e-6)
	assert.InDelta(t, 1/(1+math.Exp(p.B)), pr[1], 1e-15)
	assert.Greater(t, pr[2], 1-1e-6)
	_, err = svm.FitPlatt([]float64{1, 2}, []bool{true, true})
	assert.ErrorContains(t, err, "both classes")
}
