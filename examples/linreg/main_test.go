package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Ordinary least squares on all 442 diabetes rows explains 51.77 % of the
// target's variance (R² = 0.5177, the figure scikit-learn's
// LinearRegression reports on this set).
func TestDiabetesFit(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"gd_mse", "newton_mse", "exact_mse", "max_coef_gap", "plot"}, Pictures: []string{"loss.png"}},
		"-steps", "100")
	assert.InDelta(t, 0.5177, 1-2*res.ExactLoss, 5e-4)
	assert.InDelta(t, res.ExactLoss, res.NewtonLoss, 1e-12)
	assert.Less(t, res.MaxCoefGap, 1e-9)
	assert.Less(t, res.GDLoss, 0.25)
	assert.GreaterOrEqual(t, res.GDLoss, res.ExactLoss)
}
