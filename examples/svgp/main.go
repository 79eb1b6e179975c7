// Command svgp fits stochastic variational Gaussian processes (Hensman,
// Fusi and Lawrence 2013, "Gaussian Processes for Big Data"; Hensman,
// Matthews and Ghahramani 2015 for classification) on minibatches to two
// data sets shipped with Gradus:
//
//   - the Mauna Loa CO2 record (monthly means 1959–1997), a regression with
//     a Gaussian likelihood and the kernel c₁·RBF + c₂·Periodic·RBF (a
//     smooth trend and a yearly cycle whose shape drifts; the period is
//     held at one year), on y standardised by the training mean and
//     standard deviation;
//   - the breast-cancer set (569 tumours, 30 standardised features), a
//     binary classification with a Bernoulli likelihood (logit or probit
//     link, expectations by Gauss–Hermite quadrature).
//
// Each set is split 80/20 into training and test rows (-seed). The
// inducing inputs start at k-means centres of the training inputs and are
// learnt with the hyperparameters and q(u) by Adam on the minibatch ELBO
// scaled to the data size (or, with -natgrad, q(u) by natural-gradient
// steps). The program prints the ELBO, the test RMSE (ppm) or accuracy and
// the negative log predictive density per test point, and draws the CO2
// fit with its ±2σ band and the inducing inputs to -out/co2.png and both
// ELBO traces to -out/elbo.png.
//
//	go run ./examples/svgp [-inducing 120] [-class-inducing 40] [-batch 64] [-steps 2000] [-lr 0.02] [-natgrad 0] [-link logit] [-seed 1] [-data co2.csv] [-out out/svgp] [-json] [-quiet]
package main

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/metrics"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	Inducing      int     `flag:"inducing" help:"inducing inputs for the CO2 series"`
	ClassInducing int     `flag:"class-inducing" help:"inducing inputs for the breast-cancer classifier"`
	Batch         int     `flag:"batch" help:"minibatch size"`
	Steps         int     `flag:"steps" help:"optimiser steps per fit"`
	LR            float64 `flag:"lr" help:"Adam's learning rate"`
	NatGrad       float64 `flag:"natgrad" help:"natural-gradient step size for q(u) (0: q by Adam)"`
	Link          string  `flag:"link" help:"classification link: logit or probit"`
}

// result is what -json prints.
type result struct {
	CO2ELBO        float64 `json:"co2_elbo"` // full-data ELBO at the end (standardised y)
	CO2RMSE        float64 `json:"co2_test_rmse"`
	CO2NLPD        float64 `json:"co2_test_nlpd"` // per test point, y in ppm
	CO2Seconds     float64 `json:"co2_seconds"`
	CO2Train       int     `json:"co2_n_train"`
	CancerELBO     float64 `json:"cancer_elbo"`
	CancerAccuracy float64 `json:"cancer_test_accuracy"`
	CancerNLPD     float64 `json:"cancer_test_nlpd"` // the test log loss
	CancerSeconds  float64 `json:"cancer_seconds"`
	CancerTrain    int     `json:"cancer_n_train"`
	Plot           string  `json:"plot"`
	ELBOPlot       string  `json:"elbo_plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "svgp", Data: "co2.csv", DataUsage: "CO2 CSV with decimal_year and ppm columns (embedded name or path)"}
	return cli.Configured(p, config{Inducing: 120, ClassInducing: 40, Batch: 64, Steps: 2000, LR: 0.02, Link: "logit"}, run)
}

// run fits both models and writes the pictures.
func run(c config, env *cli.Env) (res result, err error) {
	if c.Inducing < 1 || c.ClassInducing < 1 || c.Batch < 1 || c.Steps < 1 || !(c.LR > 0) || c.NatGrad < 0 || c.NatGrad > 1 {
		return res, cli.BadFlagf("need -inducing, -class-inducing, -batch and -steps ≥ 1, -lr > 0 and 0 ≤ -natgrad ≤ 1")
	}
	link := gp.Logit
	switch c.Link {
	case "logit":
	case "probit":
		link = gp.Probit
	default:
		return res, cli.BadFlagf("-link %q: want logit or probit", c.Link)
	}
	co2, err := fitCO2(c, env, &res)
	if err != nil {
		return res, fmt.Errorf("CO2: %w", err)
	}
	cancer, err := fitCancer(c, link, env, &res)
	if err != nil {
		return res, fmt.Errorf("breast cancer: %w", err)
	}
	res.ELBOPlot = env.Path("elbo.png")
	trace := func(title string, tr []float64) plot.Panel {
		return plot.Panel{Title: title, XLabel: "step", YLabel: "minibatch ELBO",
			Curves: []plot.Curve{{Name: "ELBO", Y: tr, Style: plot.Line}}}
	}
	if err := plot.WritePNG(res.ELBOPlot, trace("CO2 (Gaussian)", co2), trace("breast cancer (Bernoulli "+c.Link+")", cancer)); err != nil {
		return res, err
	}
	env.Printf("wrote %s and %s\n", res.Plot, res.ELBOPlot)
	return res, nil
}

// inducing returns k-means centres of the rows of x as starting inducing
// inputs.
func inducing(env *cli.Env, x *tensor.Tensor, k int) (*tensor.Tensor, error) {
	km, err := cluster.FitKMeans(env.Context(), x, cluster.KMeansOptions{K: min(k, x.Shape()[0]), Restarts: 2, Seed: env.Seed})
	if err != nil {
		return nil, err
	}
	return km.Centers, nil
}

// progress prints every 200th step.
func progress(env *cli.Env, name string) func(gp.SVGPEvent) {
	return func(e gp.SVGPEvent) {
		if e.Step == 1 || e.Step%200 == 0 {
			env.Printf("%s %v\n", name, e)
		}
	}
}

// fullELBO returns the ELBO on all training rows.
func fullELBO(m *gp.SVGP) (float64, error) {
	e, err := m.ELBO(graph.New(), nil)
	if err != nil {
		return 0, err
	}
	return e.Item(), nil
}

// fitCO2 fits the CO2 series and draws the fit; it returns the ELBO trace.
func fitCO2(c config, env *cli.Env, res *result) ([]float64, error) {
	tab, err := data.LoadCSV(env.Data)
	if err != nil {
		return nil, err
	}
	ix, iy := tab.Column("decimal_year"), tab.Column("ppm")
	if ix < 0 || iy < 0 || len(tab.Rows) < 10 {
		return nil, fmt.Errorf("%s: need columns decimal_year and ppm and at least 10 rows", env.Data)
	}
	n := len(tab.Rows)
	xs, ys := make([]float64, n), make([]float64, n)
	for i, r := range tab.Rows {
		xs[i], ys[i] = r[ix], r[iy]
	}
	train, test := data.TrainTestSplit(n, 0.2, env.Seed)
	pick := func(v []float64, idx []int) []float64 {
		out := make([]float64, len(idx))
		for i, j := range idx {
			out[i] = v[j]
		}
		return out
	}
	xTr, yTr, xTe, yTe := pick(xs, train), pick(ys, train), pick(xs, test), pick(ys, test)
	mean, sd := stat.PopMeanStdDev(yTr, nil)
	yStd := make([]float64, len(yTr))
	for i, v := range yTr {
		yStd[i] = (v - mean) / sd
	}
	x := tensor.FromFloat64s(xTr, len(xTr), 1)
	z, err := inducing(env, x, c.Inducing)
	if err != nil {
		return nil, err
	}
	trend := kernel.Named("trend", kernel.NewScale(kernel.NewRBF(50), 1))
	cycle := kernel.NewPeriodic(1, 1)
	cycle.Period().SetFixed(true) // one year
	periodic := kernel.Named("seasonal", cycle)
	decay := kernel.Named("decay", kernel.NewRBF(100))
	seasonal := kernel.NewScale(kernel.NewProduct(periodic, decay), 0.05)
	seasonal.Variance().SetName("seasonal.variance")
	start := time.Now()
	m, err := gp.FitSVGP(env.Context(), x, tensor.FromFloat64s(yStd, len(yStd)), gp.SVGPOptions{
		Kernel: kernel.NewSum(trend, seasonal), Likelihood: gp.NewGaussianLikelihood(0.01), Inducing: z,
		BatchSize: c.Batch, Steps: c.Steps, LR: c.LR, NaturalGradient: c.NatGrad, Seed: env.Seed, Progress: progress(env, "co2")})
	if err != nil {
		return nil, err
	}
	res.CO2Seconds, res.CO2Train = time.Since(start).Seconds(), len(xTr)
	if res.CO2ELBO, err = fullELBO(m); err != nil {
		return nil, err
	}
	pred, err := m.Predict(tensor.FromFloat64s(xTe, len(xTe), 1))
	if err != nil {
		return nil, err
	}
	yTeStd := make([]float64, len(yTe))
	for i, v := range yTe {
		yTeStd[i] = (v - mean) / sd
	}
	lpd, err := m.LogPredictiveDensity(tensor.FromFloat64s(xTe, len(xTe), 1), yTeStd)
	if err != nil {
		return nil, err
	}
	se, nlpd := 0.0, 0.0
	for i, v := range pred.Mean.Values() {
		d := v*sd + mean - yTe[i]
		se += d * d
		nlpd -= lpd[i] - math.Log(sd) // the density of y in ppm
	}
	res.CO2RMSE, res.CO2NLPD = math.Sqrt(se/float64(len(yTe))), nlpd/float64(len(yTe))
	env.Printf("co2: %d inducing inputs, %d training points, %.1f s: ELBO %.2f, test RMSE %.3f ppm, NLPD %.3f\n",
		z.Shape()[0], len(xTr), res.CO2Seconds, res.CO2ELBO, res.CO2RMSE, res.CO2NLPD)
	res.Plot = env.Path("co2.png")
	return m.Trace(), plotCO2(res.Plot, m, xTr, yTr, xTe, yTe, mean, sd)
}

// plotCO2 draws the posterior mean and ±2σ band of a new observation on a
// monthly grid, the training and test points, and the inducing inputs at
// the posterior mean.
func plotCO2(path string, m *gp.SVGP, xTr, yTr, xTe, yTe []float64, mean, sd float64) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range append(append([]float64(nil), xTr...), xTe...) {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	grid := make([]float64, 0, int((hi-lo)*24)+1)
	for v := lo; v <= hi; v += 1.0 / 24 {
		grid = append(grid, v)
	}
	pred, err := m.Predict(tensor.FromFloat64s(grid, len(grid), 1))
	if err != nil {
		return err
	}
	mu, band := make([]float64, len(grid)), plot.Band{Name: "±2σ", X: grid, Lo: make([]float64, len(grid)), Hi: make([]float64, len(grid))}
	for i, v := range pred.Mean.Values() {
		s := 2 * math.Sqrt(pred.NoisyVar.Values()[i]) * sd
		mu[i] = v*sd + mean
		band.Lo[i], band.Hi[i] = mu[i]-s, mu[i]+s
	}
	zs := m.Inducing().Values()
	zp, err := m.Predict(tensor.FromFloat64s(zs, len(zs), 1))
	if err != nil {
		return err
	}
	zy := zp.Mean.Values()
	for i := range zy {
		zy[i] = zy[i]*sd + mean
	}
	curves := []plot.Curve{
		{Name: "training", X: xTr, Y: yTr, Style: plot.Scatter},
		{Name: "test", X: xTe, Y: yTe, Style: plot.Scatter},
		{Name: "posterior mean", X: grid, Y: mu, Style: plot.Line},
		{Name: "inducing inputs", X: zs, Y: zy, Style: plot.Rings},
	}
	whole := plot.Panel{Title: fmt.Sprintf("SVGP on the Mauna Loa CO2 record: %d inducing inputs", len(zs)),
		XLabel: "year", YLabel: "CO2 (ppm)", Bands: []plot.Band{band}, Curves: curves}
	// The zoom shows the last four years: the yearly cycle, the band and
	// where the inducing inputs sit.
	zoom := plot.Panel{Title: "the last four years", XLabel: "year", YLabel: "CO2 (ppm)"}
	from := hi - 4
	window := func(x, y []float64) (wx, wy []float64) {
		for i := range x {
			if x[i] >= from {
				wx, wy = append(wx, x[i]), append(wy, y[i])
			}
		}
		return wx, wy
	}
	var b plot.Band
	b.Name = band.Name
	for i, v := range grid {
		if v >= from {
			b.X, b.Lo, b.Hi = append(b.X, v), append(b.Lo, band.Lo[i]), append(b.Hi, band.Hi[i])
		}
	}
	zoom.Bands = []plot.Band{b}
	for _, cv := range curves {
		cv.X, cv.Y = window(cv.X, cv.Y)
		zoom.Curves = append(zoom.Curves, cv)
	}
	return plot.WritePNG(path, whole, zoom)
}

// fitCancer fits the classifier; it returns the ELBO trace.
func fitCancer(c config, link gp.Link, env *cli.Env, res *result) ([]float64, error) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	if err != nil {
		return nil, err
	}
	train, test := data.TrainTestSplit(len(labels), 0.2, env.Seed)
	pick := func(idx []int) (*tensor.Tensor, []int) {
		return tensor.IndexSelect(x, 0, idx), data.GatherLabels(nil, labels, idx)
	}
	xTr, lTr := pick(train)
	xTe, lTe := pick(test)
	data.Standardise(xTr).Apply(xTe) // the training rows' statistics only
	z, err := inducing(env, xTr, c.ClassInducing)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := gp.FitSVGPClassifier(env.Context(), xTr, lTr, gp.SVGPOptions{
		Kernel: kernel.NewScale(kernel.NewRBF(math.Sqrt(float64(x.Shape()[1]))), 1), Likelihood: gp.NewBernoulliLikelihood(link, 20),
		Inducing: z, BatchSize: c.Batch, Steps: c.Steps, LR: c.LR, NaturalGradient: c.NatGrad, Seed: env.Seed, Progress: progress(env, "cancer")})
	if err != nil {
		return nil, err
	}
	res.CancerSeconds, res.CancerTrain = time.Since(start).Seconds(), len(lTr)
	if res.CancerELBO, err = fullELBO(m.Model()); err != nil {
		return nil, err
	}
	proba, err := m.PredictProba(xTe)
	if err != nil {
		return nil, err
	}
	pred, err := m.Predict(xTe)
	if err != nil {
		return nil, err
	}
	if res.CancerAccuracy, err = metrics.Accuracy(pred, lTe); err != nil {
		return nil, err
	}
	if res.CancerNLPD, err = metrics.LogLoss(proba, lTe); err != nil {
		return nil, err
	}
	env.Printf("cancer: %d inducing inputs, %d training points, %.1f s: ELBO %.2f, test accuracy %.3f, NLPD %.3f\n",
		z.Shape()[0], len(lTr), res.CancerSeconds, res.CancerELBO, res.CancerAccuracy, res.CancerNLPD)
	return m.Model().Trace(), nil
}
