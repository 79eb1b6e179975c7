package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A short run: E[μ] ≈ 4.4 and E[τ] ≈ 3.6 (Stan's case study) within the
// Monte Carlo error of 200 draws, the non-centred chains agree, θ keeps
// its 8 entries, and the picture is written. With GRADUS_PPL_LONG=1 the
// run has Stan's defaults (4 chains of 1,000 + 1,000), E[μ] and E[τ] are
// asked to within 0.3 and the centred form must diverge more often than
// the non-centred one.
func TestRunSmall(t *testing.T) {
	args := []string{"-chains", "2", "-warmup", "100", "-draws", "100"}
	long := os.Getenv("GRADUS_PPL_LONG") != ""
	if long {
		args = nil
	}
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"mu_mean", "tau_mean", "rhat_max", "divergences_centered", "divergences_noncentered", "theta_mean", "plot"},
		Pictures: []string{"funnel.png"}}, args...)
	tol := 1.5
	if long {
		tol = 0.3
		assert.Greater(t, res.DivergencesCentered, res.DivergencesNoncentered)
	}
	assert.InDelta(t, 4.4, res.MuMean, tol)
	assert.InDelta(t, 3.6, res.TauMean, tol)
	assert.Less(t, res.RhatMax, 1.1)
	assert.Len(t, res.ThetaMean, 8)
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-chains", "0"}, {"-draws", "2"}, {"-target", "1"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}
