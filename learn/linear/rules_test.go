package linear_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/linear"
	"github.com/gradus-ml/gradus/tensor"
)

// Every iterative fit out of passes returns its model so far with a
// *tensor.NotConvergedError, and that model predicts finite values.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	ctx := context.Background()
	x, y := diabetes(t)
	cases := []struct {
		name, op string
		fit      func() ([]float64, error)
	}{
		{"lasso", "linear.FitLasso", func() ([]float64, error) {
			m, err := linear.FitLasso(ctx, x, y, linear.LassoOptions{Alpha: 0.01, MaxIter: 1, Tol: 1e-12})
			if m == nil {
				return nil, err
			}
			return m.Predict(x).Values(), err
		}},
		{"elastic net", "linear.FitElasticNet", func() ([]float64, error) {
			m, err := linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{Alpha: 0.01, MaxIter: 1, Tol: 1e-12})
			if m == nil {
				return nil, err
			}
			return m.Predict(x).Values(), err
		}},
		{"path", "linear.FitPath", func() ([]float64, error) {
			p, err := linear.FitPath(ctx, x, y, linear.PathOptions{NumAlphas: 5, MaxIter: 1, Tol: 1e-12})
			if p == nil {
				return nil, err
			}
			var out []float64
			for _, c := range p.Coefs {
				out = append(out, c...)
			}
			return append(out, p.Intercepts...), err
		}},
		{"quantile", "linear.FitQuantile", func() ([]float64, error) {
			m, err := linear.FitQuantile(ctx, x, y, linear.QuantileOptions{MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return m.Predict(x).Values(), err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out)
		})
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 3, 2)
	y := tensor.FromFloat64s([]float64{1, 2, 3}, 3)
	cases := []struct {
		name, want string
		err        error
	}{
		{"ridge negative α", "-1", numtest.Err(linear.FitRidge(x, y, linear.RidgeOptions{Alpha: -1}))},
		{"lasso negative α", "-2", numtest.Err(linear.FitLasso(ctx, x, y, linear.LassoOptions{Alpha: -2}))},
		{"elastic net ρ above 1", "1.5", numtest.Err(linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{L1Ratio: 1.5}))},
		{"elastic net negative MaxIter", "-1", numtest.Err(linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{MaxIter: -1}))},
		{"path negative α in the grid", "alpha 1 is -1", numtest.Err(linear.FitPath(ctx, x, y, linear.PathOptions{Alphas: []float64{1, -1}}))},
		{"path Eps of 1", "Eps in (0, 1)", numtest.Err(linear.FitPath(ctx, x, y, linear.PathOptions{Eps: 1}))},
		{"quantile τ = 1", "1", numtest.Err(linear.FitQuantile(ctx, x, y, linear.QuantileOptions{Quantile: 1}))},
		{"quantile negative α", "-1", numtest.Err(linear.FitQuantile(ctx, x, y, linear.QuantileOptions{Alpha: -1}))},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
}

// Degenerate but valid data, a constant column, duplicated rows or
// identical rows, gives finite models.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	ctx := context.Background()
	y := tensor.FromFloat64s([]float64{1, 2, 2, 4, 3}, 5)
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{3, 0, 3, 1, 3, 2, 3, 4, 3, 3}, 5, 2),
		"duplicated rows": tensor.FromFloat64s([]float64{1, 2, 1, 2, 1, 2, 0, 5, 0, 5}, 5, 2),
		"identical rows":  tensor.Full(tensor.Float64, 2, 5, 2),
	}
	for name, x := range data {
		cases := []struct {
			name string
			fit  func() (predictor, error)
		}{
			{"least squares", func() (predictor, error) { return ifModel(linear.FitLeastSquares(x, y, linear.LeastSquaresOptions{})) }},
			{"ridge", func() (predictor, error) { return ifModel(linear.FitRidge(x, y, linear.RidgeOptions{})) }},
			{"lasso", func() (predictor, error) { return ifModel(linear.FitLasso(ctx, x, y, linear.LassoOptions{Alpha: 0.1})) }},
			{"elastic net", func() (predictor, error) {
				return ifModel(linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{Alpha: 0.1}))
			}},
			{"quantile", func() (predictor, error) { return ifModel(linear.FitQuantile(ctx, x, y, linear.QuantileOptions{})) }},
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				m, err := c.fit()
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, c.name, m.Predict(x).Values())
			})
		}
	}
}

// predictor is a fitted regression.
type predictor interface {
	Predict(*tensor.Tensor) *tensor.Tensor
}

// ifModel returns m as a predictor.
func ifModel[M predictor](m M, err error) (predictor, error) {
	return m, err
}

// A repeated column leaves least squares without a unique minimiser: the
// fit returns the one of least norm, which shares the column's weight
// equally between the two copies and predicts as the fit without the copy.
func TestLeastSquaresOfRepeatedColumnIsMinimumNorm(t *testing.T) {
	x, y := diabetes(t)
	dup := tensor.Concat(1, x, tensor.Slice(x, 1, 0, 1, 1))
	once, err := linear.FitLeastSquares(x, y, linear.LeastSquaresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	twice, err := linear.FitLeastSquares(dup, y, linear.LeastSquaresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := len(once.Coef)
	want := append(append([]float64{once.Coef[0] / 2}, once.Coef[1:]...), once.Coef[0]/2)
	numtest.CloseValues(t, want, twice.Coef, 1e-9)
	numtest.CloseValues(t, []float64{once.Intercept}, []float64{twice.Intercept}, 1e-9)
	if len(twice.Coef) != d+1 {
		t.Fatalf("%d weights for %d columns", len(twice.Coef), d+1)
	}
}
