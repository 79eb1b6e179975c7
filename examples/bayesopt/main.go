// Command bayesopt maximises a noisy one-dimensional function by Bayesian
// optimisation with Gradus's GP: 3 random points, then each evaluation
// where the acquisition function, maximised by L-BFGS with gradients from
// autodiff through the GP posterior, is largest. The acquisitions read the
// fitted model: expected improvement, probability of improvement and the
// upper confidence bound its marginals; Thompson sampling (the maximiser
// of one posterior draw), max-value entropy search and q-EI (the Monte
// Carlo expected improvement of a batch, with -batch q points chosen
// together) its joint posterior. The function is
//
//	f(x) = x/15 − x²/50 − sin(x)/x  on [−5, 5]   (f(0) = −1, the limit)
//
// observed with N(0, 0.01²) noise; its maximum is f(4.0796) ≈ 0.1368.
// The program reports the maximiser of the final GP's posterior mean
// (observations are noisy, so the best observed point is a worse
// estimate) and draws the GP and the acquisition at the last step
// (step.png in -out).
//
//	go run ./examples/bayesopt [-seed 1] [-acq ei|pi|ucb|thompson|mes|qei] [-batch 1] [-evals 20] [-out out/bayesopt] [-json] [-quiet]
package main

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

func main() { cli.Main(program()) }

func program() cli.Program {
	// -seed: of the initial points, the noise and the optimiser.
	return cli.Configured(cli.Program{Name: "bayesopt"}, config{Acq: "ei", Evals: 20, Batch: 1}, run)
}

type config struct {
	Acq   string `flag:"acq" help:"acquisition function: ei, pi, ucb, thompson, mes or qei"`
	Evals int    `flag:"evals" help:"evaluations of f, the 3 initial points included"`
	Batch int    `flag:"batch" help:"points asked together per round (above 1 with qei or thompson)"`
}

// result holds the figures the program reports.
type result struct {
	BestX         float64 `json:"best_x"`          // maximiser of the final posterior mean
	BestY         float64 `json:"best_y"`          // the posterior mean there
	Evaluations   int     `json:"evaluations"`     // calls of f, initial points included
	BestObservedX float64 `json:"best_observed_x"` // the observation with the largest y
	BestObservedY float64 `json:"best_observed_y"`
	Acquisition   string  `json:"acquisition"`
	Plot          string  `json:"plot,omitempty"`
}

// objective is the noise-free function; f(0) is its limit −1.
func objective(x float64) float64 {
	if x == 0 {
		return -1
	}
	return x/15 - x*x/50 - math.Sin(x)/x
}

const (
	lo, hi     = -5.0, 5.0
	noiseStd   = 0.01
	initPoints = 3
)

func run(cfg config, env *cli.Env) (res result, err error) {
	a, err := gp.AcquisitionByName(cfg.Acq)
	if err != nil {
		return res, err
	}
	if cfg.Evals < initPoints+1 {
		return res, cli.BadFlagf("-evals %d: need more than the %d initial points", cfg.Evals, initPoints)
	}
	if cfg.Batch == 0 {
		cfg.Batch = 1
	}
	if _, ok := a.(gp.BatchAcquisition); cfg.Batch < 1 || (cfg.Batch > 1 && !ok) {
		return res, cli.BadFlagf("-batch %d: want 1, or more with -acq qei or thompson", cfg.Batch)
	}
	noise := tensor.NewRNG(env.Seed ^ 0x9e3779b97f4a7c15)
	f := func(x float64) float64 {
		res.Evaluations++
		return objective(x) + noiseStd*noise.NormFloat64()
	}
	// f is smooth (analytic), so the squared-exponential kernel suits it
	// better than the library's default Matérn 5⁄2: over seeds 1–10 with
	// EI the posterior-mean maximiser lands within 0.1 of 4.0796 every
	// time with the RBF, and 8 times in 10 with the Matérn.
	bo := gp.NewBayesOpt([][2]float64{{lo, hi}}, gp.BayesOptOptions{
		Acquisition:   a,
		InitialPoints: initPoints,
		Seed:          env.Seed,
		Kernel:        func(d int) kernel.Kernel { return kernel.NewScale(kernel.NewRBF(0.2), 1) },
	})
	var xs, ys []float64
	for len(xs) < cfg.Evals {
		q := min(cfg.Batch, cfg.Evals-len(xs))
		random := len(xs) < initPoints
		batch := bo.AskBatch(env.Context(), q)
		if len(xs)+q == cfg.Evals {
			// The last step: the GP of all earlier observations and the
			// acquisition that chose the batch (its first point marked).
			res.Plot = env.Path("step.png")
			if err := drawStep(res.Plot, bo, a.Name(), xs, ys, batch[0][0]); err != nil {
				return res, err
			}
		}
		if e := bo.Err(); e != nil {
			env.Println("  note:", e)
		}
		for _, x := range batch {
			y := f(x[0])
			if err := bo.Tell(x, y); err != nil {
				return res, err
			}
			xs, ys = append(xs, x[0]), append(ys, y)
			kind := "acquisition"
			if random {
				kind = "random"
			}
			env.Printf("eval %2d (%-11s) x = %8.4f  y = %8.4f\n", len(xs), kind, x[0], y)
		}
	}
	bx, by := bo.Best()
	res.BestObservedX, res.BestObservedY = bx[0], by
	rx, rm, err := bo.Recommend(env.Context())
	if err != nil {
		return res, err
	}
	res.BestX, res.BestY, res.Acquisition = rx[0], rm, a.Name()
	env.Printf("best observed: x = %.4f, y = %.4f\n", res.BestObservedX, res.BestObservedY)
	env.Printf("posterior-mean maximiser after %d evaluations (%s): x = %.4f, mean %.4f (true maximum f(4.0796) = 0.1368; f(x) = %.4f)\n",
		res.Evaluations, res.Acquisition, res.BestX, res.BestY, objective(res.BestX))
	env.Println("wrote", res.Plot)
	return res, nil
}

// drawStep writes two panels: the GP posterior (mean, ±2σ band) with the
// observations and the true function, and the acquisition with the point
// it chose (next).
func drawStep(path string, bo *gp.BayesOpt, acqName string, xs, ys []float64, next float64) error {
	const m = 300
	grid := make([][]float64, m)
	for i := range grid {
		grid[i] = []float64{lo + (hi-lo)*float64(i)/float64(m-1)}
	}
	mean, std, err := bo.Predict(context.Background(), grid)
	if err != nil {
		return err
	}
	acq, err := bo.AcquisitionAt(context.Background(), grid)
	if err != nil {
		return err
	}
	x, lower, upper, truth := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
	for i, g := range grid {
		x[i], truth[i] = g[0], objective(g[0])
		lower[i], upper[i] = mean[i]-2*std[i], mean[i]+2*std[i]
	}
	return plot.WriteGrid(path, 1,
		plot.Panel{Title: fmt.Sprintf("GP posterior after %d evaluations", len(xs)), XLabel: "x", YLabel: "f(x)",
			Bands: []plot.Band{{Name: "±2σ", X: x, Lo: lower, Hi: upper}},
			Curves: []plot.Curve{{Name: "mean", X: x, Y: mean, Style: plot.Line}, {Name: "true f", X: x, Y: truth, Style: plot.Line},
				{Name: "observations", X: xs, Y: ys, Style: plot.Scatter}}},
		plot.Panel{Title: fmt.Sprintf("acquisition (%s); next x = %.4f", acqName, next), XLabel: "x",
			Curves: []plot.Curve{{Name: "acquisition", X: x, Y: acq, Style: plot.Line}, {Name: "next x", X: []float64{next}, Style: plot.VLines}}})
}
