package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

func TestDiabetes(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"least_squares_r2", "ridge_r2", "elastic_net_alpha", "elastic_net_r2", "path_alphas", "path_nonzero", "quantiles"}, Pictures: []string{"path.png", "quantile.png"}},
		"-alphas", "20")

	assert.Equal(t, []string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"}, res.Features)
	assert.Equal(t, 353, res.Train, "⌈0.2·442⌉ = 89 test rows")
	assert.Equal(t, 89, res.Test)
	// Ten features explain a little under half the variance of the
	// diabetes target (scikit-learn's user guide: R² ≈ 0.45 to 0.52
	// depending on the split); a light ridge loses little of it.
	assert.Greater(t, res.LeastSquares, 0.35)
	assert.Less(t, res.LeastSquares, 0.65)
	assert.InDelta(t, res.LeastSquares, res.Ridge, 0.03)
	assert.Greater(t, res.ENet, 0.3)

	// The path starts at α_max = max_j |x_jᵀ(y − ȳ)|/n, computed here from
	// the CSV, with every weight zero, and ends at 10⁻³·α_max.
	table, err := data.LoadCSV("sklearn/diabetes.csv")
	require.NoError(t, err)
	x, y, err := table.Split("target")
	require.NoError(t, err)
	n := float64(len(y))
	ybar := 0.0
	for _, v := range y {
		ybar += v / n
	}
	amax := 0.0
	for j := range x[0] {
		mean, dot := 0.0, 0.0
		for i := range x {
			mean += x[i][j] / n
		}
		for i := range x {
			dot += (x[i][j] - mean) * (y[i] - ybar)
		}
		amax = math.Max(amax, math.Abs(dot)/n)
	}
	require.Len(t, res.PathAlphas, 20)
	assert.InDelta(t, amax, res.PathAlphas[0], 1e-9*amax)
	assert.InDelta(t, 1e-3*amax, res.PathAlphas[19], 1e-12*amax)
	assert.Equal(t, 0, res.PathNonzero[0])
	assert.Equal(t, 10, res.PathNonzero[19], "at 10⁻³·α_max the lasso keeps every weight")
	assert.Equal(t, "bmi", res.PathFirstIn, "bmi is the feature most correlated with the target")
	assert.Greater(t, res.ENetAlpha, 0.0)
	assert.Greater(t, res.ENetValR2, 0.3, "the chosen α scores well on its validation rows")

	// A τ-quantile line with an intercept has at least τ of the points on
	// or below it and at most τ strictly below (Koenker & Bassett 1978):
	// with 442 points and a few on the line, the share is within 1 %.
	require.Len(t, res.Quantiles, 2)
	for _, q := range res.Quantiles {
		assert.GreaterOrEqual(t, q.Below, q.Tau-1e-12)
		assert.InDelta(t, q.Tau, q.Below, 0.01)
		assert.Greater(t, q.Slope, 0.0, "progression rises with BMI")
	}
	assert.Greater(t, res.Quantiles[1].Intercept, res.Quantiles[0].Intercept)
}

func TestBadFlags(t *testing.T) {
	clitest.Fails(t, program(), 2, "-test", "0.7")
	clitest.Fails(t, program(), 2, "-l1ratio", "0")
	clitest.Fails(t, program(), 2, "-alphas", "1")
}
