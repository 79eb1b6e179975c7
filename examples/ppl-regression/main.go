// Command ppl-regression fits a robust linear regression with Student-t
// noise, and the same model with Gaussian noise, by stochastic variational
// inference on minibatches (package ppl): the plate over the rows draws
// -batch of the -n rows at each step and scales their log-likelihood by
// n/batch, so the data never have to fit one batch.
//
// The data are drawn (-seed) from y = 1 + xᵀw + ε with four standard
// normal features, w = (1.5, −2, 0.5, 0), ε ~ N(0, 0.5²), and a fraction
// -outliers of the rows shifted by N(0, 10²): the Gaussian fit's noise
// scale swells to cover them and its weights wander, while the Student-t
// fit (ν ~ Gamma(2, 0.1), Juárez and Steel 2010) keeps them near the
// truth. Priors: w, b ~ N(0, 5²), σ ~ Gamma(2, 2). Guides: AutoNormal.
//
// After the fits it draws -draws times from each guide and computes the
// log-likelihood of every row under every draw (ppl.LogLikelihood), the
// input of WAIC and PSIS-LOO; it reports the lppd and PSIS-LOO's elpd
// (inference.PSISLOO: Vehtari, Gelman and Gabry 2017) of each model and
// their difference with its standard error, and writes each row's log
// pointwise predictive density for both models to -out/loglik.csv, and
// the two loss curves to -out/elbo.png.
//
//	go run ./examples/ppl-regression [-n 20000] [-batch 256] [-steps 3000] [-lr 0.01] [-outliers 0.05] [-draws 200] [-seed 1] [-out out/ppl-regression] [-json] [-quiet]
package main

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/inference"
	"github.com/gradus-ml/gradus/probabilistic/ppl"
	"github.com/gradus-ml/gradus/tensor"
	"gonum.org/v1/gonum/stat"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	N        int     `flag:"n" help:"rows of the simulated data set"`
	Batch    int     `flag:"batch" help:"rows per SVI step (the plate's subsample)"`
	Steps    int     `flag:"steps" help:"SVI steps per model"`
	LR       float64 `flag:"lr" help:"Adam's learning rate"`
	Outliers float64 `flag:"outliers" help:"fraction of rows shifted by N(0, 10²)"`
	Draws    int     `flag:"draws" help:"guide draws for the log-likelihoods"`
}

// fit is one model's summary.
type fit struct {
	Weights    []float64 `json:"weights"` // the guide's mean, w then b
	MaxWeightE float64   `json:"max_weight_error"`
	Sigma      float64   `json:"sigma"`        // the guide's median
	Nu         float64   `json:"nu,omitempty"` // the guide's median
	LPPD       float64   `json:"lppd"`         // Σᵢ log mean_s p(yᵢ | θₛ)
	ELPDLOO    float64   `json:"elpd_loo"`     // PSIS-LOO's Σᵢ elpdᵢ
	LOOSE      float64   `json:"elpd_loo_se"`  // its standard error
	PLOO       float64   `json:"p_loo"`        // effective number of parameters
	BadK       int       `json:"bad_pareto_k"` // rows whose k̂ exceeds the threshold
	Seconds    float64   `json:"seconds"`
}

// result is what -json prints.
type result struct {
	StudentT fit `json:"student_t"`
	Gaussian fit `json:"gaussian"`
	// LOODiff is the Student-t model's elpd_loo minus the Gaussian's, and
	// LOODiffSE the standard error of that difference, √(N·Var(Δelpdᵢ)).
	LOODiff   float64 `json:"elpd_loo_diff"`
	LOODiffSE float64 `json:"elpd_loo_diff_se"`
	Rows      int     `json:"rows"`
	LogLik    string  `json:"loglik_csv"`
	Plot      string  `json:"plot"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "ppl-regression"},
		config{N: 20000, Batch: 256, Steps: 3000, LR: 0.01, Outliers: 0.05, Draws: 200}, run)
}

var trueW = []float64{1.5, -2, 0.5, 0}

const trueB = 1.0

// simulate draws the data set.
func simulate(n int, outliers float64, seed uint64) (x, y *tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	d := len(trueW)
	xs, ys := make([]float64, n*d), make([]float64, n)
	for i := range n {
		mean := trueB
		for j := range d {
			xs[i*d+j] = rng.NormFloat64()
			mean += xs[i*d+j] * trueW[j]
		}
		ys[i] = mean + 0.5*rng.NormFloat64()
		if rng.Float64() < outliers {
			ys[i] += 10 * rng.NormFloat64()
		}
	}
	return tensor.FromFloat64s(xs, n, d), tensor.FromFloat64s(ys, n)
}

// regression returns the model with Student-t (robust) or Gaussian noise,
// its plate subsampling batch rows (0: all).
func regression(x, y *tensor.Tensor, robust bool, batch int) ppl.Model {
	n, d := x.Shape()[0], x.Shape()[1]
	return func(c *ppl.Ctx) {
		w := ppl.Sample(c, "w", probabilistic.NewNormal(c.Const(tensor.Zeros(tensor.Float64, d)), c.Scalar(5)))
		b := ppl.Sample(c, "b", probabilistic.NewNormal(c.Scalar(0), c.Scalar(5)))
		sigma := ppl.Sample(c, "sigma", probabilistic.NewGamma(c.Scalar(2), c.Scalar(2)))
		var nu *graph.Node
		if robust {
			nu = ppl.Sample(c, "nu", probabilistic.NewGamma(c.Scalar(2), c.Scalar(0.1)))
		}
		ppl.Plate(c, "rows", n, ppl.PlateOptions{Subsample: batch}, func(idx []int) {
			xb, yb := x, y
			if len(idx) < n {
				xb, yb = tensor.IndexSelect(x, 0, idx), tensor.IndexSelect(y, 0, idx)
			}
			mean := graph.Add(graph.Sum(graph.Mul(c.Const(xb), w), []int{1}, false), b)
			var lik probabilistic.Distribution = probabilistic.NewNormal(mean, sigma)
			if robust {
				lik = probabilistic.NewStudentT(nu, mean, sigma)
			}
			ppl.Observe(c, "y", lik, yb)
		})
	}
}

// run fits both models and reports them.
func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.N < 2 || cfg.Batch < 1 || cfg.Batch > cfg.N || cfg.Steps < 1 || !(cfg.LR > 0) || cfg.Outliers < 0 || cfg.Outliers > 1 || cfg.Draws < 1 {
		return res, cli.BadFlagf("need -n ≥ 2, 1 ≤ -batch ≤ -n, -steps ≥ 1, -lr > 0, 0 ≤ -outliers ≤ 1 and -draws ≥ 1")
	}
	x, y := simulate(cfg.N, cfg.Outliers, env.Seed)
	res.Rows = cfg.N
	var (
		curves []plot.Panel
		lpd    [2]*tensor.Tensor
		loo    [2]*inference.ELPD
	)
	for k, robust := range []bool{true, false} {
		name, f := "Student-t", &res.StudentT
		if !robust {
			name, f = "Gaussian", &res.Gaussian
		}
		start := time.Now()
		model := regression(x, y, robust, cfg.Batch)
		fitted, err := ppl.FitSVI(env.Context(), model, ppl.AutoNormal(model, ppl.AutoGuideOptions{Seed: env.Seed}),
			ppl.SVIOptions{Steps: cfg.Steps, LR: cfg.LR, Seed: env.Seed})
		if err != nil {
			return res, fmt.Errorf("%s: %w", name, err)
		}
		f.Seconds = time.Since(start).Seconds()
		draws, err := fitted.Sample(cfg.Draws, env.Seed+1)
		if err != nil {
			return res, err
		}
		ll, err := ppl.LogLikelihood(regression(x, y, robust, 0), draws)
		if err != nil {
			return res, err
		}
		lpd[k] = ppl.PointwiseLPD(ll["y"])
		if loo[k], err = inference.PSISLOO(ll["y"]); err != nil {
			return res, fmt.Errorf("%s: PSIS-LOO: %w", name, err)
		}
		summarise(f, fitted, lpd[k], loo[k])
		env.Printf("%-9s  w %.3f  b %.3f  σ %.3f  max |w − truth| %.3f  lppd %.1f  elpd_loo %.1f ± %.1f (p_loo %.1f, %d rows with k̂ > %.2f)  (%d steps of %d rows, %.1f s)\n",
			name, f.Weights[:len(trueW)], f.Weights[len(trueW)], f.Sigma, f.MaxWeightE, f.LPPD, f.ELPDLOO, f.LOOSE, f.PLOO, f.BadK, loo[k].KThreshold, cfg.Steps, cfg.Batch, f.Seconds)
		if robust {
			env.Printf("           ν %.2f (guide median)\n", f.Nu)
		}
		curves = append(curves, plot.Panel{Title: name + " noise", XLabel: "step", YLabel: "−ELBO (minibatch estimate)",
			Curves: []plot.Curve{{Name: "−ELBO", Y: fitted.Loss, Style: plot.Line}}})
	}
	env.Printf("truth      w %v  b %.3f  σ 0.5 (and %.0f %% outliers)\n", trueW, trueB, 100*cfg.Outliers)
	res.LOODiff, res.LOODiffSE = elpdDiff(loo[0], loo[1])
	env.Printf("PSIS-LOO: Student-t − Gaussian elpd %.1f ± %.1f\n", res.LOODiff, res.LOODiffSE)
	if res.LogLik, err = writeLogLik(env.Path("loglik.csv"), lpd); err != nil {
		return res, err
	}
	res.Plot, err = env.WritePNG("elbo.png", curves...)
	return res, err
}

// elpdDiff returns Σᵢ (aᵢ − bᵢ) over the pointwise elpd of two models on
// the same rows and its standard error √(N·Var(aᵢ − bᵢ)) (Vehtari, Gelman
// and Gabry 2017, section 5).
func elpdDiff(a, b *inference.ELPD) (diff, se float64) {
	d := make([]float64, len(a.Pointwise))
	for i := range d {
		d[i] = a.Pointwise[i] - b.Pointwise[i]
		diff += d[i]
	}
	return diff, math.Sqrt(float64(len(d)) * stat.Variance(d, nil))
}

// summarise fills f from the fitted guide, the pointwise lpd and PSIS-LOO.
func summarise(f *fit, s *ppl.SVI, lpd *tensor.Tensor, loo *inference.ELPD) {
	f.ELPDLOO, f.LOOSE, f.PLOO, f.BadK = loo.Estimate, loo.SE, loo.P, len(loo.BadK())
	f.Weights = append(s.Params.Value("w_auto_loc").Values(), s.Params.Value("b_auto_loc").Item())
	for j, w := range trueW {
		f.MaxWeightE = math.Max(f.MaxWeightE, math.Abs(f.Weights[j]-w))
	}
	f.MaxWeightE = math.Max(f.MaxWeightE, math.Abs(f.Weights[len(trueW)]-trueB))
	f.Sigma = math.Exp(s.Params.Value("sigma_auto_loc").Item())
	if v := s.Params.Value("nu_auto_loc"); v != nil {
		f.Nu = math.Exp(v.Item())
	}
	for _, v := range lpd.Values() {
		f.LPPD += v
	}
}

// writeLogLik writes each row's log pointwise predictive density under
// both models.
func writeLogLik(path string, lpd [2]*tensor.Tensor) (string, error) {
	file, err := os.Create(path)
	if err != nil {
		return "", err
	}
	fmt.Fprintln(file, "row,student_t,gaussian")
	a, b := lpd[0].Values(), lpd[1].Values()
	for i := range a {
		fmt.Fprintf(file, "%d,%.6f,%.6f\n", i, a[i], b[i])
	}
	return path, file.Close()
}
