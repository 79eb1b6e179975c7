package losses_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// failure runs f and returns the message of the *tensor.Error it panics
// with (failing the test if it does not).
func failure(t *testing.T, f func()) string {
	t.Helper()
	var err error
	func() {
		defer tensor.Recover(&err)
		f()
	}()
	require.Error(t, err, "expected a *tensor.Error panic")
	var te *tensor.Error
	require.True(t, errors.As(err, &te))
	return err.Error()
}

func TestMisuse(t *testing.T) {
	for _, dt := range numtest.DTypes {
		other := tensor.Float64
		if dt == other {
			other = tensor.Float32
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x23 := g.Var(tensor.Zeros(dt, 2, 3))
			x32 := g.Var(tensor.Zeros(dt, 3, 2))
			x6 := g.Var(tensor.Zeros(dt, 6))
			xOther := g.Var(tensor.Zeros(other, 2, 3))
			cases := []struct {
				name string
				f    func()
				want []string // substrings of the message
			}{
				{"ce/label out of range", func() { losses.CrossEntropy(x23, []int{0, 3}, losses.CrossEntropyOptions{}) },
					[]string{"losses.CrossEntropy", "label 3 at position 1", "[0, 3)", "(2, 3) " + dt.String()}},
				{"ce/negative label", func() { losses.CrossEntropy(x23, []int{-1, 0}, losses.CrossEntropyOptions{}) },
					[]string{"losses.CrossEntropy", "label -1 at position 0"}},
				{"ce/label count", func() { losses.CrossEntropy(x23, []int{0}, losses.CrossEntropyOptions{}) },
					[]string{"losses.CrossEntropy", "1 labels", "(2, 3)"}},
				{"ce/not 2-D", func() { losses.CrossEntropy(x6, []int{0}, losses.CrossEntropyOptions{}) },
					[]string{"losses.CrossEntropy", "(6,)", "not (N, C)"}},
				{"ce/weights", func() { losses.CrossEntropy(x23, []int{0, 1}, losses.CrossEntropyOptions{Weights: []float64{1, 2}}) },
					[]string{"losses.CrossEntropy", "2 class weights", "3 classes"}},
				{"ce/smoothing", func() { losses.CrossEntropy(x23, []int{0, 1}, losses.CrossEntropyOptions{LabelSmoothing: 1.5}) },
					[]string{"losses.CrossEntropy", "label smoothing 1.5"}},
				{"nll/label", func() { losses.NLL(x32, []int{0, 1, 2}, losses.CrossEntropyOptions{}) },
					[]string{"losses.NLL", "label 2 at position 2", "(3, 2)"}},
				{"multimargin/label", func() { losses.MultiMarginHinge(x23, []int{5, 0}, 1, losses.Mean) },
					[]string{"losses.MultiMarginHinge", "label 5 at position 0"}},
				{"mse/shapes", func() { losses.MSE(x23, x32, losses.Mean) },
					[]string{"losses.MSE", "shapes differ", "(2, 3) " + dt.String(), "(3, 2) " + dt.String()}},
				{"l1/dtypes", func() { losses.L1(x23, xOther, losses.Mean) },
					[]string{"losses.L1", "mixed dtypes"}},
				{"bce/shapes", func() { losses.BCE(x23, x6, losses.Mean) }, []string{"losses.BCE", "(6,)"}},
				{"bcewithlogits/nil", func() { losses.BCEWithLogits(x23, nil, losses.Mean) }, []string{"losses.BCEWithLogits", "nil"}},
				{"hinge/reduction", func() { losses.Hinge(x23, x23, losses.Reduction(7)) }, []string{"losses.Hinge", "unknown reduction"}},
				{"huber/delta", func() { losses.Huber(x23, x23, 0, losses.Mean) }, []string{"losses.Huber", "delta 0"}},
				{"gaussiannll/variance", func() { losses.GaussianNLL(x23, x32, x23, false, 1e-6, losses.Mean) },
					[]string{"losses.GaussianNLL", "variance (3, 2)", "mean (2, 3)"}},
				{"gaussiannll/eps", func() { losses.GaussianNLL(x23, x23, x23, false, math.NaN(), losses.Mean) },
					[]string{"losses.GaussianNLL", "eps NaN"}},
				{"kl/shapes", func() { losses.KLDiagGaussian(x23, x6, losses.Mean) }, []string{"losses.KLDiagGaussian", "(6,)"}},
				{"kl2/broadcast", func() { losses.KLDiagGaussians(x23, x23, x32, x23, losses.Mean) }, []string{"losses.KLDiagGaussians"}},
			}
			for _, c := range cases {
				msg := failure(t, c.f)
				for _, w := range c.want {
					assert.Contains(t, msg, w, c.name)
				}
			}
		})
	}
}

func TestEmptyBatchMeanIsNaN(t *testing.T) {
	// As in PyTorch, the mean over no samples is 0/0; Sum is 0.
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Var(tensor.Zeros(dt, 0, 3))
		assert.True(t, math.IsNaN(losses.CrossEntropy(x, nil, losses.CrossEntropyOptions{}).Item()))
		assert.Equal(t, 0.0, losses.CrossEntropy(x, nil, losses.CrossEntropyOptions{Reduction: losses.Sum}).Item())
		assert.True(t, math.IsNaN(losses.MultiMarginHinge(x, nil, 1, losses.Mean).Item()))
		// Targets whose weights are all zero: Mean divides by 0, giving 0/0;
		// with smoothing the other classes add a positive term (PyTorch
		// returns NaN there, Gradus +Inf: neither is a usable loss).
		y := g.Var(tensor.FromValues(dt, []float64{1, 2, 3}, 1, 3))
		w := []float64{0, 1, 1}
		assert.True(t, math.IsNaN(losses.CrossEntropy(y, []int{0}, losses.CrossEntropyOptions{Weights: w}).Item()))
		assert.True(t, math.IsInf(losses.CrossEntropy(y, []int{0}, losses.CrossEntropyOptions{Weights: w, LabelSmoothing: 0.1}).Item(), 1))
	}
}
