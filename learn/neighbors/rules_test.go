package neighbors_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/neighbors"
	"github.com/gradus-ml/gradus/tensor"
)

// Nearest neighbours store the data, with nothing to iterate; invalid
// hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	y := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4)
	labels := []int{0, 1, 0, 1}
	cases := []struct {
		name, want string
		err        error
	}{
		{"classifier negative K", "K = -1", numtest.Err(neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: -1}))},
		{"classifier K above n", "K = 5", numtest.Err(neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 5}))},
		{"regressor K above n", "K = 9", numtest.Err(neighbors.FitRegressor(x, y, neighbors.RegressorOptions{K: 9}))},
		{"regressor unknown weighting", "7", numtest.Err(neighbors.FitRegressor(x, y, neighbors.RegressorOptions{K: 2, Weights: 7}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Duplicate points, queried exactly (distance 0), give finite predictions
// with distance weights too.
func TestFitsOnDuplicatePointsAreFinite(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 1, 1, 1, 2, 2, 2, 2}, 4, 2)
	y := tensor.FromFloat64s([]float64{1, 3, 5, 7}, 4)
	labels := []int{0, 1, 1, 0}
	for _, w := range []neighbors.Weighting{neighbors.Uniform, neighbors.Distance} {
		c, err := neighbors.FitClassifier(x, labels, neighbors.ClassifierOptions{K: 3, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		numtest.Finite(t, "classifier", c.PredictProba(x).Values())
		r, err := neighbors.FitRegressor(x, y, neighbors.RegressorOptions{K: 3, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		numtest.Finite(t, "regressor", r.Predict(x).Values())
	}
}
