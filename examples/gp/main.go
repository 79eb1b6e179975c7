// Command gp fits a Gaussian process to the Mauna Loa CO2 record (monthly
// means 1959–1997, shipped with Gradus) and extrapolates it ten years
// ahead, as in Rasmussen & Williams §5.4.3 and scikit-learn's example.
//
// The default kernel is
//
//	c₁·RBF(ℓ₁) + c₂·Periodic(ℓ₂, p)·RBF(ℓ₃) + White(σ²)
//
// a smooth long-term trend, a yearly cycle whose shape drifts slowly, and
// noise, on y standardised by its mean and population standard deviation.
// The hyperparameters are fitted by L-BFGS on the log marginal likelihood
// (with autodiff gradients) from the initial values and a few random
// restarts; the program prints them and the log marginal likelihood, and
// draws the data, the posterior mean and its ±2σ band to -out/co2.png
// (named after the data file).
//
//	go run ./examples/gp [-kernel co2] [-restarts 2] [-seed 1] [-data co2.csv] [-x decimal_year] [-y ppm] [-out out/gp] [-json] [-quiet]
//
// -kernel takes a preset (co2, rbf, matern52, rbf+periodic) or a small
// expression: terms joined by "+", factors by "*", from rbf, matern12,
// matern32, matern52, rq, periodic, linear, white and const, e.g.
// "rbf+periodic*rbf+white". Every term without white or const gets its own
// variance; lengthscales start at a tenth of the inputs' range.
package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	X        string  `flag:"x" help:"input column"`
	Y        string  `flag:"y" help:"target column"`
	Kernel   string  `flag:"kernel" help:"kernel preset (co2, rbf, matern52, rbf+periodic) or expression"`
	Restarts int     `flag:"restarts" help:"random restarts after the start from the initial values"`
	MaxIter  int     `flag:"iters" help:"L-BFGS iterations per start"`
	Ahead    float64 `flag:"ahead" help:"extrapolate this far beyond the last input"`
}

// result is what -json prints.
type result struct {
	LML    float64        `json:"lml"`
	Start  float64        `json:"lml_start"` // at the initial hyperparameters
	Params map[string]any `json:"params"`
	N      int            `json:"n"`
	Plot   string         `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	p := cli.Program{Name: "gp", Data: "co2.csv", DataUsage: "CSV file (embedded name or path)"}
	return cli.Configured(p, config{X: "decimal_year", Y: "ppm", Kernel: "co2", Restarts: 2, MaxIter: 100, Ahead: 10}, run)
}

// load reads the columns c.X and c.Y of the CSV at path. For a monthly
// decimal-year column the inputs are recomputed as first + (i−1)/12
// exactly, instead of the file's values rounded to six digits.
func load(path string, c config) (x, y []float64, err error) {
	tab, err := data.LoadCSV(path)
	if err != nil {
		return nil, nil, err
	}
	ix, iy := tab.Column(c.X), tab.Column(c.Y)
	if ix < 0 || iy < 0 {
		return nil, nil, fmt.Errorf("%s: need columns %q and %q, have %v", path, c.X, c.Y, tab.Columns)
	}
	if len(tab.Rows) < 2 {
		return nil, nil, fmt.Errorf("%s: %d rows", path, len(tab.Rows))
	}
	for _, r := range tab.Rows {
		x = append(x, r[ix])
		y = append(y, r[iy])
	}
	if c.X == "decimal_year" {
		first := math.Round(x[0]*12) / 12
		monthly := true
		for i := range x {
			if math.Abs(x[i]-(first+float64(i)/12)) > 1e-5 {
				monthly = false
				break
			}
		}
		if monthly {
			for i := range x {
				x[i] = first + float64(i)/12
			}
		}
	}
	return x, y, nil
}

// run loads -data, builds and fits the model, writes the plot and returns
// the summary; -seed draws the restarts' starting points.
func run(c config, env *cli.Env) (res result, err error) {
	xs, ys, err := load(env.Data, c)
	if err != nil {
		return res, err
	}
	n := len(xs)
	lo, hi := xs[0], xs[0]
	for _, v := range xs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	kernel, bounds, err := buildKernel(c.Kernel, hi-lo)
	if err != nil {
		return res, err
	}
	x := tensor.FromFloat64s(xs, n, 1)
	y := tensor.FromFloat64s(ys, n)
	opts := gp.ExactOptions{Kernel: kernel, Normalize: true, NoiseFree: hasWhite(kernel),
		Restarts: c.Restarts, Seed: env.Seed, MaxIter: c.MaxIter, Bounds: bounds,
		Progress: func(e gp.FitEvent) {
			if e.Jitter > 0 || e.Iteration == 1 || e.Iteration%10 == 0 {
				env.Println(e)
			}
		}}
	m, err := gp.NewExact(x, y, opts)
	if err != nil {
		return res, err
	}
	env.Printf("%d points, kernel %s, %d hyperparameters\n", n, c.Kernel, len(m.Hyperparams()))
	start, err := m.LogMarginalLikelihood(graph.New())
	if err != nil {
		return res, err
	}
	res.Start = start.Item()
	if m, err = gp.FitExact(env.Context(), x, y, opts); err != nil {
		if !errors.Is(err, tensor.ErrNotConverged) {
			return res, err
		}
		env.Println(err, "(keeping the best hyperparameters found)")
	}
	fit := m.FitResult()
	for i, r := range fit.Restarts {
		status := fmt.Sprintf("objective %.3f after %d iterations", r.Objective, r.Iterations)
		if r.Err != nil {
			status = "failed: " + r.Err.Error()
		}
		env.Printf("start %d: %s\n", i, status)
	}
	res.LML, res.N, res.Params = fit.LML, n, map[string]any{}
	env.Printf("best start %d: log marginal likelihood %.3f (standardised y)\n", fit.Best, fit.LML)
	names := make([]string, 0, len(m.Hyperparams()))
	for _, p := range m.Hyperparams() {
		names = append(names, p.Name())
		v := p.Get()
		if len(v) == 1 {
			res.Params[p.Name()] = v[0]
		} else {
			res.Params[p.Name()] = v
		}
	}
	sort.Strings(names)
	for _, name := range names {
		env.Printf("  %-22s %v\n", name, res.Params[name])
	}

	// Predict on a monthly grid from the first input to Ahead years past the last.
	steps := int(math.Round((hi + c.Ahead - lo) * 12))
	grid := make([]float64, steps+1)
	for i := range grid {
		grid[i] = lo + float64(i)/12
	}
	pred, err := m.Predict(tensor.FromFloat64s(grid, len(grid), 1))
	if err != nil {
		return res, err
	}
	res.Plot = env.Path(strings.TrimSuffix(filepath.Base(env.Data), filepath.Ext(env.Data)) + ".png")
	if err := plotPosterior(res.Plot, xs, ys, grid, pred, c); err != nil {
		return res, err
	}
	env.Printf("wrote %s\n", res.Plot)
	return res, nil
}

// hasWhite reports whether the kernel has a White term, which models the
// noise itself: then the model gets no separate noise term.
func hasWhite(k kernel.Kernel) bool {
	switch k := k.(type) {
	case *kernel.White:
		return true
	case *kernel.Sum:
		for _, t := range k.Kernels() {
			if hasWhite(t) {
				return true
			}
		}
	case *kernel.Scale:
		return hasWhite(k.Kernel())
	}
	return false
}

// buildKernel returns the kernel for a preset or expression, with
// lengthscales scaled to the inputs' span, and bounds for fitting.
func buildKernel(spec string, span float64) (kernel.Kernel, map[string][2]float64, error) {
	switch spec {
	case "co2":
		// Long-term trend, a decaying yearly cycle, and noise.
		trend := kernel.Named("trend", kernel.NewScale(kernel.NewRBF(50), 1))
		periodic := kernel.Named("seasonal", kernel.NewPeriodic(1, 1))
		decay := kernel.Named("decay", kernel.NewRBF(100))
		seasonal := kernel.NewScale(kernel.NewProduct(periodic, decay), 0.05)
		seasonal.Variance().SetName("seasonal.variance")
		noise := kernel.Named("noise", kernel.NewWhite(0.01))
		bounds := map[string][2]float64{
			"seasonal.period": {0.9, 1.1},
			"noise.variance":  {1e-6, 1},
		}
		return kernel.NewSum(trend, seasonal, noise), bounds, nil
	case "matern52":
		spec = "matern52+white"
	case "rbf":
		spec = "rbf+white"
	}
	return parseKernel(spec, span)
}

// parseKernel reads "a*b+c": terms joined by +, factors by *.
func parseKernel(spec string, span float64) (kernel.Kernel, map[string][2]float64, error) {
	var terms []kernel.Kernel
	for _, term := range strings.Split(spec, "+") {
		var factors []kernel.Kernel
		scaled := true
		for _, f := range strings.Split(term, "*") {
			ls := span / 10
			var k kernel.Kernel
			switch strings.TrimSpace(f) {
			case "rbf":
				k = kernel.NewRBF(ls)
			case "matern12":
				k = kernel.NewMatern12(ls)
			case "matern32":
				k = kernel.NewMatern32(ls)
			case "matern52":
				k = kernel.NewMatern52(ls)
			case "rq":
				k = kernel.NewRationalQuadratic(1, ls)
			case "periodic":
				k = kernel.NewPeriodic(1, 1)
			case "linear":
				k = kernel.NewLinear(1 / (span * span))
			case "white":
				k, scaled = kernel.NewWhite(0.01), false
			case "const":
				k, scaled = kernel.NewConstant(1), false
			default:
				return nil, nil, fmt.Errorf("kernel %q: unknown factor %q (want rbf, matern12, matern32, matern52, rq, periodic, linear, white, const or a preset)", spec, f)
			}
			factors = append(factors, k)
		}
		var t kernel.Kernel = factors[0]
		if len(factors) > 1 {
			t = kernel.NewProduct(factors...)
		}
		if scaled {
			t = kernel.NewScale(t, 1)
		}
		terms = append(terms, t)
	}
	if len(terms) == 1 {
		return terms[0], nil, nil
	}
	return kernel.NewSum(terms...), nil, nil
}
