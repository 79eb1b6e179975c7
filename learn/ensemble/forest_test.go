package ensemble

import (
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
	tr, err := FitClassTree(x, []int{0, 0, 1, 1}, 2, ClassTreeOptions{}, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0}, tr.Proba([]float64{2.4}))
	assert.Equal(t, []float64{0, 1}, tr.Proba([]float64{2.6}))
	xor := tensor.FromFloat64s([]float64{0, 0, 0, 1, 1, 0, 1, 1, 0, 0.1, 1, 0.9}, 6, 2)
	for _, c := range []Criterion{Gini, Entropy} {
		tr, err = FitClassTree(xor, []int{0, 1, 1, 0, 0, 0}, 2, ClassTreeOptions{Criterion: c}, nil)
		require.NoError(t, err)
		for i, want := range []int{0, 1, 1, 0, 0, 0} {
			row := xor.Values()[2*i : 2*i+2]
			assert.Equal(t, float64(1), tr.Proba(row)[want], "criterion %d row %d", c, i)
		}
	}
	_, err = FitClassTree(x, []int{0, 0, 1, 2}, 2, ClassTreeOptions{}, nil)
	assert.ErrorContains(t, err, "label 2 of row 3")
}

// A forest on iris: training accuracy near 1 and an out-of-bag error in
// the few-percent range reported for iris (scikit-learn's is about 5 %).
func TestForestOnIris(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	f, err := FitForest(x, labels, 3, 100, ClassTreeOptions{}, 4)
	require.NoError(t, err)
	pred := f.Predict(x)
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
	a, err := FitAdaBoost(x, y, 2, 50, ClassTreeOptions{}, 2)
	require.NoError(t, err)
	assert.Greater(t, len(a.Trees), 1)
	assert.Equal(t, y, a.Predict(x))
	assert.Equal(t, 0.0, a.TrainError[len(a.TrainError)-1])
}
