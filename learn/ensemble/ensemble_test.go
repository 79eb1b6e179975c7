package ensemble

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// One split recovers a step function exactly: with h = 1, λ = 0 and g the
// negated targets, the leaves hold the two levels' means.
func TestTreeRecoversAStep(t *testing.T) {
	rows := [][]float64{{0}, {1}, {2}, {3}, {4}, {5}}
	y := []float64{-1, -1, -1, 2, 2, 2}
	g, h := make([]float64, 6), make([]float64, 6)
	for i, v := range y {
		g[i], h[i] = -v, 1
	}
	tr := fitTree(rows, g, h, []int{0, 1, 2, 3, 4, 5}, TreeOptions{MaxDepth: 3, MinLeaf: 1})
	assert.Equal(t, 2, tr.Leaves(), "no further split helps")
	for i, r := range rows {
		assert.Equal(t, y[i], tr.Predict(r))
	}
	assert.Equal(t, -1.0, tr.Predict([]float64{2.4}))
	assert.Equal(t, 2.0, tr.Predict([]float64{2.6}))
}

// A user-written logistic loss (softplus(F) − yF, summed) gives exactly the
// ensemble of the built-in losses.BCEWithLogits: autodiff supplies the
// same gradients and Hessians.
func TestUserLossEqualsBuiltIn(t *testing.T) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	require.NoError(t, err)
	x = tensor.Slice(x, 1, 0, 5, 1).Contiguous()
	y := make([]float64, len(labels))
	for i, l := range labels {
		y[i] = float64(l)
	}
	user := func(pred, target *graph.Node) *graph.Node {
		return graph.Sum(graph.Sub(graph.Softplus(pred), graph.Mul(target, pred)), nil, false)
	}
	opts := BoostOptions{Rounds: 20, Tree: TreeOptions{MaxDepth: 2}}
	a, err := Boost(x, y, Logistic, opts)
	require.NoError(t, err)
	b, err := Boost(x, y, user, opts)
	require.NoError(t, err)
	pa, pb := a.Predict(x), b.Predict(x)
	for i := range pa {
		assert.InDelta(t, pa[i], pb[i], 1e-12)
	}
	// The base score is the log-odds of the positives: one Newton step
	// from 0 gives (Σy − n/2)/(n/4).
	pos := 0.0
	for _, v := range y {
		pos += v
	}
	assert.InDelta(t, (pos-float64(len(y))/2)/(float64(len(y))/4), a.Base, 1e-12)
	right := 0
	for i, p := range pa {
		if (p > 0) == (y[i] == 1) {
			right++
		}
	}
	assert.Greater(t, float64(right)/float64(len(y)), 0.93)
	for i := 1; i < len(a.Loss); i++ {
		assert.LessOrEqual(t, a.Loss[i], a.Loss[i-1]+1e-9, "round %d", i)
	}
}

// Squared-error boosting on diabetes fits well on the training rows (R² of
// the training fit far above the linear model's 0.52).
func TestBoostRegression(t *testing.T) {
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	require.NoError(t, err)
	rows, y, err := tab.Split("target")
	require.NoError(t, err)
	flat := make([]float64, 0, len(rows)*len(rows[0]))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	x := tensor.FromFloat64s(flat, len(rows), len(rows[0]))
	b, err := Boost(x, y, SquaredError, BoostOptions{Rounds: 100, LearningRate: 0.1})
	require.NoError(t, err)
	pred := b.Predict(x)
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var res, tot float64
	for i, v := range y {
		res += (v - pred[i]) * (v - pred[i])
		tot += (v - mean) * (v - mean)
	}
	assert.Greater(t, 1-res/tot, 0.7)
	assert.InDelta(t, mean, b.Base, 1e-9, "one Newton step on squared error starts at the mean")
	_, err = Boost(x, y[:3], SquaredError, BoostOptions{})
	assert.ErrorContains(t, err, "one target per row")
	assert.False(t, math.IsNaN(b.Loss[len(b.Loss)-1]))
}
