package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fewer rounds than the default: boosting already explains a good part of
// diabetes' variance (scikit-learn's GradientBoostingRegressor reaches
// R² ≈ 0.4 on such splits), close to bagged trees, and separates breast
// cancer as well as the forest does, within a few test points.
func TestQuickRun(t *testing.T) {
	cfg := config{Rounds: 100, Depth: 3, LR: 0.05, Seed: 1, Out: t.TempDir() + "/b.png"}
	res, err := run(cfg, false)
	require.NoError(t, err)
	assert.Greater(t, res.DiabetesBoostR2, 0.3)
	assert.Greater(t, res.DiabetesBagR2, 0.3)
	assert.Greater(t, res.CancerBoostAcc, 0.9)
	assert.Greater(t, res.CancerBoostAUC, 0.95)
	assert.InDelta(t, res.CancerForestAcc, res.CancerBoostAcc, 0.05)
	st, err := os.Stat(cfg.Out)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000))
}
