package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// At small settings the Kronecker fit finds the true task correlations
// (±0.1) and the Hadamard model predicts task 2's held-out stretch better
// than task 2's own GP; -json has the agreed fields and both pictures are
// written.
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"b_true", "b_learned", "b_rel_error", "corr_max_abs_error", "lml", "heldout_rmse_multitask", "heldout_rmse_single", "plot", "taskcov_plot"},
		Pictures: []string{"series.png", "taskcov.png"}},
		"-n", "80", "-span", "20", "-iters", "100")
	assert.Less(t, res.CorrError, 0.1)
	assert.Less(t, res.BRelError, 0.6, "the scale of B is seen through one draw only")
	assert.Less(t, res.RMSEMulti, res.RMSESingle)
	assert.Equal(t, 32, res.HeldOut)
	assert.InDelta(t, 1.05, res.BTrue[0][0], 1e-12)
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "2"}, {"-noise", "0"}, {"-span", "-1"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}
