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

// objectiveFunc builds, in g, the scalar objective a fit maximises and the
// log marginal likelihood it contains (the same node when there is no
// prior), or returns the data error that prevented it.
type objectiveFunc func(g *graph.Graph) (obj, lml *graph.Node, err error)

// hyperFit maximises objective over the raw values of the hyperparameters
// in params that are not fixed, from their current values, by L-BFGS or
// Adam (the knobs of opts except Restarts and Bounds, which the models
// that use it do not offer). It is the one-start sibling of Exact's fitter
// for models with their own objective (Multitask, DirichletClassifier).
// The hyperparameters are left at the best point found; if the first
// evaluation fails they are left unchanged and the error is returned. A
// cancelled ctx stops it after the current evaluation with the best point
// so far and the wrapped ctx error.
func hyperFit(ctx context.Context, op string, params []*kernel.Hyperparam, objective objectiveFunc, opts fitOptions) (*FitResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	switch opts.Optimizer {
	case "":
		opts.Optimizer = "lbfgs"
	case "lbfgs", "adam":
	default:
		return nil, fmt.Errorf("%s: unknown optimizer %q (want \"lbfgs\" or \"adam\")", op, opts.Optimizer)
	}
	if opts.MaxIter < 0 || opts.LR < 0 {
		return nil, fmt.Errorf("%s: negative MaxIter or LR", op)
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
	var free []*tensor.Tensor
	for _, p := range params {
		if !p.Fixed() {
			free = append(free, p.Raw())
		}
	}
	g := graph.New()
	eval := func() (obj, lml float64, grads []*tensor.Tensor, err error) {
		defer tensor.Recover(&err)
		if err := ctx.Err(); err != nil {
			return 0, 0, nil, err
		}
		g.Reset()
		o, l, err := objective(g)
		if err != nil {
			return 0, 0, nil, err
		}
		xs := make([]*graph.Node, len(free))
		for i, r := range free {
			xs[i] = g.VarOf(r)
		}
		gs := autodiff.Grad(o, xs...)
		grads = make([]*tensor.Tensor, len(gs))
		for i, gn := range gs {
			grads[i] = gn.Value().Clone()
		}
		obj, lml = o.Item(), l.Item()
		if math.IsNaN(obj) || math.IsInf(obj, 0) {
			return obj, lml, nil, fmt.Errorf("%s: objective is not finite", op)
		}
		return obj, lml, grads, nil
	}
	best := make([]*tensor.Tensor, len(free))
	save := func() {
		for i, r := range free {
			best[i] = r.Clone()
		}
	}
	restore := func() {
		for i, r := range free {
			tensor.CopyInto(r, best[i])
		}
	}
	save()
	res := &FitResult{Best: 0, Objective: math.Inf(-1)}
	rr := RestartResult{Objective: math.Inf(-1)}
	obj0, lml0, _, err := eval()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	rr.Objective, rr.LML = obj0, lml0
	if len(free) > 0 && opts.Optimizer == "adam" {
		opt := optim.NewAdam(free, optim.AdamOptions{LR: opts.LR})
		for it := 1; it <= opts.MaxIter; it++ {
			obj, lml, gs, err := eval()
			if err != nil {
				if ctx.Err() == nil {
					rr.Err = err
				}
				break
			}
			if obj > rr.Objective || it == 1 {
				rr.Objective, rr.LML = obj, lml
				save()
			}
			if opts.Progress != nil {
				opts.Progress(FitEvent{Iteration: it, Objective: obj})
			}
			for i := range gs {
				gs[i] = tensor.Neg(gs[i])
			}
			if err := opt.Step(gs); err != nil {
				rr.Err = err
				break
			}
			rr.Iterations = it
		}
	} else if len(free) > 0 {
		x := make([]*tensor.Tensor, len(free))
		for i, r := range free {
			x[i] = r.Clone()
		}
		f := func(xs, grad []*tensor.Tensor) (float64, error) {
			for i, r := range free {
				tensor.CopyInto(r, xs[i])
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
		cfg.Callback = func(iter int, fv, _ float64) {
			if opts.Progress != nil {
				opts.Progress(FitEvent{Iteration: iter, Objective: -fv})
			}
		}
		out, err := optim.Minimize(f, x, cfg)
		rr.Iterations, rr.Converged, rr.GradNorm = out.Iterations, out.Converged, out.GradNorm
		for i, r := range free {
			tensor.CopyInto(r, x[i])
		}
		if obj, lml, _, e := eval(); e == nil && (err == nil || obj > rr.Objective) {
			rr.Objective, rr.LML = obj, lml
			save()
		} else if err == nil {
			err = e
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			rr.Err = err
		}
	} else {
		rr.Converged = true
	}
	restore()
	res.Objective, res.LML, res.Iterations = rr.Objective, rr.LML, rr.Iterations
	res.Restarts = []RestartResult{rr}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("%s: fit cancelled: %w", op, err)
	}
	return res, nil
}

// choleskyJitter factors a + jitter·I, trying no jitter first and then
// 1e-8 (1e-5 in float32) growing ×10, jitterTries values in all; report,
// if set, hears of each escalation. It returns a *CholeskyError when every
// try fails.
func choleskyJitter(a *graph.Node, report func(jitter float64, cause error)) (*graph.Node, error) {
	g, dt, n := a.Graph(), a.DType(), a.Shape()[0]
	jitters := []float64{0}
	for i, j := 0, initialJitter(dt); i < jitterTries; i, j = i+1, j*10 {
		jitters = append(jitters, j)
	}
	for i, jitter := range jitters {
		ak := a
		if jitter > 0 {
			ak = graph.AddDiag(a, g.Scalar(dt, jitter))
		}
		l, err := tryCholesky(ak)
		if err == nil {
			return l, nil
		}
		var npd *tensor.NotPositiveDefiniteError
		if !errors.As(err, &npd) {
			return nil, err
		}
		if math.IsNaN(npd.Value) || i == len(jitters)-1 {
			return nil, &CholeskyError{N: n, Tries: i, Jitter: jitter, Err: npd}
		}
		if report != nil {
			report(jitters[i+1], npd)
		}
	}
	panic("unreachable")
}
