package gp

import (
	"context"
	"errors"
	"fmt"
	"math"

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
// in params that are not fixed, from their current values: by fitApprox's
// L-BFGS (the default) or by Adam, whose many small steps suit the many
// parameters of a deep kernel's network. It serves the models with their
// own objective (Multitask, DirichletClassifier). It returns an error, and
// leaves the hyperparameters unchanged, when the options are invalid or
// the fit fails from the start; a cancelled ctx stops it with the best
// point so far and the wrapped ctx error.
func hyperFit(ctx context.Context, op string, params []*kernel.Hyperparam, objective objectiveFunc, opts fitOptions) (*FitResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var slots []fitSlot
	for _, p := range params {
		if !p.Fixed() {
			slots = append(slots, paramSlot(p))
		}
	}
	build := func(g *graph.Graph) (*graph.Node, float64, error) {
		o, l, err := objective(g)
		if err != nil {
			return nil, 0, err
		}
		return o, l.Item(), nil
	}
	switch opts.Optimizer {
	case "", "lbfgs":
		return fitApprox(ctx, op, params, slots, build, opts)
	case "adam":
	default:
		return nil, fmt.Errorf("%s: unknown optimizer %q (want \"lbfgs\" or \"adam\")", op, opts.Optimizer)
	}
	if opts.MaxIter < 0 || opts.LR < 0 {
		return nil, fmt.Errorf("%s: negative MaxIter or LR", op)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 300
	}
	if opts.LR == 0 {
		opts.LR = 0.05
	}
	return adamSlots(ctx, op, slots, slotEval(ctx, slots, build), opts)
}

// adamSlots runs opts.MaxIter Adam steps on the slots' values from their
// current values and leaves them at the best iterate. If the first
// evaluation fails it returns the error with the values unchanged; a later
// failure stops the run at the best iterate, recorded in the start's Err.
func adamSlots(ctx context.Context, op string, slots []fitSlot, eval func() (float64, float64, []*tensor.Tensor, error), opts fitOptions) (*FitResult, error) {
	vals := make([]*tensor.Tensor, len(slots))
	best := make([]*tensor.Tensor, len(slots))
	for i, s := range slots {
		vals[i], best[i] = s.value, s.value.Clone()
	}
	rr := RestartResult{Objective: math.Inf(-1)}
	opt := optim.NewAdam(vals, optim.AdamOptions{LR: opts.LR})
	for it := 1; it <= opts.MaxIter; it++ {
		obj, lml, gs, err := eval()
		if err != nil {
			if it == 1 && ctx.Err() == nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			if ctx.Err() == nil {
				rr.Err = err
			}
			break
		}
		if obj > rr.Objective {
			rr.Objective, rr.LML = obj, lml
			for i, v := range vals {
				tensor.CopyInto(best[i], v)
			}
		}
		if opts.Progress != nil {
			opts.Progress(FitEvent{Iteration: it, Objective: obj})
		}
		if len(gs) == 0 {
			break
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
	for i, v := range vals {
		tensor.CopyInto(v, best[i])
	}
	res := &FitResult{LML: rr.LML, Objective: rr.Objective, Restarts: []RestartResult{rr}, Iterations: rr.Iterations}
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
