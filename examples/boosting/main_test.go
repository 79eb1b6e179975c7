package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Fewer rounds than the default: boosting already explains a good part of
// diabetes' variance (scikit-learn's GradientBoostingRegressor reaches
// R² ≈ 0.4 on such splits), close to bagged trees, and separates breast
// cancer as well as the forest does, within a few test points.
func TestTreesExplainDiabetesAndSeparateCancer(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"diabetes_boost_r2", "diabetes_bagging_r2", "cancer_boost_accuracy", "cancer_boost_auc", "cancer_forest_accuracy", "plot"}, Pictures: []string{"loss.png"}},
		"-rounds", "100")
	assert.Greater(t, res.DiabetesBoostR2, 0.3)
	assert.Greater(t, res.DiabetesBagR2, 0.3)
	assert.Greater(t, res.CancerBoostAcc, 0.9)
	assert.Greater(t, res.CancerBoostAUC, 0.95)
	assert.InDelta(t, res.CancerForestAcc, res.CancerBoostAcc, 0.05)
}
