package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ordinary least squares on all 442 diabetes rows explains 51.77 % of the
// target's variance (R² = 0.5177, the figure scikit-learn's
// LinearRegression reports on this set).
func TestDiabetesFit(t *testing.T) {
	res, err := run(100, 0.1, false)
	require.NoError(t, err)
	assert.InDelta(t, 0.5177, 1-2*res.ExactLoss, 5e-4)
	assert.InDelta(t, res.ExactLoss, res.NewtonLoss, 1e-12)
	assert.Less(t, res.MaxCoefGap, 1e-9)
	assert.Less(t, res.GDLoss, 0.25)
	assert.GreaterOrEqual(t, res.GDLoss, res.ExactLoss)
}
