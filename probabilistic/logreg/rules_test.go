package logreg

import (
	"errors"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// overlapping is 40 rows whose two classes overlap, so that no solver
// reaches the maximum in one iteration.
func overlapping() (*tensor.Tensor, []int) {
	x := tensor.NewRNG(3).Normal(tensor.Float64, 0, 1, 40, 2)
	v := x.Values()
	noise := tensor.NewRNG(4).Normal(tensor.Float64, 0, 1, 40).Values()
	y := make([]int, 40)
	for i := range y {
		if v[2*i]-v[2*i+1]+noise[i] > 0 {
			y[i] = 1
		}
	}
	return x, y
}

// Every solver out of iterations returns its last iterate with a
// *tensor.NotConvergedError, and so does the Laplace approximation formed
// there; their probabilities are finite. Separable classes under maximum
// likelihood have no maximum: ErrSeparable and a NotConvergedError both.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	x, y := overlapping()
	sep := tensor.FromFloat64s([]float64{0, 0, 1, 1, 3, 3, 4, 4}, 4, 2)
	type fitCase struct {
		name, op string
		fit      func() ([]float64, error)
	}
	var cases []fitCase
	for _, solver := range []string{LBFGS, Newton, IRLS} {
		cases = append(cases, fitCase{solver, "logreg.FitRegression", func() ([]float64, error) {
			m, err := FitRegression(ctx, x, y, RegressionOptions{Solver: solver, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return m.PredictProba(x).Values(), err
		}})
	}
	cases = append(cases, []fitCase{
		{"Laplace", "logreg.FitLaplace", func() ([]float64, error) {
			q, err := FitLaplace(ctx, x, y, LaplaceOptions{Alpha: 1, Solver: Newton, MaxIter: 1})
			if q == nil {
				return nil, err
			}
			return q.PredictProba(x).Values(), err
		}},
		{"separable", "logreg.FitRegression", func() ([]float64, error) {
			m, err := FitRegression(ctx, sep, []int{0, 0, 1, 1}, RegressionOptions{Solver: Newton})
			if !errors.Is(err, ErrSeparable) {
				t.Errorf("separable: %v does not wrap ErrSeparable", err)
			}
			if m == nil {
				return nil, err
			}
			return m.PredictProba(sep).Values(), err
		}},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out)
		})
	}
}

// Degenerate but valid data, a constant column or duplicated rows with
// both labels, gives finite probabilities with an L2 penalty.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{3, 0, 3, 1, 3, 2, 3, 4, 3, 3, 3, 5}, 6, 2),
		"duplicated rows": tensor.FromFloat64s([]float64{1, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1}, 6, 2),
	}
	y := []int{0, 1, 0, 1, 1, 0}
	for name, x := range data {
		for _, solver := range []string{LBFGS, Newton, IRLS} {
			t.Run(name+"/"+solver, func(t *testing.T) {
				m, err := FitRegression(ctx, x, y, RegressionOptions{Solver: solver, L2: 1})
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, solver, m.PredictProba(x).Values())
			})
		}
	}
}
