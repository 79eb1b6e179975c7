package gp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// fitOptions holds the hyperparameter fit's knobs, which the models'
// options structs carry (documented there).
type fitOptions struct {
	// Optimizer is "lbfgs" (the default: L-BFGS with a strong Wolfe line
	// search, optim.Minimize) or "adam" (optim.NewAdam).
	Optimizer string
	// Restarts is the number of extra starts from random points, after the
	// start from the current hyperparameters; the best result is kept.
	Restarts int
	// Seed seeds the sampler of the restarts' starting points.
	Seed uint64
	// MaxIter is the number of iterations per start: L-BFGS iterations
	// (default 100) or Adam steps (default 300).
	MaxIter int
	// LR is Adam's learning rate on the unconstrained values (default 0.05).
	LR float64
	// Bounds limits hyperparameters, by name, to [lo, hi] in the
	// constrained space (either side may be infinite). Restarts sample
	// bounded hyperparameters log-uniformly (uniformly if lo ≤ 0) between
	// finite bounds.
	Bounds map[string][2]float64
	// Progress, if set, receives every iteration and every jitter
	// escalation.
	Progress func(FitEvent)
}

// FitEvent reports progress of a hyperparameter fit: an iteration (Jitter == 0) or a
// jitter escalation after a failed Cholesky factorisation (Jitter > 0).
type FitEvent struct {
	Restart   int     // 0 for the start from the current hyperparameters
	Iteration int     // iteration within the restart, from 1 (0 for jitter events)
	Objective float64 // LML plus log prior at the iterate
	Jitter    float64 // the jitter about to be tried, for escalations
	Err       error   // the failure that caused an escalation
	// CGIterations is the number of CG iterations of the iterate's
	// evaluation (Exact with CG inference; 0 otherwise).
	CGIterations int
}

// String formats the event as one log line.
func (e FitEvent) String() string {
	if e.Jitter > 0 {
		return fmt.Sprintf("restart %d: Cholesky failed (%v); retrying with jitter %g", e.Restart, e.Err, e.Jitter)
	}
	return fmt.Sprintf("restart %d iter %d: objective %.6f", e.Restart, e.Iteration, e.Objective)
}

// RestartResult is the outcome of one start.
type RestartResult struct {
	Objective  float64 // best LML + log prior reached (NaN if the start failed)
	LML        float64 // the LML there
	Iterations int     // optimiser iterations
	Converged  bool    // L-BFGS met a tolerance
	GradNorm   float64 // L-BFGS: the gradient's largest entry (projected) where it stopped
	Err        error   // why the start failed, if it did
}

// FitResult is the outcome of a hyperparameter fit.
type FitResult struct {
	LML        float64         // log marginal likelihood at the chosen hyperparameters
	Objective  float64         // LML plus log prior there (what Fit maximises)
	Best       int             // index of the chosen start
	Restarts   []RestartResult // one per start, the first from the initial hyperparameters
	Iterations int             // iterations over all starts
}

// fit maximises the log marginal likelihood plus the log priors over the
// unconstrained values of the hyperparameters that are not fixed (see
// FitExact). If every start fails or the options are invalid, it returns
// an error and leaves the hyperparameters as they were; if ctx is
// cancelled, it leaves them at the best finished start and returns its
// result with the error.
func (m *Exact) fit(ctx context.Context, opts fitOptions) (res *FitResult, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var free []*kernel.Hyperparam
	for _, p := range m.params {
		if !p.Fixed() {
			free = append(free, p)
		}
	}
	saved := make([]*tensor.Tensor, len(m.params))
	for i, p := range m.params {
		saved[i] = p.Raw().Clone()
	}
	defer func() {
		m.hook = nil
		if err != nil && res == nil {
			for i, p := range m.params {
				tensor.CopyInto(p.Raw(), saved[i])
			}
		}
	}()
	defer tensor.Recover(&err)

	f, err := m.newFitter(ctx, free, opts)
	if err != nil {
		return nil, err
	}
	rng := tensor.NewRNG(opts.Seed)
	init := make([][]float64, len(free))
	for i, p := range free {
		init[i] = p.Get()
	}
	start := func(r int) error {
		for i, p := range free {
			v := init[i]
			if r > 0 {
				v = f.sampleStart(p, init[i], rng)
			}
			if err := p.Set(v...); err != nil {
				return err
			}
		}
		f.restart = r
		return nil
	}
	vals := make([]*tensor.Tensor, len(free))
	for i, p := range free {
		vals[i] = p.Raw()
	}
	return bestOfStarts(ctx, "gp", opts.Restarts, vals, start, func(int) RestartResult { return f.run() })
}

// bestOfStarts runs starts r = 0, ..., restarts: start(r) sets the starting
// values (r = 0: the initial ones) and run(r) optimises vals from there in
// place. It leaves vals at the best start's optimum and returns its
// FitResult; it returns an error if a start cannot be set or every start
// fails (the message prefixed with op), and its callers restore vals. If
// ctx is cancelled it returns the best finished start (vals left there)
// with the wrapped ctx error, or no result if no start finished.
func bestOfStarts(ctx context.Context, op string, restarts int, vals []*tensor.Tensor, start func(r int) error, run func(r int) RestartResult) (*FitResult, error) {
	res := &FitResult{Best: -1, Objective: math.Inf(-1)}
	best := make([]*tensor.Tensor, len(vals))
	var lastErr error
	// cancelled keeps the best finished start, if any, and wraps ctx's error.
	cancelled := func(err error) (*FitResult, error) {
		err = fmt.Errorf("%s: fit cancelled after %d of %d starts: %w", op, len(res.Restarts), restarts+1, err)
		if res.Best < 0 {
			return nil, err
		}
		for i, v := range vals {
			tensor.CopyInto(v, best[i])
		}
		return res, err
	}
	for r := 0; r <= restarts; r++ {
		if err := ctx.Err(); err != nil {
			return cancelled(err)
		}
		if err := start(r); err != nil {
			return nil, err
		}
		rr := run(r)
		if err := ctx.Err(); err != nil {
			return cancelled(err)
		}
		res.Restarts = append(res.Restarts, rr)
		res.Iterations += rr.Iterations
		if rr.Err != nil {
			lastErr = rr.Err
			continue
		}
		if rr.Objective > res.Objective {
			res.Objective, res.LML, res.Best = rr.Objective, rr.LML, r
			for i, v := range vals {
				best[i] = v.Clone()
			}
		}
	}
	if res.Best < 0 {
		return nil, fmt.Errorf("%s: fit failed from every start: %w", op, lastErr)
	}
	for i, v := range vals {
		tensor.CopyInto(v, best[i])
	}
	return res, nil
}

// fitter holds what one Fit needs across starts.
type fitter struct {
	m            *Exact
	ctx          context.Context
	free         []*kernel.Hyperparam
	opts         fitOptions
	lower, upper []*tensor.Tensor // raw bounds, nil without bounds
	bounded      bool
	g            *graph.Graph
	restart      int
}

func (m *Exact) newFitter(ctx context.Context, free []*kernel.Hyperparam, opts fitOptions) (*fitter, error) {
	switch opts.Optimizer {
	case "":
		opts.Optimizer = "lbfgs"
	case "lbfgs", "adam":
	default:
		return nil, fmt.Errorf("gp.Fit: unknown optimizer %q (want \"lbfgs\" or \"adam\")", opts.Optimizer)
	}
	if opts.Restarts < 0 || opts.MaxIter < 0 || opts.LR < 0 {
		return nil, fmt.Errorf("gp.Fit: negative Restarts, MaxIter or LR")
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 100
		if opts.Optimizer == "adam" {
			opts.MaxIter = 300
		}
	}
	if opts.LR == 0 {
		opts.LR = 0.05
	}
	f := &fitter{m: m, ctx: ctx, free: free, opts: opts, g: graph.New()}
	for name := range opts.Bounds {
		p := m.Hyperparam(name)
		if p == nil {
			return nil, fmt.Errorf("gp.Fit: bounds for unknown hyperparameter %q", name)
		}
	}
	f.lower = make([]*tensor.Tensor, len(free))
	f.upper = make([]*tensor.Tensor, len(free))
	for i, p := range free {
		b, ok := opts.Bounds[p.Name()]
		lo, hi := math.Inf(-1), math.Inf(1)
		if ok {
			var err error
			if lo, hi, err = p.RawBounds(b[0], b[1]); err != nil {
				return nil, fmt.Errorf("gp.Fit: %w", err)
			}
			f.bounded = true
		}
		dt := p.Raw().DType()
		f.lower[i] = tensor.Full(dt, lo, p.Raw().Shape()...)
		f.upper[i] = tensor.Full(dt, hi, p.Raw().Shape()...)
	}
	m.hook = func(jitter float64, cause error) {
		if opts.Progress != nil {
			opts.Progress(FitEvent{Restart: f.restart, Jitter: jitter, Err: cause})
		}
	}
	return f, nil
}

// sampleStart draws a starting point for p: within its bounds, from its
// prior, or by scaling the initial value by a log-uniform factor in
// [1/10, 10] (adding a standard normal for real-valued parameters).
func (f *fitter) sampleStart(p *kernel.Hyperparam, init []float64, rng *tensor.RNG) []float64 {
	v := make([]float64, len(init))
	b, bounded := f.opts.Bounds[p.Name()]
	if bounded {
		b[1] = math.Min(b[1], p.Supremum()) // bounds may reach past a bounded domain's top
	}
	var prior []float64
	if p.Prior() != nil && !bounded {
		prior = p.Prior()(graph.New(), tensor.Float64).Sample(rng, len(init)).Values()
	}
	for i, x := range init {
		switch {
		case bounded && b[0] > 0 && !math.IsInf(b[1], 1):
			v[i] = math.Exp(math.Log(b[0]) + rng.Float64()*(math.Log(b[1])-math.Log(b[0])))
		case bounded && !math.IsInf(b[0], -1) && !math.IsInf(b[1], 1):
			v[i] = b[0] + rng.Float64()*(b[1]-b[0])
		case prior != nil && prior[i] > p.Floor() && !math.IsInf(prior[i], 0):
			v[i] = prior[i]
		case p.Bijector() == (kernel.Identity{}):
			v[i] = x + rng.NormFloat64()
		default:
			v[i] = p.Floor() + (x-p.Floor())*math.Exp(math.Log(10)*(2*rng.Float64()-1))
		}
		if bounded {
			v[i] = math.Min(math.Max(v[i], b[0]), b[1])
		}
		// A draw the bijector cannot reach (at or below the floor, at or
		// above a bounded domain's top) restarts from the initial value.
		if r := p.Unconstrain(v[i]); math.IsNaN(r) || math.IsInf(r, 0) {
			v[i] = x
		}
	}
	return v
}

// eval computes the objective (LML + log prior) and its gradient with
// respect to the free raw values at the current hyperparameters.
func (f *fitter) eval() (obj, lml float64, grads []*tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	if err := f.ctx.Err(); err != nil {
		return 0, 0, nil, err
	}
	g := f.g
	g.Reset()
	l, err := f.m.LogMarginalLikelihood(g)
	if err != nil {
		return 0, 0, nil, err
	}
	o := l
	if lp := f.m.LogPrior(g); lp != nil {
		o = graph.Add(o, lp)
	}
	xs := make([]*graph.Node, len(f.free))
	for i, p := range f.free {
		xs[i] = p.RawNode(g)
	}
	gs := autodiff.Grad(o, xs...)
	grads = make([]*tensor.Tensor, len(gs))
	for i, gn := range gs {
		grads[i] = gn.Value()
	}
	obj, lml = o.Item(), l.Item()
	if math.IsNaN(obj) || math.IsInf(obj, 0) {
		return obj, lml, nil, errors.New("gp: objective is not finite")
	}
	return obj, lml, grads, nil
}

// run optimises from the current hyperparameters and leaves them at the
// best point found.
func (f *fitter) run() RestartResult {
	if len(f.free) == 0 {
		obj, lml, _, err := f.eval()
		return RestartResult{Objective: obj, LML: lml, Err: err, Converged: err == nil}
	}
	if f.opts.Optimizer == "adam" {
		return f.runAdam()
	}
	return f.runLBFGS()
}

func (f *fitter) runLBFGS() RestartResult {
	x := make([]*tensor.Tensor, len(f.free))
	for i, p := range f.free {
		x[i] = p.Raw().Clone()
	}
	objective := func(xs, grad []*tensor.Tensor) (float64, error) {
		for i, p := range f.free {
			tensor.CopyInto(p.Raw(), xs[i])
		}
		obj, _, gs, err := f.eval()
		if err != nil {
			return 0, err
		}
		for i := range grad {
			tensor.CopyInto(grad[i], tensor.Neg(gs[i]))
		}
		return -obj, nil
	}
	cfg := optim.LBFGSOptions{MaxIter: f.opts.MaxIter, GradTol: lbfgsGradTol}
	if f.bounded {
		cfg.Lower, cfg.Upper = f.lower, f.upper
	}
	restart := f.restart
	cfg.Callback = func(iter int, fv, gnorm float64) {
		if f.opts.Progress != nil {
			f.opts.Progress(FitEvent{Restart: restart, Iteration: iter, Objective: -fv, CGIterations: f.m.cgStats.Iterations})
		}
	}
	res, err := optim.Minimize(objective, x, cfg)
	for i, p := range f.free {
		tensor.CopyInto(p.Raw(), x[i])
	}
	if err != nil {
		return RestartResult{Objective: math.NaN(), LML: math.NaN(), Iterations: res.Iterations, Err: err}
	}
	obj, lml, _, err := f.eval()
	if err != nil {
		return RestartResult{Objective: math.NaN(), LML: math.NaN(), Iterations: res.Iterations, Err: err}
	}
	return RestartResult{Objective: obj, LML: lml, Iterations: res.Iterations, Converged: res.Converged, GradNorm: res.GradNorm}
}

func (f *fitter) runAdam() RestartResult {
	raws := make([]*tensor.Tensor, len(f.free))
	for i, p := range f.free {
		raws[i] = p.Raw()
	}
	opt := optim.NewAdam(raws, optim.AdamOptions{LR: f.opts.LR})
	best := RestartResult{Objective: math.Inf(-1)}
	bestRaw := make([]*tensor.Tensor, len(raws))
	var lastErr error
	for it := 1; it <= f.opts.MaxIter; it++ {
		obj, lml, gs, err := f.eval()
		if err != nil {
			lastErr = err
			break
		}
		if obj > best.Objective {
			best.Objective, best.LML = obj, lml
			for i, r := range raws {
				bestRaw[i] = r.Clone()
			}
		}
		if f.opts.Progress != nil {
			f.opts.Progress(FitEvent{Restart: f.restart, Iteration: it, Objective: obj, CGIterations: f.m.cgStats.Iterations})
		}
		for i := range gs {
			gs[i] = tensor.Neg(gs[i])
		}
		if err := opt.Step(gs); err != nil {
			lastErr = err
			break
		}
		best.Iterations = it
		if f.bounded {
			for i, r := range raws {
				tensor.MaximumTo(r, r, f.lower[i])
				tensor.MinimumTo(r, r, f.upper[i])
			}
		}
	}
	if math.IsInf(best.Objective, -1) {
		return RestartResult{Objective: math.NaN(), LML: math.NaN(), Err: lastErr}
	}
	for i, r := range raws {
		tensor.CopyInto(r, bestRaw[i])
	}
	return best
}

// budgetSpent returns a *tensor.NotConvergedError, naming the iterations
// and the gradient reached, when the kept start of an L-BFGS fit used all
// of its maxIter iterations (zero meaning the default, 100) without
// meeting a tolerance, and nil otherwise. The fitted model is
// returned beside it either way: it holds the best hyperparameters found.
func budgetSpent(op string, res *FitResult, maxIter int) error {
	if maxIter == 0 {
		maxIter = 100
	}
	if res == nil || res.Best < 0 {
		return nil
	}
	rr := res.Restarts[res.Best]
	if rr.Converged || rr.Err != nil || rr.Iterations < maxIter {
		return nil
	}
	return &tensor.NotConvergedError{Op: op, Iterations: rr.Iterations, Change: rr.GradNorm, Tol: lbfgsGradTol}
}

// lbfgsGradTol is the hyperparameter fits' L-BFGS gradient tolerance
// (optim's default), which budgetSpent reports against.
const lbfgsGradTol = 1e-5
