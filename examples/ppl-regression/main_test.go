package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A short run on 2,000 rows in batches of 128: the Student-t fit keeps
// the weights near the truth despite the outliers, its lppd beats the
// Gaussian fit's, and the per-row log-likelihood file has a line per row.
func TestRunSmall(t *testing.T) {
	res, r := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"student_t", "gaussian", "elpd_loo_diff", "elpd_loo_diff_se", "rows", "loglik_csv", "plot"},
		Pictures: []string{"elbo.png"}},
		"-n", "2000", "-batch", "128", "-steps", "600", "-lr", "0.03", "-draws", "30")
	assert.Less(t, res.StudentT.MaxWeightE, 0.15)
	assert.Greater(t, res.StudentT.LPPD, res.Gaussian.LPPD)
	assert.Greater(t, res.Gaussian.Sigma, res.StudentT.Sigma, "the Gaussian noise scale swells to cover the outliers")
	assert.Greater(t, res.StudentT.Nu, 0.0)
	// PSIS-LOO prefers the Student-t model by many standard errors, and
	// leave-one-out never scores a model above its in-sample lppd here.
	assert.Greater(t, res.LOODiff, 4*res.LOODiffSE, "elpd_loo difference %.1f ± %.1f", res.LOODiff, res.LOODiffSE)
	for _, f := range []fit{res.StudentT, res.Gaussian} {
		assert.Less(t, f.ELPDLOO, f.LPPD)
		assert.InDelta(t, f.LPPD-f.ELPDLOO, f.PLOO, 1e-6*math.Abs(f.LPPD), "p_loo = lppd − elpd_loo")
	}
	b, err := os.ReadFile(res.LogLik)
	require.NoError(t, err, r.JSON)
	assert.Len(t, strings.Split(strings.TrimSpace(string(b)), "\n"), 2001)
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-batch", "0"}, {"-n", "10", "-batch", "20"}, {"-outliers", "2"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}
