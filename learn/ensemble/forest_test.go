package ensemble

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand: labels 0, 0, 1, 1 at x = 1, 2, 3, 4 are split at 2.5 into pure
// leaves (the Gini gain is 0.5, the whole impurity); XOR needs two levels.
func TestClassTreeByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4, 1)
	tr, err := FitClassTree(x, []int{0, 0, 1, 1}, ClassTreeOptions{})
	require.NoError(t, err)
	q := tensor.FromFloat64s([]float64{2.4, 2.6}, 2, 1)
	assert.Equal(t, []float64{1, 0, 0, 1}, tr.PredictProba(q).Float64s())
	assert.Equal(t, []int{0, 1}, tr.Predict(q))
	xor := tensor.FromFloat64s([]float64{0, 0, 0, 1, 1, 0, 1, 1, 0, 0.1, 1, 0.9}, 6, 2)
	for _, c := range []Criterion{Gini, Entropy} {
		tr, err = FitClassTree(xor, []int{0, 1, 1, 0, 0, 0}, ClassTreeOptions{Criterion: c})
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 1, 0, 0, 0}, tr.Predict(xor), "criterion %d", c)
	}
}

// A forest on iris: training accuracy near 1 and an out-of-bag error in
// the few-percent range reported for iris (scikit-learn's is about 5 %).
func TestForestOnIris(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	f, err := FitForest(context.Background(), x, labels, ForestOptions{Seed: 4})
	require.NoError(t, err)
	pred := f.Predict(x)
	p := f.PredictProba(x)
	assert.Equal(t, []int{150, 3}, p.Shape())
	assert.Equal(t, pred, tensor.ArgMax(p, 1))
	assert.InDeltaSlice(t, []float64{1, 1, 1}, tensor.Sum(p, []int{1}, false).Float64s()[:3], 1e-12)
	right := 0
	for i, p := range pred {
		if p == labels[i] {
			right++
		}
	}
	assert.Greater(t, float64(right)/150, 0.98)
	assert.Greater(t, f.OOBError, 0.0)
	assert.Less(t, f.OOBError, 0.1)
}

// An interval (class 1 on [3, 6], 0 elsewhere) needs at least two stumps:
// AdaBoost's vote classifies every training point correctly.
func TestAdaBoostLearnsAnInterval(t *testing.T) {
	var xs []float64
	var y []int
	for i := range 10 {
		xs = append(xs, float64(i))
		if i >= 3 && i <= 6 {
			y = append(y, 1)
		} else {
			y = append(y, 0)
		}
	}
	x := tensor.FromFloat64s(xs, 10, 1)
	a, err := FitAdaBoost(context.Background(), x, y, AdaBoostOptions{Seed: 2})
	require.NoError(t, err)
	assert.Greater(t, len(a.Trees), 1)
	assert.Equal(t, y, a.Predict(x))
	assert.Equal(t, y, tensor.ArgMax(a.Decision(x), 1))
	assert.Equal(t, 0.0, a.TrainError[len(a.TrainError)-1])
}
