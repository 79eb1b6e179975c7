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

// fit maximises the Laplace approximation of the log marginal likelihood
// plus the log priors (see FitClassifier).
func (c *Classifier) fit(ctx context.Context, opts fitOptions) (*FitResult, error) {
	var slots []fitSlot
	for _, p := range c.params {
		if !p.Fixed() {
			slots = append(slots, paramSlot(p))
		}
	}
	build := func(g *graph.Graph) (*graph.Node, float64, error) {
		lml, err := c.LogMarginalLikelihoodNode(g)
		if err != nil {
			return nil, 0, err
		}
		obj := lml
		if lp := logPrior(g, c.params); lp != nil {
			obj = graph.Add(obj, lp)
		}
		return obj, lml.Item(), nil
	}
	return fitApprox(ctx, "gp.FitClassifier", c.params, slots, build, opts)
}

// fitSlot is one block of values that fitApprox optimises in place: a
// hyperparameter's raw tensor, or a tensor of inducing inputs.
type fitSlot struct {
	param *kernel.Hyperparam // nil for a plain tensor
	value *tensor.Tensor
	node  func(g *graph.Graph) *graph.Node // the Var bound to value in g
}

func paramSlot(p *kernel.Hyperparam) fitSlot {
	return fitSlot{param: p, value: p.Raw(), node: p.RawNode}
}

// fitApprox is the fitting loop of the approximate models (Classifier,
// Sparse): L-BFGS (optim.Minimize) on the slots' values, maximising the
// objective that build makes in a graph (build also returns the LML to
// report), from the current values and opts.Restarts random starts of the
// hyperparameters (log-uniform factors in [1/10, 10], or uniform within
// finite bounds; other slots restart from their initial values). Exact.Fit
// is tied to the exact model, hence this sibling.
func fitApprox(ctx context.Context, op string, all []*kernel.Hyperparam, slots []fitSlot, build func(g *graph.Graph) (*graph.Node, float64, error), opts fitOptions) (res *FitResult, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Optimizer != "" && opts.Optimizer != "lbfgs" {
		return nil, fmt.Errorf("%s: optimizer %q is not supported (only \"lbfgs\")", op, opts.Optimizer)
	}
	if opts.Restarts < 0 || opts.MaxIter < 0 {
		return nil, fmt.Errorf("%s: negative Restarts or MaxIter", op)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 100
	}
	byName := map[string]*kernel.Hyperparam{}
	for _, p := range all {
		byName[p.Name()] = p
	}
	for name := range opts.Bounds {
		if byName[name] == nil {
			return nil, fmt.Errorf("%s: bounds for unknown hyperparameter %q", op, name)
		}
	}
	lower := make([]*tensor.Tensor, len(slots))
	upper := make([]*tensor.Tensor, len(slots))
	bounded := false
	for i, s := range slots {
		lo, hi := math.Inf(-1), math.Inf(1)
		if s.param != nil {
			if b, ok := opts.Bounds[s.param.Name()]; ok {
				if lo, hi, err = s.param.RawBounds(b[0], b[1]); err != nil {
					return nil, fmt.Errorf("%s: %w", op, err)
				}
				bounded = true
			}
		}
		lower[i] = tensor.Full(s.value.DType(), lo, s.value.Shape()...)
		upper[i] = tensor.Full(s.value.DType(), hi, s.value.Shape()...)
	}
	saved := make([]*tensor.Tensor, len(slots))
	for i, s := range slots {
		saved[i] = s.value.Clone()
	}
	defer func() {
		if err != nil && res == nil {
			for i, s := range slots {
				tensor.CopyInto(s.value, saved[i])
			}
		}
	}()

	eval := slotEval(ctx, slots, build)

	rng := tensor.NewRNG(opts.Seed)
	start := func(r int) error {
		for i, s := range slots {
			tensor.CopyInto(s.value, saved[i])
			if r > 0 && s.param != nil {
				if err := s.param.Set(randomStart(s.param, opts.Bounds, rng)...); err != nil {
					return err
				}
			}
		}
		return nil
	}
	run := func(r int) RestartResult { return runLBFGSSlots(slots, eval, lower, upper, bounded, opts, r) }
	vals := make([]*tensor.Tensor, len(slots))
	for i, s := range slots {
		vals[i] = s.value
	}
	return bestOfStarts(ctx, op, opts.Restarts, vals, start, run)
}

// slotEval returns the evaluation of the fitting loops over slots: the
// objective that build makes in a graph recycled between calls, the LML
// it reports, and the gradient with respect to each slot's value (an
// error for a cancelled ctx, a failed build or a non-finite objective).
func slotEval(ctx context.Context, slots []fitSlot, build func(g *graph.Graph) (*graph.Node, float64, error)) func() (obj, lml float64, grads []*tensor.Tensor, err error) {
	g := graph.New()
	return func() (obj, lml float64, grads []*tensor.Tensor, err error) {
		defer tensor.Recover(&err)
		if err := ctx.Err(); err != nil {
			return 0, 0, nil, err
		}
		g.Reset()
		o, lml, err := build(g)
		if err != nil {
			return 0, 0, nil, err
		}
		xs := make([]*graph.Node, len(slots))
		for i, s := range slots {
			xs[i] = s.node(g)
		}
		gs := autodiff.Grad(o, xs...)
		grads = make([]*tensor.Tensor, len(gs))
		for i, gn := range gs {
			grads[i] = gn.Value().Clone()
		}
		obj = o.Item()
		if math.IsNaN(obj) || math.IsInf(obj, 0) {
			return obj, lml, nil, errors.New("gp: objective is not finite")
		}
		return obj, lml, grads, nil
	}
}

// randomStart draws a starting value for p around its current value.
func randomStart(p *kernel.Hyperparam, bounds map[string][2]float64, rng *tensor.RNG) []float64 {
	cur := p.Get()
	b, ok := bounds[p.Name()]
	_, unbounded := p.Bijector().(kernel.Identity)
	floor := p.Floor()
	v := make([]float64, len(cur))
	for i, x := range cur {
		switch {
		case ok && b[0] > 0 && !math.IsInf(b[1], 1):
			v[i] = math.Exp(math.Log(b[0]) + rng.Float64()*(math.Log(b[1])-math.Log(b[0])))
		case ok && !math.IsInf(b[0], -1) && !math.IsInf(b[1], 1):
			v[i] = b[0] + rng.Float64()*(b[1]-b[0])
		case unbounded:
			v[i] = x + rng.NormFloat64()
		default:
			v[i] = floor + (x-floor)*math.Exp(math.Log(10)*(2*rng.Float64()-1))
		}
		if ok {
			v[i] = math.Min(math.Max(v[i], b[0]), b[1])
		}
		if !unbounded && v[i] <= floor {
			v[i] = x
		}
	}
	return v
}

// runLBFGSSlots runs one L-BFGS start and leaves the slots at its result.
func runLBFGSSlots(slots []fitSlot, eval func() (float64, float64, []*tensor.Tensor, error), lower, upper []*tensor.Tensor, bounded bool, opts fitOptions, restart int) RestartResult {
	fail := func(it int, err error) RestartResult {
		return RestartResult{Objective: math.NaN(), LML: math.NaN(), Iterations: it, Err: err}
	}
	if len(slots) == 0 {
		obj, lml, _, err := eval()
		if err != nil {
			return fail(0, err)
		}
		return RestartResult{Objective: obj, LML: lml, Converged: true}
	}
	x := make([]*tensor.Tensor, len(slots))
	for i, s := range slots {
		x[i] = s.value.Clone()
	}
	objective := func(xs, grad []*tensor.Tensor) (float64, error) {
		for i, s := range slots {
			tensor.CopyInto(s.value, xs[i])
		}
		obj, _, gs, err := eval()
		if err != nil {
			return 0, err
		}
		for i := range grad {
			tensor.CopyInto(grad[i], tensor.Neg(gs[i]))
		}
		return -obj, nil
	}
	cfg := optim.LBFGSOptions{MaxIter: opts.MaxIter, GradTol: lbfgsGradTol}
	if bounded {
		cfg.Lower, cfg.Upper = lower, upper
	}
	cfg.Callback = func(iter int, fv, gnorm float64) {
		if opts.Progress != nil {
			opts.Progress(FitEvent{Restart: restart, Iteration: iter, Objective: -fv})
		}
	}
	res, err := optim.Minimize(objective, x, cfg)
	for i, s := range slots {
		tensor.CopyInto(s.value, x[i])
	}
	if err != nil {
		return fail(res.Iterations, err)
	}
	obj, lml, _, err := eval()
	if err != nil {
		return fail(res.Iterations, err)
	}
	return RestartResult{Objective: obj, LML: lml, Iterations: res.Iterations, Converged: res.Converged, GradNorm: res.GradNorm}
}
