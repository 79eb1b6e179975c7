// Command gp-large fits the hyperparameters of an exact Gaussian process on
// up to 10⁵ points by blackbox matrix-matrix inference (gp.CG: batched
// preconditioned conjugate gradients, stochastic Lanczos quadrature, kernel
// products in float32 tiles of 64 rows, never the n × n matrix, and a
// rank-400 pivoted-Cholesky preconditioner), by Adam on the CG estimate of
// the log marginal likelihood. The data are synthetic, in 3-D:
//
//	x ~ U[−2, 2]³,  y = sin(2x₁) + ½cos(3x₂) + 0.3x₃² + ε,  ε ~ N(0, 0.1²)
//
// generated with -seed. It prints the LML estimate per step, the time per
// step, the test RMSE against the noise floor 0.1 and the peak resident
// memory, and, on a subset of -exact-n points, compares the Cholesky and CG
// evaluations (time, memory of the kernel matrix) and the hyperparameters
// each fit reaches.
//
//	go run ./examples/gp-large [-n 100000] [-steps 20] [-exact-n 2000] [-json] [-demo]
//
// Built with -tags mpi and launched by mpirun, the ranks split every kernel
// product by rows (gp.CGOptions.Partition) and rank 0 prints the results:
//
//	go build -tags mpi -o /tmp/gp-large ./examples/gp-large
//	mpirun -np 2 /tmp/gp-large -n 20000 -exact-n 0
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/distributed"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// noiseStd is the standard deviation of the synthetic noise.
const noiseStd = 0.1

type config struct {
	N           int     `flag:"n" help:"training points"`
	Steps       int     `flag:"steps" help:"Adam steps on the CG objective"`
	ExactN      int     `flag:"exact-n" help:"subset size for the exact comparison (0: skip)"`
	Test        int     `flag:"test" help:"test points"`
	Probes      int     `flag:"probes" help:"probe vectors of the stochastic estimates"`
	Rank        int     `flag:"rank" help:"rank of the pivoted-Cholesky preconditioner"`
	LR          float64 `flag:"lr" help:"Adam's learning rate"`
	NoSubsetFit bool    `flag:"no-subset-fit" help:"on the subset, time one evaluation of each method but fit neither"`
	Float64     bool    `flag:"f64" help:"kernel products in float64 tiles rather than float32 ones"`
	Demo        bool    `flag:"demo" help:"quick run: n = 3000, 5 steps, exact subset 500, 200 test points"`
	// Partition, if not nil, splits the CG kernel products over its ranks.
	Partition gp.RowPartition
}

// comparison holds the subset comparison of exact and CG inference.
type comparison struct {
	N                  int                `json:"n"`
	ExactSecondsPerLML float64            `json:"exact_seconds_per_eval"`
	CGSecondsPerLML    float64            `json:"cg_seconds_per_eval"`
	ExactLML           float64            `json:"exact_lml"`
	CGLML              float64            `json:"cg_lml"`
	KernelMatrixMB     float64            `json:"exact_kernel_matrix_mb"`
	ExactPeakRSSMB     float64            `json:"exact_peak_rss_mb"`
	ExactParams        map[string]float64 `json:"exact_fit,omitempty"`
	CGParams           map[string]float64 `json:"cg_fit,omitempty"`
	// The exact LML at each fit: how close the CG fit comes to the optimum.
	ExactLMLAtExactFit float64 `json:"exact_lml_at_exact_fit,omitempty"`
	ExactLMLAtCGFit    float64 `json:"exact_lml_at_cg_fit,omitempty"`
}

type result struct {
	N              int                `json:"n"`
	LML            float64            `json:"lml"`
	SecondsPerStep float64            `json:"seconds_per_step"`
	FitSeconds     float64            `json:"fit_seconds"` // the whole fit: setup, every step, the final factorisation
	TestRMSE       float64            `json:"test_rmse"`
	NoiseStd       float64            `json:"noise_std"`
	PeakRSSMB      float64            `json:"peak_rss_mb"`
	CGIterations   int                `json:"cg_iterations"`
	Products       string             `json:"products"` // the kernel tiles' precision: float32 or float64
	Params         map[string]float64 `json:"params"`
	Trace          []float64          `json:"lml_trace"`
	Exact          *comparison        `json:"exact,omitempty"`
	Plot           string             `json:"plot,omitempty"`
}

func main() { cli.Main(program()) }

func program() cli.Program {
	defaults := config{N: 100000, Steps: 20, ExactN: 2000, Test: 1000, Probes: 16, Rank: 400, LR: 0.1}
	return cli.Configured(cli.Program{Name: "gp-large"}, defaults, func(c config, env *cli.Env) (any, error) {
		if c.Demo {
			c = cli.Preset(env, c, demoConfig)
		}
		comm, err := distributed.Init() // one rank unless built with -tags mpi and run by mpirun
		if err != nil {
			return nil, err
		}
		c.Partition = comm
		if comm.Rank() != 0 { // only rank 0 reports
			quiet := *env
			quiet.Log = io.Discard
			env = &quiet
		}
		if comm.Size() > 1 {
			env.Printf("kernel products split by rows over %d MPI ranks\n", comm.Size())
		}
		res, err := run(c, env)
		if err == nil {
			err = comm.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", comm.Rank(), err)
		}
		if comm.Rank() != 0 {
			return nil, nil
		}
		res.Plot, err = plotTrace(env, res.Trace)
		return res, err
	})
}

// demoConfig shrinks c to a run of seconds.
func demoConfig(c config) config {
	c.N, c.Steps, c.ExactN, c.Test = 3000, 5, 500, 200
	return c
}

// synthetic returns n points of the documented function plus noise.
func synthetic(rng *tensor.RNG, n int) (x, y *tensor.Tensor) {
	x = rng.Uniform(tensor.Float64, -2, 2, n, 3)
	xv := x.Float64s()
	yv := make([]float64, n)
	for i := range yv {
		a, b, c := xv[3*i], xv[3*i+1], xv[3*i+2]
		yv[i] = math.Sin(2*a) + 0.5*math.Cos(3*b) + 0.3*c*c + noiseStd*rng.NormFloat64()
	}
	return x, tensor.FromFloat64s(yv, n)
}

// modelOptions returns the model every fit starts from: a scaled ARD RBF
// kernel, a constant mean, standardised targets.
func modelOptions(inf gp.Inference, c config, seed uint64) gp.ExactOptions {
	k := kernel.NewScale(kernel.NewRBF(1, 1, 1), 1)
	return gp.ExactOptions{Kernel: k, Noise: 0.1, Mean: gp.ConstantMean, Normalize: true,
		Inference: inf, CG: gp.CGOptions{Probes: c.Probes, Rank: c.Rank, Tol: 1e-3, Seed: seed, Partition: c.Partition, Float32: !c.Float64}}
}

func params(m *gp.Exact) map[string]float64 {
	out := map[string]float64{}
	for name, v := range m.Hyperparameters() {
		if len(v) == 1 {
			out[name] = v[0]
			continue
		}
		for i, x := range v {
			out[name+"["+strconv.Itoa(i)+"]"] = x
		}
	}
	return out
}

// run fits the model on data drawn from -seed (which also draws the
// probes) and scores it; the caller plots the trace.
func run(c config, env *cli.Env) (res result, err error) {
	if c.N < 10 || c.Steps < 1 || c.ExactN < 0 || c.ExactN > c.N || c.Test < 1 {
		return res, fmt.Errorf("need n ≥ 10, steps ≥ 1, 0 ≤ exact-n ≤ n and test ≥ 1; got n %d, steps %d, exact-n %d, test %d", c.N, c.Steps, c.ExactN, c.Test)
	}
	rng := tensor.NewRNG(env.Seed)
	x, y := synthetic(rng, c.N)
	xt, yt := synthetic(rng, c.Test)
	res.N, res.NoiseStd = c.N, noiseStd
	if c.ExactN > 0 {
		if res.Exact, err = compare(c, env, x, y); err != nil {
			return res, err
		}
	}
	opts := modelOptions(gp.CG, c, env.Seed)
	res.Products = map[bool]string{false: "float32", true: "float64"}[c.Float64]
	env.Printf("fitting on n = %d by Adam on the CG objective (%d probes, rank-%d preconditioner, %s kernel tiles)\n", c.N, c.Probes, c.Rank, res.Products)
	last := time.Now()
	start := last
	opts.Optimizer, opts.MaxIter, opts.LR = "adam", c.Steps, c.LR
	opts.Progress = func(e gp.FitEvent) {
		now := time.Now()
		res.Trace = append(res.Trace, e.Objective)
		env.Printf("step %3d/%d  LML %.2f  %d CG iterations  %.1fs\n", e.Iteration, c.Steps, e.Objective, e.CGIterations, now.Sub(last).Seconds())
		last = now
	}
	m, err := gp.FitExact(env.Context(), x, y, opts)
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) { // a fixed step budget: keep its result
		return res, err
	}
	fr := m.FitResult()
	res.FitSeconds = time.Since(start).Seconds()
	res.SecondsPerStep = res.FitSeconds / float64(len(res.Trace))
	res.LML, res.Params, res.CGIterations = fr.LML, params(m), m.LastCG().Iterations
	mean, err := m.PredictMean(xt)
	if err != nil {
		return res, err
	}
	se := 0.0
	for i, v := range mean.Values() {
		d := v - yt.Values()[i]
		se += d * d
	}
	res.TestRMSE = math.Sqrt(se / float64(c.Test))
	res.PeakRSSMB = peakRSSMB()
	env.Printf("n = %d: LML %.2f, %.2fs per step, test RMSE %.4f (noise floor %.2f), peak RSS %.0f MB\n",
		c.N, res.LML, res.SecondsPerStep, res.TestRMSE, noiseStd, res.PeakRSSMB)
	for _, name := range slices.Sorted(maps.Keys(res.Params)) {
		env.Printf("  %-20s %10.4f\n", name, res.Params[name])
	}
	return res, nil
}

// compare times one LML-and-gradient evaluation of each method on the
// first c.ExactN points and fits both there by L-BFGS from the same start
// (unless c.NoSubsetFit). The exact evaluation runs first, so the peak
// resident memory read after it is the exact GP's.
func compare(c config, env *cli.Env, x, y *tensor.Tensor) (*comparison, error) {
	n := c.ExactN
	xs := tensor.Slice(x, 0, 0, n, 1).Contiguous()
	ys := tensor.Slice(y, 0, 0, n, 1).Contiguous()
	cmp := &comparison{N: n, KernelMatrixMB: float64(n) * float64(n) * 8 / (1 << 20)}
	fits := map[gp.Inference]*gp.Exact{}
	for _, inf := range []gp.Inference{gp.Cholesky, gp.CG} {
		opts := modelOptions(inf, c, env.Seed)
		m, err := gp.NewExact(xs, ys, opts)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		obj, err := evalOnce(m)
		if err != nil {
			return nil, err
		}
		sec := time.Since(t0).Seconds()
		if inf == gp.Cholesky {
			cmp.ExactPeakRSSMB = peakRSSMB()
		}
		if !c.NoSubsetFit {
			opts.MaxIter = 30
			if m, err = gp.FitExact(env.Context(), xs, ys, opts); err != nil && !errors.Is(err, tensor.ErrNotConverged) {
				return nil, err
			}
			fits[inf] = m
		}
		if inf == gp.Cholesky {
			cmp.ExactSecondsPerLML, cmp.ExactLML = sec, obj
		} else {
			cmp.CGSecondsPerLML, cmp.CGLML = sec, obj
		}
	}
	env.Printf("subset n = %d: one LML + gradient takes %.3fs exact (kernel matrix %.0f MB, peak RSS %.0f MB), %.3fs by CG; LML %.3f exact, %.3f CG\n",
		n, cmp.ExactSecondsPerLML, cmp.KernelMatrixMB, cmp.ExactPeakRSSMB, cmp.CGSecondsPerLML, cmp.ExactLML, cmp.CGLML)
	if c.NoSubsetFit {
		return cmp, nil
	}
	cmp.ExactParams, cmp.CGParams = params(fits[gp.Cholesky]), params(fits[gp.CG])
	at, err := gp.NewExact(xs, ys, modelOptions(gp.Cholesky, c, env.Seed))
	if err != nil {
		return nil, err
	}
	for _, p := range fits[gp.CG].Hyperparams() {
		if err := at.Hyperparam(p.Name()).Set(p.Get()...); err != nil {
			return nil, err
		}
	}
	if cmp.ExactLMLAtCGFit, err = evalOnce(at); err != nil {
		return nil, err
	}
	if cmp.ExactLMLAtExactFit, err = evalOnce(fits[gp.Cholesky]); err != nil {
		return nil, err
	}
	env.Printf("exact LML at the exact fit %.3f, at the CG fit %.3f\n", cmp.ExactLMLAtExactFit, cmp.ExactLMLAtCGFit)
	env.Printf("%-22s %10s %10s\n", "fitted on the subset", "exact", "CG")
	for _, name := range slices.Sorted(maps.Keys(cmp.ExactParams)) {
		env.Printf("%-22s %10.4f %10.4f\n", name, cmp.ExactParams[name], cmp.CGParams[name])
	}
	return cmp, nil
}

// evalOnce computes the LML and its gradient once, as Fit does.
func evalOnce(m *gp.Exact) (float64, error) {
	g := graph.New()
	l, err := m.LogMarginalLikelihood(g)
	if err != nil {
		return 0, err
	}
	xs := make([]*graph.Node, len(m.Hyperparams()))
	for i, p := range m.Hyperparams() {
		xs[i] = p.RawNode(g)
	}
	autodiff.Grad(l, xs...)
	return l.Item(), nil
}

// peakRSSMB reads the process's peak resident set (VmHWM) from
// /proc/self/status, in MiB (0 where it is not available).
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
