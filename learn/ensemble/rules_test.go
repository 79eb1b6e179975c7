package ensemble_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/ensemble"
	"github.com/gradus-ml/gradus/tensor"
)

// The ensembles run fixed budgets (trees, rounds) with no convergence
// test, so they have no non-convergence to report; what they share with
// every fit is that invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2)
	y := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4)
	labels := []int{0, 1, 0, 1}
	cases := []struct {
		name, want string
		err        error
	}{
		{"booster negative rounds", "-1", numtest.Err(ensemble.FitBooster(ctx, x, y, ensemble.BoosterOptions{Rounds: -1}))},
		{"booster negative learning rate", "-0.5", numtest.Err(ensemble.FitBooster(ctx, x, y, ensemble.BoosterOptions{LearningRate: -0.5}))},
		{"booster NaN λ", "NaN", numtest.Err(ensemble.FitBooster(ctx, x, y, ensemble.BoosterOptions{Lambda: math.NaN()}))},
		{"bagging infinite λ", "Lambda = +Inf", numtest.Err(ensemble.FitBagging(ctx, x, y, ensemble.BaggingOptions{Lambda: math.Inf(1)}))},
		{"bagging negative trees", "-2", numtest.Err(ensemble.FitBagging(ctx, x, y, ensemble.BaggingOptions{Trees: -2}))},
		{"AdaBoost negative rounds", "-3", numtest.Err(ensemble.FitAdaBoost(ctx, x, labels, ensemble.AdaBoostOptions{Rounds: -3}))},
		{"tree negative MinLeaf", "-1", numtest.Err(ensemble.FitClassTree(x, labels, ensemble.ClassTreeOptions{MinLeaf: -1}))},
		{"tree MaxFeatures above d", "MaxFeatures = 3 for 2 columns", numtest.Err(ensemble.FitClassTree(x, labels, ensemble.ClassTreeOptions{MaxFeatures: 3}))},
		{"forest MaxFeatures above d", "MaxFeatures = 3 for 2 columns", numtest.Err(ensemble.FitForest(ctx, x, labels, ensemble.ForestOptions{MaxFeatures: 3}))},
		{"forest fewer classes than labels", "label 1 of row 1 is not in [0, 1)", numtest.Err(ensemble.FitForest(ctx, x, labels, ensemble.ForestOptions{Classes: 1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or identical rows (one
// leaf), gives finite predictions.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	ctx := context.Background()
	y := tensor.FromFloat64s([]float64{1, 2, 2, 4, 3, 5}, 6)
	labels := []int{0, 1, 0, 1, 1, 0}
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{3, 0, 3, 1, 3, 2, 3, 4, 3, 3, 3, 5}, 6, 2),
		"identical rows":  tensor.Full(tensor.Float64, 2, 6, 2),
	}
	for name, x := range data {
		cases := []numtest.FitCase{
			{Name: "booster", Fit: func() ([]float64, error) {
				m, err := ensemble.FitBooster(ctx, x, y, ensemble.BoosterOptions{Rounds: 5})
				if m == nil {
					return nil, err
				}
				return m.Predict(x).Values(), err
			}},
			{Name: "bagging", Fit: func() ([]float64, error) {
				m, err := ensemble.FitBagging(ctx, x, y, ensemble.BaggingOptions{Trees: 3, MinLeaf: 1})
				if m == nil {
					return nil, err
				}
				return m.Predict(x).Values(), err
			}},
			{Name: "AdaBoost", Fit: func() ([]float64, error) {
				m, err := ensemble.FitAdaBoost(ctx, x, labels, ensemble.AdaBoostOptions{Rounds: 5})
				if m == nil {
					return nil, err
				}
				return m.Decision(x).Values(), err
			}},
			{Name: "forest", Fit: func() ([]float64, error) {
				m, err := ensemble.FitForest(ctx, x, labels, ensemble.ForestOptions{Trees: 5})
				if m == nil {
					return nil, err
				}
				return m.PredictProba(x).Values(), err
			}},
		}
		numtest.FiniteFits(t, name, cases)
	}
}
