package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A short run: the chains agree (R̂), and with 569 observations the
// posterior is close to Gaussian, so NUTS's means and standard deviations
// are near the independent Laplace approximation of probabilistic/logreg
// (the mean sits a little off the mode, so within 0.35 posterior sds, and
// the sds within 15 %).
func TestNUTSAgreesWithLaplace(t *testing.T) {
	res, err := run(2, 2, 300, 400, t.TempDir(), false)
	require.NoError(t, err)
	require.Len(t, res.Quantities, 6)
	assert.Len(t, res.Plots, 6)
	assert.Zero(t, res.Divergences)
	for _, q := range res.Quantities {
		assert.Less(t, q.Rhat, 1.05, q.Name)
		assert.Less(t, math.Abs(q.Mean-q.LaplaceMean), 0.35*q.LaplaceSD, "%s: NUTS %g, Laplace %g", q.Name, q.Mean, q.LaplaceMean)
		assert.InDelta(t, q.LaplaceSD, q.SD, 0.15*q.LaplaceSD, q.Name)
	}
}
