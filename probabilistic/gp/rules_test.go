package gp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Every fit out of iterations (one L-BFGS iteration per start, one Newton
// step) keeps its best model and says so with a *tensor.NotConvergedError
// naming the iterations and the gradient or change reached; the model
// predicts finite values. Adam runs a fixed number of steps and has no
// convergence to miss.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	ctx := context.Background()
	x, y := line(12)
	labels := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	three := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	prediction := func(p *gp.Prediction, err error) [][]float64 {
		require.NoError(t, err)
		return [][]float64{p.Mean.Values(), p.Var.Values()}
	}
	cases := []struct {
		name, op string
		fit      func() ([][]float64, error)
	}{
		{"exact", "gp.FitExact", func() ([][]float64, error) {
			m, err := gp.FitExact(ctx, x, y, gp.ExactOptions{Kernel: kernel.NewRBF(3), MaxIter: 1})
			require.NotNil(t, m)
			require.NotEqual(t, 3.0, m.Hyperparam("rbf.lengthscale").Value(), "the one iteration moved the lengthscale")
			return prediction(m.Predict(x)), err
		}},
		{"sparse", "gp.FitSparse", func() ([][]float64, error) {
			m, err := gp.FitSparse(ctx, x, y, gp.SparseOptions{Kernel: kernel.NewRBF(3), MaxIter: 1})
			require.NotNil(t, m)
			return prediction(m.Predict(x)), err
		}},
		{"classifier", "gp.FitClassifier", func() ([][]float64, error) {
			m, err := gp.FitClassifier(ctx, x, labels, gp.ClassifierOptions{Kernel: kernel.NewRBF(3), MaxIter: 1})
			require.NotNil(t, m)
			p, perr := m.Predict(x)
			require.NoError(t, perr)
			return [][]float64{p.Mean, p.Var, p.Prob}, err
		}},
		{"classifier's Newton mode", "gp.Classifier (Newton)", func() ([][]float64, error) {
			m, err := gp.NewClassifier(x, labels, gp.ClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.5), 9), MaxNewton: 1})
			require.NoError(t, err)
			mode, merr := m.Mode()
			p, err := m.Predict(x)
			require.Equal(t, merr, err, "Mode and Predict report the same Newton run")
			require.NotNil(t, p)
			return [][]float64{mode, p.Mean, p.Var, p.Prob}, err
		}},
		{"multi-class classifier", "gp.FitMultiClassifier", func() ([][]float64, error) {
			m, err := gp.FitMultiClassifier(ctx, x, three, gp.MultiClassifierOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.3), 4), MaxNewton: 1})
			require.NotNil(t, m)
			return [][]float64{m.LatentMean(x).Values(), m.Probs(), {m.LogMarginalLikelihood()}}, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			nc := numtest.Unconverged(t, err, c.op, out...)
			if nc != nil && !(nc.Change > 0) {
				t.Errorf("%s: the error does not say what was reached: %v", c.op, nc)
			}
		})
	}
	_, err := gp.FitExact(ctx, x, y, gp.ExactOptions{Kernel: kernel.NewRBF(3), Optimizer: "adam", MaxIter: 5})
	require.NoError(t, err)
}

// Degenerate but valid data, duplicated inputs, gives finite predictions:
// the noise keeps the covariance positive definite.
func TestExactOnDuplicateInputsIsFinite(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 0, 1, 1, 2}, 6, 1)
	y := tensor.FromFloat64s([]float64{1, 1.2, 0.8, 2, 2.1, 0}, 6)
	m, err := gp.FitExact(context.Background(), x, y, gp.ExactOptions{Kernel: kernel.NewRBF(1)})
	require.NoError(t, err)
	p, err := m.Predict(x)
	require.NoError(t, err)
	numtest.Finite(t, "mean", p.Mean.Values())
	numtest.Finite(t, "variance", p.Var.Values())
}
