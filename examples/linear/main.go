// Command linear fits the linear regressions of package learn/linear to
// scikit-learn's diabetes set (442 patients, ten centred and scaled baseline
// variables, the disease progression a year later): least squares and
// ridge scored by R² on a seeded test split, the lasso's regularisation
// path (path.png: each coefficient against log₁₀ α), the elastic net with
// its α chosen on a validation split carved out of the training rows, and
// the median and 90 % quantile regression lines of the target against the
// body-mass index drawn over the scatter (quantile.png).
//
//	go run ./examples/linear [-test 0.2] [-ridge 0.1] [-l1ratio 0.5] [-alphas 100] [-seed 1] [-out out/linear] [-json] [-quiet]
//
// -json prints {"least_squares_r2", "ridge_r2", "elastic_net_alpha",
// "elastic_net_r2", "path_alphas", "path_nonzero", "quantiles", ...}: the
// R² are on the test rows; path_nonzero counts the lasso's non-zero
// weights at each α of the path; each quantile line reports its slope,
// intercept and the share of patients below it (close to τ).
package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/learn/linear"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	Test    float64 `flag:"test" help:"share of the rows held out for the test R²"`
	Ridge   float64 `flag:"ridge" help:"ridge penalty α"`
	L1Ratio float64 `flag:"l1ratio" help:"the elastic net's L1 share ρ ∈ (0, 1]"`
	Alphas  int     `flag:"alphas" help:"points on the lasso path and on the elastic net's α grid"`
}

// quantileLine is one quantile regression of the target on BMI.
type quantileLine struct {
	Tau       float64 `json:"tau"`
	Slope     float64 `json:"slope"` // progression per kg/m²
	Intercept float64 `json:"intercept"`
	Below     float64 `json:"share_below"` // patients with y ≤ the line
}

// result is what -json prints.
type result struct {
	Train         int            `json:"n_train"`
	Test          int            `json:"n_test"`
	Features      []string       `json:"features"`
	LeastSquares  float64        `json:"least_squares_r2"`
	Ridge         float64        `json:"ridge_r2"`
	RidgeAlpha    float64        `json:"ridge_alpha"`
	ENetAlpha     float64        `json:"elastic_net_alpha"`
	ENetValR2     float64        `json:"elastic_net_validation_r2"`
	ENet          float64        `json:"elastic_net_r2"`
	ENetNonzero   int            `json:"elastic_net_nonzero"`
	PathAlphas    []float64      `json:"path_alphas"`
	PathNonzero   []int          `json:"path_nonzero"`
	PathFirstIn   string         `json:"path_first_feature"` // the first weight to leave zero
	Quantiles     []quantileLine `json:"quantiles"`
	PathPlot      string         `json:"path_plot"`
	QuantilePlot  string         `json:"quantile_plot"`
	LeastSqCoef   []float64      `json:"least_squares_coef"`
	LeastSqInterc float64        `json:"least_squares_intercept"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "linear", Data: "sklearn/diabetes.csv", DataUsage: "CSV of features with a target column (the diabetes set)"}
	return cli.Configured(p, config{Test: 0.2, Ridge: 0.1, L1Ratio: 0.5, Alphas: 100}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	switch {
	case !(c.Test > 0 && c.Test < 0.5):
		return res, cli.BadFlagf("-test must be in (0, 0.5), got %g", c.Test)
	case !(c.Ridge >= 0):
		return res, cli.BadFlagf("-ridge must be non-negative, got %g", c.Ridge)
	case !(c.L1Ratio > 0 && c.L1Ratio <= 1):
		return res, cli.BadFlagf("-l1ratio must be in (0, 1], got %g", c.L1Ratio)
	case c.Alphas < 2:
		return res, cli.BadFlagf("-alphas must be at least 2, got %d", c.Alphas)
	}
	table, err := data.LoadCSV(env.Data)
	if err != nil {
		return res, err
	}
	target := table.Column("target")
	if target < 0 {
		return res, fmt.Errorf("%s has no target column", env.Data)
	}
	for i, name := range table.Columns {
		if i != target {
			res.Features = append(res.Features, name)
		}
	}
	x, err := table.Select(res.Features...)
	if err != nil {
		return res, err
	}
	y, err := table.Select("target")
	if err != nil {
		return res, err
	}
	n := x.Shape()[0]
	y = tensor.Reshape(y, n)
	env.Printf("%s: %d patients, %d features %v\n", env.Data, n, len(res.Features), res.Features)

	train, test := data.TrainTestSplit(n, c.Test, env.Seed)
	res.Train, res.Test = len(train), len(test)
	xTr, yTr := tensor.IndexSelect(x, 0, train), tensor.IndexSelect(y, 0, train)
	xTe, yTe := tensor.IndexSelect(x, 0, test), tensor.IndexSelect(y, 0, test)
	r2 := func(pred, want *tensor.Tensor) float64 {
		v, err := metrics.R2(pred.Values(), want.Values())
		if err != nil {
			tensor.Fail("linear", "%v", err)
		}
		return v
	}

	ls, err := linear.FitLeastSquares(xTr, yTr, linear.LeastSquaresOptions{})
	if err != nil {
		return res, err
	}
	res.LeastSquares, res.LeastSqCoef, res.LeastSqInterc = r2(ls.Predict(xTe), yTe), ls.Coef, ls.Intercept
	env.Printf("least squares on %d rows: test R² %.4f (%d test rows)\n", len(train), res.LeastSquares, len(test))
	rd, err := linear.FitRidge(xTr, yTr, linear.RidgeOptions{Alpha: c.Ridge})
	if err != nil {
		return res, err
	}
	res.Ridge, res.RidgeAlpha = r2(rd.Predict(xTe), yTe), c.Ridge
	env.Printf("ridge α = %g: test R² %.4f\n", c.Ridge, res.Ridge)

	if err := elasticNet(c, env, &res, xTr, yTr, xTe, yTe, r2); err != nil {
		return res, err
	}
	if err := lassoPath(c, env, &res, x, y); err != nil {
		return res, err
	}
	return res, quantiles(env, &res, x, y)
}

// keep passes a fit that ran out of iterations (its result is usable),
// with a progress line, and returns any other error.
func keep(env *cli.Env, err error) error {
	if errors.Is(err, tensor.ErrNotConverged) {
		env.Println("warning:", err)
		return nil
	}
	return err
}

// elasticNet chooses α on a validation quarter of the training rows along
// an elastic-net path, then refits on all the training rows.
func elasticNet(c config, env *cli.Env, res *result, xTr, yTr, xTe, yTe *tensor.Tensor, r2 func(p, w *tensor.Tensor) float64) error {
	ctx := env.Context()
	fit, val := data.TrainTestSplit(xTr.Shape()[0], 0.25, env.Seed+1)
	xF, yF := tensor.IndexSelect(xTr, 0, fit), tensor.IndexSelect(yTr, 0, fit)
	xV, yV := tensor.IndexSelect(xTr, 0, val), tensor.IndexSelect(yTr, 0, val)
	path, err := linear.FitPath(ctx, xF, yF, linear.PathOptions{L1Ratio: c.L1Ratio, NumAlphas: c.Alphas})
	if err := keep(env, err); err != nil {
		return err
	}
	res.ENetValR2 = math.Inf(-1)
	for k, a := range path.Alphas {
		m := linear.ElasticNet{Coef: path.Coefs[k], Intercept: path.Intercepts[k]}
		if v := r2(m.Predict(xV), yV); v > res.ENetValR2 {
			res.ENetValR2, res.ENetAlpha = v, a
		}
	}
	m, err := linear.FitElasticNet(ctx, xTr, yTr, linear.ElasticNetOptions{Alpha: res.ENetAlpha, L1Ratio: c.L1Ratio})
	if err := keep(env, err); err != nil {
		return err
	}
	res.ENet = r2(m.Predict(xTe), yTe)
	for _, w := range m.Coef {
		if w != 0 {
			res.ENetNonzero++
		}
	}
	env.Printf("elastic net ρ = %g: α = %.4g chosen on %d validation rows (R² %.4f of %d α), test R² %.4f with %d non-zero weights\n",
		c.L1Ratio, res.ENetAlpha, len(val), res.ENetValR2, len(path.Alphas), res.ENet, res.ENetNonzero)
	return nil
}

// lassoPath fits the lasso path on every row and draws each coefficient
// against log₁₀ α.
func lassoPath(c config, env *cli.Env, res *result, x, y *tensor.Tensor) error {
	path, err := linear.FitPath(env.Context(), x, y, linear.PathOptions{NumAlphas: c.Alphas})
	if err := keep(env, err); err != nil {
		return err
	}
	res.PathAlphas = path.Alphas
	logA := make([]float64, len(path.Alphas))
	for k, a := range path.Alphas {
		logA[k] = math.Log10(a)
	}
	curves := make([]plot.Curve, len(res.Features))
	for j, name := range res.Features {
		curves[j] = plot.Curve{Name: name, X: logA, Y: make([]float64, len(logA)), Style: plot.Line}
	}
	for k, w := range path.Coefs {
		nz := 0
		for j, v := range w {
			curves[j].Y[k] = v
			if v != 0 {
				nz++
				if res.PathFirstIn == "" {
					res.PathFirstIn = res.Features[j]
				}
			}
		}
		res.PathNonzero = append(res.PathNonzero, nz)
	}
	last := len(path.Alphas) - 1
	env.Printf("lasso path: %d α from %.4g (no weights) to %.4g (%d non-zero); %s enters first\n",
		len(path.Alphas), path.Alphas[0], path.Alphas[last], res.PathNonzero[last], res.PathFirstIn)
	res.PathPlot, err = env.WritePNG("path.png", plot.Panel{Title: "lasso path on the diabetes set",
		XLabel: "log₁₀ α", YLabel: "coefficient", Curves: curves})
	return err
}

// quantiles fits the median and the 90 % quantile of the target against
// BMI and draws both lines over the scatter.
func quantiles(env *cli.Env, res *result, x, y *tensor.Tensor) error {
	j := -1
	for i, name := range res.Features {
		if name == "bmi" {
			j = i
		}
	}
	if j < 0 {
		return fmt.Errorf("%s has no bmi column", env.Data)
	}
	bmi := tensor.Slice(x, 1, j, j+1, 1).Contiguous()
	xs, ys := bmi.Values(), y.Values()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range xs {
		lo, hi = min(lo, v), max(hi, v)
	}
	curves := []plot.Curve{{Name: "patients", X: xs, Y: ys, Style: plot.Scatter}}
	for _, tau := range []float64{0.5, 0.9} {
		q, err := linear.FitQuantile(env.Context(), bmi, y, linear.QuantileOptions{Quantile: tau})
		if err := keep(env, err); err != nil {
			return err
		}
		line := quantileLine{Tau: tau, Slope: q.Coef[0], Intercept: q.Intercept}
		below := 0
		for i, v := range xs {
			if ys[i] <= line.Intercept+line.Slope*v+1e-9*math.Abs(ys[i]) {
				below++
			}
		}
		line.Below = float64(below) / float64(len(xs))
		res.Quantiles = append(res.Quantiles, line)
		env.Printf("quantile τ = %g: target ≈ %.2f + %.2f·bmi, %.1f%% of the patients on or below it\n",
			tau, line.Intercept, line.Slope, 100*line.Below)
		curves = append(curves, plot.Curve{Name: fmt.Sprintf("τ = %g", tau), X: []float64{lo, hi},
			Y: []float64{line.Intercept + line.Slope*lo, line.Intercept + line.Slope*hi}, Style: plot.Line})
	}
	var err error
	res.QuantilePlot, err = env.WritePNG("quantile.png", plot.Panel{Title: "quantile regression of disease progression on BMI",
		XLabel: "body-mass index (centred and scaled)", YLabel: "progression after one year", Curves: curves})
	return err
}
