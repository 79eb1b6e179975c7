// Command multitask fits multitask Gaussian processes (the intrinsic
// coregionalisation model of Bonilla, Chai and Williams 2008, "Multi-task
// Gaussian process prediction") to three correlated series drawn from a
// known model, and compares the task covariance it learns with the true
// one.
//
// The series are one draw of f ~ GP(0, B ⊗ k) with k an RBF of lengthscale
// 1 on [0, -span] and the task covariance B = wwᵀ + diag(κ) for
// w = (1, 0.8, −0.6) and κ = 0.05, observed with noise of standard deviation
// -noise at -n shared inputs. A single draw pins down the correlations
// better than the overall scale of B (it shows one realisation of each
// series), so the span holds many lengthscales. Two fits are made:
//
//   - the grid: every task at every input, fitted through the Kronecker
//     path (eigendecompositions of the 3×3 and n×n factors instead of a
//     Cholesky factor of the 3n×3n covariance);
//   - the Hadamard form: the same data with task 2's observations on
//     the last 40 % of the span held out, fitted from the task indices of the remaining
//     observations. Its predictions on the held-out stretch, which borrow
//     strength from tasks 0 and 1, are compared with an exact GP fitted to
//     task 2's own observations alone.
//
// The program prints the true and learned B and their correlations, the
// log marginal likelihoods and the held-out RMSEs, and draws the Hadamard
// fit of every series with its ±2σ band to -out/series.png and the learned
// task covariances and correlations against the true ones to
// -out/taskcov.png.
//
//	go run ./examples/multitask [-n 150] [-span 30] [-noise 0.1] [-iters 200] [-seed 1] [-out out/multitask] [-json] [-quiet]
package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/plot"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// config holds the settings; the tagged fields are its flags.
type config struct {
	N       int     `flag:"n" help:"shared inputs, evenly spaced"`
	Span    float64 `flag:"span" help:"the inputs cover [0, span] (the lengthscale is 1)"`
	Noise   float64 `flag:"noise" help:"observation noise standard deviation"`
	MaxIter int     `flag:"iters" help:"L-BFGS iterations per fit"`
}

// result is what -json prints.
type result struct {
	BTrue       [][]float64 `json:"b_true"`
	BLearned    [][]float64 `json:"b_learned"`          // the grid's (Kronecker) fit
	BRelError   float64     `json:"b_rel_error"`        // ‖B̂ − B‖_F / ‖B‖_F
	CorrError   float64     `json:"corr_max_abs_error"` // largest |ρ̂ᵢⱼ − ρᵢⱼ|
	BHadamard   [][]float64 `json:"b_hadamard"`
	LML         float64     `json:"lml"` // the grid fit's
	Seconds     float64     `json:"kronecker_seconds"`
	HeldOut     int         `json:"heldout_n"`
	RMSEMulti   float64     `json:"heldout_rmse_multitask"`
	RMSESingle  float64     `json:"heldout_rmse_single"`
	SeriesPlot  string      `json:"plot"`
	TaskCovPlot string      `json:"taskcov_plot"`
}

// The true model.
var (
	trueW     = []float64{1, 0.8, -0.6}
	trueKappa = 0.05
)

const tasks = 3

func main() { cli.Main(program()) }

func program() cli.Program {
	return cli.Configured(cli.Program{Name: "multitask"}, config{N: 150, Span: 30, Noise: 0.1, MaxIter: 200}, run)
}

func run(c config, env *cli.Env) (res result, err error) {
	if c.N < 4 || !(c.Span > 0) || !(c.Noise > 0) || c.MaxIter < 1 {
		return res, cli.BadFlagf("need -n ≥ 4, -span > 0, -noise > 0 and -iters ≥ 1")
	}
	bTrue := make([]float64, tasks*tasks)
	for i := range tasks {
		for j := range tasks {
			bTrue[i*tasks+j] = trueW[i] * trueW[j]
		}
		bTrue[i*tasks+i] += trueKappa
	}
	x, f, y, err := draw(c, env.Seed, bTrue)
	if err != nil {
		return res, err
	}
	// The grid: the Kronecker path.
	start := time.Now()
	grid, err := gp.FitMultitask(env.Context(), x, y, nil, gp.MultitaskOptions{
		Kernels: []kernel.Kernel{kernel.NewRBF(2)}, Seed: env.Seed, MaxIter: c.MaxIter, Progress: progress(env, "grid")})
	if err = tolerate(env, err); err != nil {
		return res, err
	}
	res.Seconds = time.Since(start).Seconds()
	res.LML = grid.FitResult().LML
	bHat := grid.TaskCovariance(0).Values()
	res.BTrue, res.BLearned = square(bTrue), square(bHat)
	res.BRelError, res.CorrError = compare(bTrue, bHat)
	env.Printf("grid (Kronecker, %d×%d covariance) in %.2f s: LML %.2f, ‖B̂−B‖/‖B‖ = %.3f, max |ρ̂−ρ| = %.3f\n",
		tasks*c.N, tasks*c.N, res.Seconds, res.LML, res.BRelError, res.CorrError)
	env.Printf("true B %v\nlearned B %v\n", res.BTrue, res.BLearned)

	// The Hadamard form, with task 2 unobserved on the last 40 %.
	cut := 0.6 * c.Span
	var xh, yh []float64
	var th, held []int
	for i := range c.N {
		for k := range tasks {
			if k == 2 && x.At(i, 0) >= cut {
				held = append(held, i)
				continue
			}
			xh, yh, th = append(xh, x.At(i, 0)), append(yh, y.At(i, k)), append(th, k)
		}
	}
	had, err := gp.FitMultitask(env.Context(), tensor.FromFloat64s(xh, len(xh), 1), tensor.FromFloat64s(yh, len(yh)), th,
		gp.MultitaskOptions{Kernels: []kernel.Kernel{kernel.NewRBF(2)}, Tasks: tasks, Seed: env.Seed, MaxIter: c.MaxIter, Progress: progress(env, "hadamard")})
	if err = tolerate(env, err); err != nil {
		return res, err
	}
	res.BHadamard = square(had.TaskCovariance(0).Values())
	// Task 2 alone.
	var x2, y2 []float64
	for i := range c.N {
		if x.At(i, 0) < cut {
			x2, y2 = append(x2, x.At(i, 0)), append(y2, y.At(i, 2))
		}
	}
	single, err := gp.FitExact(env.Context(), tensor.FromFloat64s(x2, len(x2), 1), tensor.FromFloat64s(y2, len(y2)),
		gp.ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1), MaxIter: c.MaxIter})
	if err = tolerate(env, err); err != nil {
		return res, err
	}
	xHeld := tensor.IndexSelect(x, 0, held)
	pm, err := had.Predict(xHeld, repeatInt(2, len(held)))
	if err != nil {
		return res, err
	}
	ps, err := single.Predict(xHeld)
	if err != nil {
		return res, err
	}
	res.HeldOut = len(held)
	res.RMSEMulti, res.RMSESingle = rmse(pm.Mean.Values(), f, held), rmse(ps.Mean.Values(), f, held)
	env.Printf("task 2 held out on [%g, %g] (%d inputs): RMSE against the true f %.3f multitask, %.3f task 2 alone\n",
		cut, c.Span, res.HeldOut, res.RMSEMulti, res.RMSESingle)
	res.SeriesPlot, res.TaskCovPlot = env.Path("series.png"), env.Path("taskcov.png")
	if err := plotSeries(res.SeriesPlot, had, x, y, cut); err != nil {
		return res, err
	}
	if err := plotTaskCov(res.TaskCovPlot, bTrue, bHat); err != nil {
		return res, err
	}
	env.Printf("wrote %s and %s\n", res.SeriesPlot, res.TaskCovPlot)
	return res, nil
}

// tolerate accepts a fit that ran out of iterations (its model is the best
// point found), saying so, and returns every other error.
func tolerate(env *cli.Env, err error) error {
	if errors.Is(err, tensor.ErrNotConverged) {
		env.Printf("note: %v\n", err)
		return nil
	}
	return err
}

// draw returns the inputs (n, 1) on [0, 10], the true latent values f
// (n, T) and the noisy observations y (n, T) of one draw from the model.
func draw(c config, seed uint64, b []float64) (x, f, y *tensor.Tensor, err error) {
	rng := tensor.NewRNG(seed)
	xs := make([]float64, c.N)
	for i := range xs {
		xs[i] = c.Span * float64(i) / float64(c.N-1)
	}
	x = tensor.FromFloat64s(xs, c.N, 1)
	g := graph.New()
	k := kernel.NewRBF(1).K(g.Const(x), g.Const(x)).Value()
	lk, err := tensor.Cholesky(tensor.Add(k, tensor.MulScalar(tensor.Eye(tensor.Float64, c.N), 1e-8)))
	if err != nil {
		return nil, nil, nil, err
	}
	lb, err := tensor.Cholesky(tensor.FromFloat64s(b, tasks, tasks))
	if err != nil {
		return nil, nil, nil, err
	}
	// vec(L_K E L_Bᵀ) has covariance B ⊗ K.
	f = tensor.MatMulT(tensor.MatMul(lk, rng.Normal(tensor.Float64, 0, 1, c.N, tasks)), lb, false, true)
	y = tensor.Add(f, rng.Normal(tensor.Float64, 0, c.Noise, c.N, tasks))
	return x, f, y, nil
}

func progress(env *cli.Env, name string) func(gp.FitEvent) {
	return func(e gp.FitEvent) {
		if e.Iteration%50 == 0 {
			env.Printf("%s %v\n", name, e)
		}
	}
}

func square(v []float64) [][]float64 {
	out := make([][]float64, tasks)
	for i := range out {
		out[i] = v[i*tasks : (i+1)*tasks]
	}
	return out
}

// compare returns ‖b̂ − b‖_F / ‖b‖_F and the largest difference of the
// correlations.
func compare(b, bHat []float64) (rel, corr float64) {
	num, den := 0.0, 0.0
	for i := range b {
		num += (bHat[i] - b[i]) * (bHat[i] - b[i])
		den += b[i] * b[i]
	}
	for i := range tasks {
		for j := range tasks {
			r := b[i*tasks+j] / math.Sqrt(b[i*tasks+i]*b[j*tasks+j])
			rh := bHat[i*tasks+j] / math.Sqrt(bHat[i*tasks+i]*bHat[j*tasks+j])
			corr = math.Max(corr, math.Abs(r-rh))
		}
	}
	return math.Sqrt(num / den), corr
}

func repeatInt(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// rmse compares predictions at the rows idx with task 2's true f.
func rmse(pred []float64, f *tensor.Tensor, idx []int) float64 {
	s := 0.0
	for i, r := range idx {
		d := pred[i] - f.At(r, 2)
		s += d * d
	}
	return math.Sqrt(s / float64(len(idx)))
}

// plotSeries draws each task's observations (held-out ones apart), the
// Hadamard model's mean and its ±2σ band.
func plotSeries(path string, m *gp.Multitask, x, y *tensor.Tensor, cut float64) error {
	span := x.At(x.Shape()[0]-1, 0)
	const points = 400
	grid := make([]float64, points)
	for i := range grid {
		grid[i] = span * float64(i) / (points - 1)
	}
	pred, err := m.Predict(tensor.FromFloat64s(grid, points, 1), nil)
	if err != nil {
		return err
	}
	panels := make([]plot.Panel, tasks)
	for k := range tasks {
		mean := make([]float64, points)
		band := plot.Band{Name: "±2σ", X: grid, Lo: make([]float64, points), Hi: make([]float64, points)}
		for i := range grid {
			mean[i] = pred.Mean.At(i, k)
			s := 2 * math.Sqrt(pred.NoisyVar.At(i, k))
			band.Lo[i], band.Hi[i] = mean[i]-s, mean[i]+s
		}
		var ox, oy, hx, hy []float64
		for i := range x.Shape()[0] {
			if k == 2 && x.At(i, 0) >= cut {
				hx, hy = append(hx, x.At(i, 0)), append(hy, y.At(i, k))
			} else {
				ox, oy = append(ox, x.At(i, 0)), append(oy, y.At(i, k))
			}
		}
		curves := []plot.Curve{{Name: "observed", X: ox, Y: oy, Style: plot.Scatter}, {Name: "mean", X: grid, Y: mean, Style: plot.Line}}
		if len(hx) > 0 {
			curves = append(curves, plot.Curve{Name: "held out", X: hx, Y: hy, Style: plot.Scatter})
		}
		panels[k] = plot.Panel{Title: fmt.Sprintf("task %d", k), XLabel: "x", YLabel: "y", Bands: []plot.Band{band}, Curves: curves}
	}
	return plot.WritePNG(path, panels...)
}

// plotTaskCov draws the learned entries of B against the true ones, and
// the learned correlations against the true ones, each with the line of
// perfect agreement.
func plotTaskCov(path string, b, bHat []float64) error {
	corr := func(v []float64) []float64 {
		out := make([]float64, 0, tasks*(tasks-1)/2)
		for i := range tasks {
			for j := i + 1; j < tasks; j++ {
				out = append(out, v[i*tasks+j]/math.Sqrt(v[i*tasks+i]*v[j*tasks+j]))
			}
		}
		return out
	}
	agree := func(title, what string, truth, learned []float64) plot.Panel {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range append(append([]float64(nil), truth...), learned...) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		return plot.Panel{Title: title, XLabel: "true " + what, YLabel: "learned " + what, Curves: []plot.Curve{
			{Name: "learned = true", X: []float64{lo, hi}, Y: []float64{lo, hi}, Style: plot.Line},
			{Name: what, X: truth, Y: learned, Style: plot.Scatter}}}
	}
	return plot.WritePNG(path, agree("task covariance B (Kronecker fit)", "B[i,j]", b, bHat),
		agree("task correlations", "ρ[i,j]", corr(b), corr(bHat)))
}
