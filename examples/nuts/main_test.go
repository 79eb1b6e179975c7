package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A short run: the chains agree (R̂), and with 569 observations the
// posterior is close to Gaussian, so NUTS's means and standard deviations
// are near the independent Laplace approximation of probabilistic/logreg
// (the mean sits a little off the mode with 31 weights: within 0.5 posterior sds; the sds
// within 20 %, short chains). Eight schools: E[μ] ≈ 4.4 and E[τ] ≈ 3.6
// (Gelman et al., BDA §5.5; Stan's case study), within the Monte Carlo
// error of 400 draws.
func TestNUTSAgreesWithLaplaceAndEightSchools(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"rhat_max", "ess_bulk_min", "divergences", "posterior_mean", "seconds", "laplace_mean", "cov_rel_diff", "eight_schools", "plots"}, Pictures: []string{"trace_0.png", "trace_5.png"}},
		"-seed", "2", "-chains", "2", "-warmup", "150", "-draws", "200")
	require.Len(t, res.PosteriorMean, 31)
	assert.Len(t, res.Plots, 6)
	assert.Zero(t, res.Divergences)
	assert.Less(t, res.RhatMax, 1.05)
	assert.Greater(t, res.ESSBulkMin, 100.0)
	for k := range 31 {
		assert.Less(t, math.Abs(res.PosteriorMean[k]-res.LaplaceMean[k]), 0.5*res.LaplaceSD[k], "weight %d: NUTS %g, Laplace %g", k, res.PosteriorMean[k], res.LaplaceMean[k])
		assert.InDelta(t, res.LaplaceSD[k], res.PosteriorSD[k], 0.2*res.LaplaceSD[k], "weight %d", k)
	}
	assert.Less(t, res.CovRelDiff, 0.25)
	s := res.EightSchools
	require.NotNil(t, s)
	assert.InDelta(t, 4.4, s.MuMean, 1.0)
	assert.InDelta(t, 3.6, s.TauMean, 1.0)
	assert.Less(t, s.RhatMax, 1.05)
}
