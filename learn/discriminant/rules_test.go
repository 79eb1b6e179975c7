package discriminant_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/discriminant"
	"github.com/gradus-ml/gradus/tensor"
)

// Discriminant analysis fits in closed form, with no iterations to run
// out of; invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5, 6, 8, 1, 0, 3, 3}, 6, 2)
	labels := []int{0, 1, 0, 1, 0, 1}
	cases := []struct {
		name, want string
		err        error
	}{
		{"LDA shrinkage above 1", "1.5", numtest.Err(discriminant.FitLinear(x, labels, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: 1.5}))},
		{"LDA too many components", "2 components, but at most min(classes − 1, d) = 1", numtest.Err(discriminant.FitLinear(x, labels, discriminant.LinearOptions{Components: 2}))},
		{"LDA negative tolerance", "-1", numtest.Err(discriminant.FitLinear(x, labels, discriminant.LinearOptions{Tol: -1}))},
		{"LDA negative prior", "prior 1 is -1", numtest.Err(discriminant.FitLinear(x, labels, discriminant.LinearOptions{Priors: []float64{2, -1}}))},
		{"QDA RegParam above 1", "2", numtest.Err(discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{RegParam: 2}))},
		{"QDA negative tolerance", "-0.1", numtest.Err(discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{Tol: -0.1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or duplicated rows, gives
// finite probabilities (QDA with RegParam, as its class covariances are
// singular there; scikit-learn warns and divides by zero without it).
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	labels := []int{0, 1, 0, 1, 0, 1}
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{3, 0, 3, 1, 3, 2, 3, 4, 3, 3, 3, 6}, 6, 2),
		"duplicated rows": tensor.FromFloat64s([]float64{1, 2, 5, 5, 1, 2, 5, 5, 2, 2, 6, 5}, 6, 2),
	}
	for name, x := range data {
		cases := []numtest.FitCase{
			{Name: "LDA SVD", Fit: func() ([]float64, error) {
				m, err := discriminant.FitLinear(x, labels, discriminant.LinearOptions{})
				if m == nil {
					return nil, err
				}
				return append(m.PredictProba(x).Values(), m.Transform(x).Values()...), err
			}},
			{Name: "LDA LSQR", Fit: func() ([]float64, error) {
				m, err := discriminant.FitLinear(x, labels, discriminant.LinearOptions{Solver: discriminant.LSQR, Shrinkage: 0.1})
				if m == nil {
					return nil, err
				}
				return m.PredictProba(x).Values(), err
			}},
			{Name: "QDA", Fit: func() ([]float64, error) {
				m, err := discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{RegParam: 0.1})
				if m == nil {
					return nil, err
				}
				return m.PredictProba(x).Values(), err
			}},
		}
		numtest.FiniteFits(t, name, cases)
	}
}

// Scoring a nil matrix is misuse named by the method, not a nil-pointer
// crash inside it.
func TestDecisionOfNilIsMisuse(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 1, 0, 1, 1, 0, 0, 2, 1, 1, 2}, 6, 2)
	labels := []int{0, 1, 0, 1, 0, 1}
	l, err := discriminant.FitLinear(x, labels, discriminant.LinearOptions{})
	require.NoError(t, err)
	q, err := discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{RegParam: 0.5})
	require.NoError(t, err)
	numtest.Misuse(t, "discriminant.Linear.Decision", numtest.Here(), func() { l.Decision(nil) }, "nil")
	numtest.Misuse(t, "discriminant.Quadratic.Decision", numtest.Here(), func() { q.Decision(nil) }, "nil")
}
