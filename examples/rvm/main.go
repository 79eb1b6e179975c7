// Command rvm fits a relevance vector machine (Tipping 2001, "Sparse
// Bayesian learning and the relevance vector machine") to Tipping's sinc
// toy problem: 100 noisy samples of sin(x)/x on [−10, 10] (Gaussian
// noise, σ = 0.1) with an RBF basis function on every input plus a bias.
// Evidence maximisation prunes all but a handful of basis functions.
// Beside it, an ε-SVR (package svm) on the
// same kernel shows the contrast Tipping drew: similar error, many more
// support vectors. It prints the relevance vectors, the estimated noise
// and the errors against the noiseless function, and draws a PNG with the
// data, the RVM's predictive mean ± 2 sd and the relevance vectors ringed
// (fit.png in -out).
//
//	go run ./examples/rvm [-n 100] [-noise 0.1] [-lengthscale 1.6] [-seed 1] [-out out/rvm] [-json] [-quiet]
package main

import (
	"errors"
	"math"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/learn/bayeslinear"
	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

type config struct {
	N           int     `flag:"n" help:"training points"`
	Noise       float64 `flag:"noise" help:"noise standard deviation"`
	Ell         float64 `flag:"lengthscale" help:"RBF lengthscale of the basis functions"`
	SVRCost     float64
	SVREpsilon  float64
	GridDensity int
}

type result struct {
	RelevanceVectors []float64 `json:"relevance_vectors"` // the inputs whose basis functions were kept
	Bias             bool      `json:"bias_kept"`         // whether the bias column was kept
	NoiseSD          float64   `json:"noise_sd"`
	RMSE             float64   `json:"rmse"` // against the noiseless sinc on a grid
	SVRSupport       int       `json:"svr_support_vectors"`
	SVRRMSE          float64   `json:"svr_rmse"`
	Plot             string    `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "rvm"}, config{N: 100, Noise: 0.1, Ell: 1.6, SVRCost: 1, SVREpsilon: 0.1, GridDensity: 401}, run)
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(x) / x
}

func run(cfg config, env *cli.Env) (res result, err error) {
	if cfg.N < 2 || !(cfg.Noise >= 0) || !(cfg.Ell > 0) {
		return res, cli.BadFlagf("need -n ≥ 2, -noise ≥ 0 and -lengthscale > 0, got %d, %g, %g", cfg.N, cfg.Noise, cfg.Ell)
	}
	rng := tensor.NewRNG(env.Seed)
	xs, y := make([]float64, cfg.N), make([]float64, cfg.N)
	for i := range xs {
		xs[i] = -10 + 20*float64(i)/float64(cfg.N-1)
		y[i] = sinc(xs[i]) + cfg.Noise*rng.NormFloat64()
	}
	kernel := kernel.NewRBF(cfg.Ell)
	train := tensor.FromFloat64s(xs, cfg.N, 1)
	// design is [1, K(q, x)]: a bias and one basis function per input.
	design := func(q []float64) (*tensor.Tensor, error) {
		var k *tensor.Tensor
		err := func() (err error) {
			defer tensor.Recover(&err)
			g := graph.New()
			k = kernel.K(g.Const(tensor.FromFloat64s(q, len(q), 1)), g.Const(train)).Value()
			return nil
		}()
		if err != nil {
			return nil, err
		}
		return tensor.Concat(1, tensor.Ones(tensor.Float64, len(q), 1), k), nil
	}
	phi, err := design(xs)
	if err != nil {
		return res, err
	}
	r, err := bayeslinear.FitRVM(env.Context(), phi, tensor.FromFloat64s(y, len(y)), bayeslinear.RVMOptions{})
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) { // the evidence still creeping up is a usable fit
		return res, err
	}
	res.NoiseSD = 1 / math.Sqrt(r.Beta)
	for _, c := range r.Relevant {
		if c == 0 {
			res.Bias = true
			continue
		}
		res.RelevanceVectors = append(res.RelevanceVectors, xs[c-1])
	}
	grid := make([]float64, cfg.GridDensity)
	for i := range grid {
		grid[i] = -10 + 20*float64(i)/float64(len(grid)-1)
	}
	gphi, err := design(grid)
	if err != nil {
		return res, err
	}
	mean, variance := r.Predict(gphi).Float64s(), r.PredictVariance(gphi).Float64s()
	svr, err := svm.FitSVR(env.Context(), train, tensor.FromFloat64s(y, len(y)), svm.SVROptions{Kernel: kernel, C: cfg.SVRCost, Epsilon: cfg.SVREpsilon, Tol: 1e-6})
	if err != nil {
		return res, err
	}
	res.SVRSupport = len(svr.Support)
	svrMean := svr.Predict(tensor.FromFloat64s(grid, len(grid), 1)).Values()
	for i, g := range grid {
		res.RMSE += (mean[i] - sinc(g)) * (mean[i] - sinc(g))
		res.SVRRMSE += (svrMean[i] - sinc(g)) * (svrMean[i] - sinc(g))
	}
	res.RMSE = math.Sqrt(res.RMSE / float64(len(grid)))
	res.SVRRMSE = math.Sqrt(res.SVRRMSE / float64(len(grid)))
	env.Printf("RVM on %d noisy sinc samples (σ = %g), RBF basis ℓ = %g plus a bias: %d relevance vectors at x = %.2f (bias kept: %v) after %d iterations\n",
		cfg.N, cfg.Noise, cfg.Ell, len(res.RelevanceVectors), res.RelevanceVectors, res.Bias, r.Iterations)
	env.Printf("estimated noise sd %.4f; RMSE against sin(x)/x %.4f\n", res.NoiseSD, res.RMSE)
	env.Printf("ε-SVR (C = %g, ε = %g) on the same kernel: %d support vectors, RMSE %.4f\n", cfg.SVRCost, cfg.SVREpsilon, res.SVRSupport, res.SVRRMSE)
	res.Plot = env.Path("fit.png")
	if err := drawFit(res.Plot, xs, y, grid, mean, variance, r.Relevant); err != nil {
		return res, err
	}
	env.Println("plot:", res.Plot)
	return res, nil
}

// drawFit draws the data, sin(x)/x, the RVM's mean ± 2 sd and the
// relevance vectors ringed.
func drawFit(path string, xs, y, grid, mean, variance []float64, relevant []int) error {
	truth, lo, hi := make([]float64, len(grid)), make([]float64, len(grid)), make([]float64, len(grid))
	for i, g := range grid {
		truth[i] = sinc(g)
		lo[i], hi[i] = mean[i]-2*math.Sqrt(variance[i]), mean[i]+2*math.Sqrt(variance[i])
	}
	rv := plot.Curve{Name: "relevance vectors", Style: plot.Rings}
	for _, c := range relevant {
		if c > 0 {
			rv.X, rv.Y = append(rv.X, xs[c-1]), append(rv.Y, y[c-1])
		}
	}
	return plot.WritePNG(path, plot.Panel{Title: "RVM on the sinc toy problem", XLabel: "x", YLabel: "y",
		Bands: []plot.Band{{Name: "±2 sd", X: grid, Lo: lo, Hi: hi}},
		Curves: []plot.Curve{{Name: "RVM mean", X: grid, Y: mean, Style: plot.Line}, {Name: "sin(x)/x", X: grid, Y: truth, Style: plot.Line},
			{Name: "data", X: xs, Y: y, Style: plot.Scatter}, rv}})
}
