package ensemble

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
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
	tr := fitTree(rows, g, h, []int{0, 1, 2, 3, 4, 5}, treeOptions{maxDepth: 3, minLeaf: 1})
	assert.Equal(t, 2, tr.Leaves(), "no further split helps")
	assert.Equal(t, y, tr.Predict(tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 6, 1)).Float64s())
	assert.Equal(t, []float64{-1, 2}, tr.Predict(tensor.FromFloat64s([]float64{2.4, 2.6}, 2, 1)).Float64s())
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
	yt := tensor.FromFloat64s(y, len(y))
	user := func(pred, target *graph.Node, _ losses.Reduction) *graph.Node {
		return graph.Sum(graph.Sub(graph.Softplus(pred), graph.Mul(target, pred)), nil, false)
	}
	ctx := context.Background()
	a, err := FitBooster(ctx, x, yt, BoosterOptions{Loss: losses.BCEWithLogits, Rounds: 20, MaxDepth: 2})
	require.NoError(t, err)
	b, err := FitBooster(ctx, x, yt, BoosterOptions{Loss: user, Rounds: 20, MaxDepth: 2})
	require.NoError(t, err)
	pa, pb := a.Predict(x).Float64s(), b.Predict(x).Float64s()
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
	for i := 1; i < len(a.Trace); i++ {
		assert.LessOrEqual(t, a.Trace[i], a.Trace[i-1]+1e-9, "round %d", i)
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
	b, err := FitBooster(context.Background(), x, tensor.FromFloat64s(y, len(y)), BoosterOptions{Rounds: 100, LearningRate: 0.1})
	require.NoError(t, err)
	pred := b.Predict(x).Float64s()
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
	assert.False(t, math.IsNaN(b.Trace[len(b.Trace)-1]))
}

// Every fit rejects bad data and options with an error naming the fit and
// what was wrong.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4, 1)
	y := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4)
	labels := []int{0, 0, 1, 1}
	nan := tensor.FromFloat64s([]float64{1, 2, math.NaN(), 4}, 4, 1)
	noCols := tensor.Zeros(tensor.Float64, 4, 0)
	boost := func(x, y *tensor.Tensor, o BoosterOptions) func() error {
		return func() error { _, err := FitBooster(ctx, x, y, o); return err }
	}
	bag := func(x, y *tensor.Tensor, o BaggingOptions) func() error {
		return func() error { _, err := FitBagging(ctx, x, y, o); return err }
	}
	forest := func(x *tensor.Tensor, l []int, o ForestOptions) func() error {
		return func() error { _, err := FitForest(ctx, x, l, o); return err }
	}
	ada := func(x *tensor.Tensor, l []int, o AdaBoostOptions) func() error {
		return func() error { _, err := FitAdaBoost(ctx, x, l, o); return err }
	}
	tree := func(x *tensor.Tensor, l []int, o ClassTreeOptions) func() error {
		return func() error { _, err := FitClassTree(x, l, o); return err }
	}
	for _, c := range []struct {
		name string
		fit  func() error
		want string
	}{
		{"booster NaN", boost(nan, y, BoosterOptions{}), "ensemble.FitBooster: row 2, column 0 is NaN"},
		{"booster NaN target", boost(x, tensor.FromFloat64s([]float64{1, math.Inf(1), 3, 4}, 4), BoosterOptions{}), "ensemble.FitBooster: target 1 is +Inf"},
		{"booster zero columns", boost(noCols, y, BoosterOptions{}), "ensemble.FitBooster: data has zero columns"},
		{"booster rows", boost(x, tensor.FromFloat64s([]float64{1, 2, 3}, 3), BoosterOptions{}), "ensemble.FitBooster: 4 rows but 3 targets"},
		{"booster rounds", boost(x, y, BoosterOptions{Rounds: -1}), "Rounds = -1"},
		{"booster loss", boost(x, y, BoosterOptions{Loss: func(p, t *graph.Node, _ losses.Reduction) *graph.Node {
			return graph.Sum(graph.Neg(graph.Square(graph.Sub(p, t))), nil, false)
		}}), "need finite values and h ≥ 0"},
		{"bagging NaN", bag(nan, y, BaggingOptions{}), "ensemble.FitBagging: row 2, column 0 is NaN"},
		{"bagging zero columns", bag(noCols, y, BaggingOptions{}), "ensemble.FitBagging: data has zero columns"},
		{"bagging targets", bag(x, nil, BaggingOptions{}), "ensemble.FitBagging: targets must be an (n) tensor"},
		{"forest one class", forest(x, []int{1, 1, 1, 1}, ForestOptions{}), "ensemble.FitForest: the labels hold a single class (1)"},
		{"forest NaN", forest(nan, labels, ForestOptions{}), "ensemble.FitForest: row 2, column 0 is NaN"},
		{"forest zero columns", forest(noCols, labels, ForestOptions{}), "ensemble.FitForest: data has zero columns"},
		{"forest labels", forest(x, labels[:3], ForestOptions{}), "ensemble.FitForest: 4 rows but 3 labels"},
		{"forest classes", forest(x, []int{0, 0, 1, 2}, ForestOptions{Classes: 2}), "label 2 of row 3 is not in [0, 2)"},
		{"adaboost one class", ada(x, []int{0, 0, 0, 0}, AdaBoostOptions{}), "ensemble.FitAdaBoost: the labels hold a single class (0)"},
		{"adaboost NaN", ada(nan, labels, AdaBoostOptions{}), "ensemble.FitAdaBoost: row 2, column 0 is NaN"},
		{"adaboost zero columns", ada(noCols, labels, AdaBoostOptions{}), "data has zero columns"},
		{"tree one class", tree(x, []int{0, 0, 0, 0}, ClassTreeOptions{}), "ensemble.FitClassTree: the labels hold a single class"},
		{"tree label", tree(x, []int{0, 0, 1, -1}, ClassTreeOptions{}), "ensemble.FitClassTree: label -1 of row 3"},
		{"tree NaN", tree(nan, labels, ClassTreeOptions{}), "row 2, column 0 is NaN"},
	} {
		assert.ErrorContains(t, c.fit(), c.want, c.name)
	}
}

// A cancelled context stops each ensemble before its first tree: the
// empty ensemble comes back with the context's error.
func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4, 1)
	y := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4)
	b, err := FitBooster(ctx, x, y, BoosterOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, b)
	assert.Empty(t, b.Trees)
	assert.Equal(t, []float64{2.5}, b.Predict(tensor.FromFloat64s([]float64{9}, 1, 1)).Float64s(), "the base score, the mean")
	g, err := FitBagging(ctx, x, y, BaggingOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, g.Trees)
	f, err := FitForest(ctx, x, []int{0, 0, 1, 1}, ForestOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, f.Trees)
	a, err := FitAdaBoost(ctx, x, []int{0, 0, 1, 1}, AdaBoostOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, a.Trees)
}

// Prediction on data of the wrong width is misuse: a *tensor.Error panic
// naming the call.
func TestPredictMisusePanics(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4, 1)
	b, err := FitBooster(context.Background(), x, tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4), BoosterOptions{Rounds: 2})
	require.NoError(t, err)
	f, err := FitForest(context.Background(), x, []int{0, 0, 1, 1}, ForestOptions{Trees: 2})
	require.NoError(t, err)
	wide := tensor.Zeros(tensor.Float64, 2, 3)
	for name, call := range map[string]func(){
		"ensemble.Booster.Predict":     func() { b.Predict(wide) },
		"ensemble.Forest.PredictProba": func() { f.PredictProba(nil) },
		"ensemble.Forest.Predict":      func() { f.Predict(wide) },
	} {
		func() {
			defer func() {
				e, ok := recover().(*tensor.Error)
				require.True(t, ok, name)
				assert.Contains(t, e.Error(), name)
			}()
			call()
		}()
	}
}
