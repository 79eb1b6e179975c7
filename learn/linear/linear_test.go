package linear_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/internal/sktest"
	"github.com/gradus-ml/gradus/learn/linear"
	"github.com/gradus-ml/gradus/tensor"
)

// fixture holds scikit-learn's values, written by
// learn/internal/skfixtures/gen.py.
type fit struct {
	Coef      []float64 `json:"coef"`
	Intercept float64   `json:"intercept"`
	Pred      []float64 `json:"pred"`
	NIter     int       `json:"n_iter"`
	Objective float64   `json:"objective"`
}

type pathFix struct {
	Alphas     []float64   `json:"alphas"`
	Coefs      [][]float64 `json:"coefs"`
	Intercepts []float64   `json:"intercepts"`
}

type fixture struct {
	OLS              fit     `json:"ols"`
	Ridge            fit     `json:"ridge"`
	RidgeNoIntercept fit     `json:"ridge_nointercept"`
	Lasso            fit     `json:"lasso"`
	ENet             fit     `json:"enet"`
	LassoPath        pathFix `json:"lasso_path"`
	ENetPath         pathFix `json:"enet_path"`
	Quantile         fit     `json:"quantile"`
	Median           fit     `json:"median"`
}

// diabetes returns the (442, 10) diabetes features and targets.
func diabetes(t *testing.T) (*tensor.Tensor, *tensor.Tensor) {
	t.Helper()
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		t.Fatal(err)
	}
	x, err := tab.Select("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
	if err != nil {
		t.Fatal(err)
	}
	y, err := tab.Select("target")
	if err != nil {
		t.Fatal(err)
	}
	return x, tensor.Reshape(y, 442)
}

func TestLeastSquaresAndRidgeMatchSklearn(t *testing.T) {
	f := load(t)
	x, y := diabetes(t)
	ols, err := linear.FitLeastSquares(x, y, linear.LeastSquaresOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "ols coef", ols.Coef, f.OLS.Coef, 1e-6)
	sktest.Near(t, "ols intercept", []float64{ols.Intercept}, []float64{f.OLS.Intercept}, 1e-6)
	sktest.Near(t, "ols predict", ols.Predict(tensor.Slice(x, 0, 0, 5, 1)).Values(), f.OLS.Pred, 1e-6)

	r, err := linear.FitRidge(x, y, linear.RidgeOptions{Alpha: 1})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "ridge coef", r.Coef, f.Ridge.Coef, 1e-6)
	sktest.Near(t, "ridge intercept", []float64{r.Intercept}, []float64{f.Ridge.Intercept}, 1e-6)
	sktest.Near(t, "ridge predict", r.Predict(tensor.Slice(x, 0, 0, 5, 1)).Values(), f.Ridge.Pred, 1e-6)

	r0, err := linear.FitRidge(x, y, linear.RidgeOptions{Alpha: 0.5, NoIntercept: true})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "ridge no-intercept coef", r0.Coef, f.RidgeNoIntercept.Coef, 1e-6)
	if r0.Intercept != 0 {
		t.Fatalf("intercept %v without intercept", r0.Intercept)
	}
	// float32 data: the same fit to float32 rounding, predictions in float32.
	r32, err := linear.FitRidge(x.Cast(tensor.Float32), y.Cast(tensor.Float32), linear.RidgeOptions{Alpha: 1})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "ridge float32 coef", r32.Coef, f.Ridge.Coef, 1e-4)
	if p := r32.Predict(x.Cast(tensor.Float32)); p.DType() != tensor.Float32 {
		t.Fatalf("Predict on float32 gave %v", p.DType())
	}
}

func TestCoordinateDescentMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := diabetes(t)
	ctx := context.Background()
	l, err := linear.FitLasso(ctx, x, y, linear.LassoOptions{Alpha: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "lasso coef", l.Coef, f.Lasso.Coef, 1e-4)
	sktest.Near(t, "lasso intercept", []float64{l.Intercept}, []float64{f.Lasso.Intercept}, 1e-4)
	sktest.Near(t, "lasso predict", l.Predict(tensor.Slice(x, 0, 0, 5, 1)).Values(), f.Lasso.Pred, 1e-4)
	if l.Iterations != f.Lasso.NIter {
		t.Errorf("lasso ran %d passes, scikit-learn %d", l.Iterations, f.Lasso.NIter)
	}
	for j, c := range f.Lasso.Coef {
		if (c == 0) != (l.Coef[j] == 0) {
			t.Errorf("lasso coef %d = %v, scikit-learn %v: zeros must match exactly", j, l.Coef[j], c)
		}
	}
	e, err := linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{Alpha: 0.01, L1Ratio: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	sktest.Near(t, "enet coef", e.Coef, f.ENet.Coef, 1e-4)
	sktest.Near(t, "enet intercept", []float64{e.Intercept}, []float64{f.ENet.Intercept}, 1e-4)
	if e.Iterations != f.ENet.NIter {
		t.Errorf("enet ran %d passes, scikit-learn %d", e.Iterations, f.ENet.NIter)
	}
}

func TestPathMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := diabetes(t)
	for _, c := range []struct {
		rho  float64
		want pathFix
	}{{0, f.LassoPath}, {0.5, f.ENetPath}} {
		p, err := linear.FitPath(context.Background(), x, y, linear.PathOptions{L1Ratio: c.rho, NumAlphas: 8, Eps: 1e-2})
		if err != nil {
			t.Fatal(err)
		}
		sktest.Near(t, "alphas", p.Alphas, c.want.Alphas, 1e-12)
		for k := range p.Alphas {
			sktest.Near(t, "path coef", p.Coefs[k], c.want.Coefs[k], 1e-4)
		}
		sktest.Near(t, "path intercepts", p.Intercepts, c.want.Intercepts, 1e-4)
		for _, w := range p.Coefs[0] {
			if w != 0 {
				t.Fatalf("weights %v at α_max, want all zero", p.Coefs[0])
			}
		}
	}
}

// objective is scikit-learn's quantile-regression objective.
func objective(x, y *tensor.Tensor, coef []float64, b, tau, alpha float64) float64 {
	xv, yv, d := x.Values(), y.Values(), len(coef)
	s := 0.0
	for i, yi := range yv {
		r := yi - b
		for j, w := range coef {
			r -= xv[i*d+j] * w
		}
		s += max(tau*r, (tau-1)*r)
	}
	s /= float64(len(yv))
	for _, w := range coef {
		s += alpha * math.Abs(w)
	}
	return s
}

func TestQuantileMatchesSklearn(t *testing.T) {
	f := load(t)
	x, y := diabetes(t)
	qx := tensor.Slice(tensor.Slice(x, 0, 0, 120, 1), 1, 0, 4, 1)
	qy := tensor.Slice(y, 0, 0, 120, 1)
	for _, c := range []struct {
		tau, alpha float64
		want       fit
	}{{0.3, 0.002, f.Quantile}, {0.5, 0, f.Median}} {
		m, err := linear.FitQuantile(context.Background(), qx, qy, linear.QuantileOptions{Quantile: c.tau, Alpha: c.alpha})
		if err != nil {
			t.Fatal(err)
		}
		// The optimum is a vertex here; the interior point reaches it to 1e-6.
		sktest.Near(t, "quantile coef", m.Coef, c.want.Coef, 1e-6)
		sktest.Near(t, "quantile intercept", []float64{m.Intercept}, []float64{c.want.Intercept}, 1e-6)
		for j, w := range c.want.Coef {
			if (w == 0) != (m.Coef[j] == 0) {
				t.Errorf("τ=%v coef %d = %v, scikit-learn %v: zeros must match exactly", c.tau, j, m.Coef[j], w)
			}
		}
		want := objective(qx, qy, c.want.Coef, c.want.Intercept, c.tau, c.alpha)
		got := objective(qx, qy, m.Coef, m.Intercept, c.tau, c.alpha)
		if got > want*(1+1e-9) {
			t.Errorf("τ=%v objective %.12g above scikit-learn's %.12g", c.tau, got, want)
		}
	}
}

func TestNotConvergedAndCancelled(t *testing.T) {
	x, y := diabetes(t)
	l, err := linear.FitLasso(context.Background(), x, y, linear.LassoOptions{Alpha: 0.01, MaxIter: 2, Tol: 1e-12})
	var nc *tensor.NotConvergedError
	if !errors.As(err, &nc) || !errors.Is(err, tensor.ErrNotConverged) || l == nil || nc.Iterations != 2 {
		t.Fatalf("got %v, %v; want the model and a NotConvergedError after 2 passes", l, err)
	}
	q, err := linear.FitQuantile(context.Background(), x, y, linear.QuantileOptions{MaxIter: 2})
	if !errors.As(err, &nc) || q == nil {
		t.Fatalf("quantile: got %v, %v; want the model and a NotConvergedError", q, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fit: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	x, y := diabetes(t)
	nan := x.Clone()
	nan.SetAt(math.NaN(), 3, 2)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		fit  func() error
		want string
	}{
		{"NaN", func() error { _, err := linear.FitRidge(nan, y, linear.RidgeOptions{}); return err }, "linear.FitRidge: x[3, 2] is NaN"},
		{"negative alpha", func() error { _, err := linear.FitRidge(x, y, linear.RidgeOptions{Alpha: -1}); return err }, "linear.FitRidge: alpha -1 must be positive"},
		{"zero columns", func() error {
			_, err := linear.FitLasso(ctx, tensor.Zeros(tensor.Float64, 442, 0), y, linear.LassoOptions{})
			return err
		}, "linear.FitLasso: x has zero columns"},
		{"y length", func() error {
			_, err := linear.FitLeastSquares(x, tensor.Zeros(tensor.Float64, 3), linear.LeastSquaresOptions{})
			return err
		}, "linear.FitLeastSquares: y must have shape (442)"},
		{"L1 ratio", func() error {
			_, err := linear.FitElasticNet(ctx, x, y, linear.ElasticNetOptions{L1Ratio: 1.5})
			return err
		}, "linear.FitElasticNet: L1 ratio 1.5 must lie in (0, 1]"},
		{"quantile", func() error { _, err := linear.FitQuantile(ctx, x, y, linear.QuantileOptions{Quantile: 1}); return err }, "linear.FitQuantile: quantile 1 must lie in (0, 1)"},
		{"negative quantile alpha", func() error {
			_, err := linear.FitQuantile(ctx, x, y, linear.QuantileOptions{Alpha: -0.1})
			return err
		}, "linear.FitQuantile: alpha -0.1 must be non-negative"},
		{"path of constant y", func() error {
			_, err := linear.FitPath(ctx, x, tensor.Ones(tensor.Float64, 442), linear.PathOptions{})
			return err
		}, "linear.FitPath: Xᵀy is zero"},
	} {
		err := c.fit()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func load(t *testing.T) (f fixture) {
	sktest.Load(t, &f)
	return f
}
