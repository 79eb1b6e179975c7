package ppl

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Objective is the bound SVI maximises.
type Objective int

const (
	// TraceELBO is the evidence lower bound E_q[log p(x, z) − log q(z)],
	// estimated from the guide's draws (Ranganath, Gerrish and Blei 2014;
	// Kingma and Welling 2014).
	TraceELBO Objective = iota
	// MeanFieldELBO is the ELBO with KL(q(zᵢ) ‖ p(zᵢ | …)) in closed form
	// for every latent site whose guide and prior pair has one in
	// package probabilistic's KL registry, and estimated by sampling for
	// the others: lower variance for mean-field guides, as Pyro's
	// TraceMeanField_ELBO.
	MeanFieldELBO
	// RenyiELBO is Rényi's α bound (Li and Turner 2016, "Rényi divergence
	// variational inference"), 1/(1−α)·log mean_k exp((1−α)·wₖ) over the
	// Particles log-weights wₖ; α = 0 is the importance-weighted bound of
	// Burda, Grosse and Salakhutdinov (2016), tighter than the ELBO as
	// Particles grows.
	RenyiELBO
)

// SVIOptions configures FitSVI. The zero value means the defaults given.
type SVIOptions struct {
	Steps     int       // optimiser steps (default 1000)
	Particles int       // draws from the guide per step (default 1)
	Objective Objective // the bound (default TraceELBO)
	Alpha     float64   // RenyiELBO's α ≥ 0, not 1 (0: the importance-weighted bound)
	LR        float64   // the default optimiser's learning rate (Adam, default 0.01)
	// Optimizer builds the optimiser over the parameters' unconstrained
	// tensors; nil means optim.NewAdam with LR.
	Optimizer func(params []*tensor.Tensor) optim.Optimizer
	// StickTheLanding drops the score term from the guide's density in the
	// ELBO's gradient (the guide's parameters enter log q only through the
	// draw), the estimator of Roeder, Wu and Duvenaud (2017, "Sticking the
	// landing"): unbiased for TraceELBO, and with zero variance at the
	// optimum when the guide's family holds the posterior. It costs one
	// more run of the guide per particle and applies to TraceELBO only.
	StickTheLanding bool
	// Schedule, when set, gives the learning rate of each step (from 0).
	Schedule optim.Schedule
	Seed     uint64
}

// SVI is a fitted guide: its parameters (and the model's) and the trace
// of the objective.
type SVI struct {
	// Params holds every parameter of the guide and the model.
	Params *ParamStore
	// Loss is the estimate of −bound at each step.
	Loss  []float64
	model Model
	guide Model
}

// FitSVI fits the guide's parameters (and the model's Param sites) by
// stochastic variational inference (Hoffman et al. 2013; Wingate and
// Weber 2013, "Automated variational inference in probabilistic
// programming"): each step runs the guide under Record and Seed, runs the
// model under Replay of the guide's trace, and follows the gradient of
// the objective. Guide sites without a reparameterised sampler
// (discrete ones) get the score-function gradient, with the running mean
// of the bound as a baseline (Ranganath, Gerrish and Blei 2014, "Black
// box variational inference"). Plates that subsample scale their sites by
// size/subsample, so each step's estimate is unbiased for the full data.
//
// Before any work the model and the guide are run once: a site name used
// twice, a plate that disagrees with a site, data outside their support,
// a latent site of the model that the guide misses, or a guide site that
// the model lacks returns an error. FitSVI spends a fixed budget and never
// reports non-convergence; when ctx is cancelled it returns the guide as
// it stands with ctx.Err() wrapped.
func FitSVI(ctx context.Context, model, guide Model, opts SVIOptions) (*SVI, error) {
	const op = "ppl.FitSVI"
	if guide == nil {
		return nil, fmt.Errorf("%s: nil guide", op)
	}
	if opts.Steps < 0 || opts.Particles < 0 || !(opts.LR >= 0) || opts.Alpha < 0 || (opts.Objective == RenyiELBO && opts.Alpha == 1) {
		return nil, fmt.Errorf("%s: Steps %d, Particles %d, LR %v and Alpha %v must not be negative (Alpha not 1)", op, opts.Steps, opts.Particles, opts.LR, opts.Alpha)
	}
	if opts.Steps == 0 {
		opts.Steps = 1000
	}
	if opts.Particles == 0 {
		opts.Particles = 1
	}
	if opts.LR == 0 {
		opts.LR = 0.01
	}
	mt, err := prototype(op, model, opts.Seed)
	if err != nil {
		return nil, err
	}
	s := &SVI{Params: NewParamStore(), model: enumerate(mt, model), guide: guide}
	if err := s.check(op, mt, opts.Seed, true); err != nil {
		return nil, err
	}
	params := s.Params.Unconstrained()
	var opt optim.Optimizer
	if opts.Optimizer != nil {
		opt = opts.Optimizer(params)
	} else {
		opt = optim.NewAdam(params, optim.AdamOptions{LR: opts.LR})
	}
	g := graph.New()
	baseline := math.NaN()
	for step := range opts.Steps {
		if err := ctx.Err(); err != nil {
			return s, fmt.Errorf("%s: stopped after %d steps: %w", op, step, err)
		}
		if opts.Schedule != nil {
			opt.SetLR(opts.Schedule.LR(step))
		}
		loss, grads, err := s.step(g, opts, &baseline, opts.Seed+uint64(step+1)*0x9e3779b97f4a7c15)
		if err != nil {
			return s, fmt.Errorf("%s: step %d: %w", op, step, err)
		}
		if err := opt.Step(grads); err != nil {
			return s, fmt.Errorf("%s: step %d: %w", op, step, err)
		}
		s.Loss = append(s.Loss, loss)
	}
	return s, nil
}

// check runs the guide and the model once, filling the store, and
// compares their sites.
func (s *SVI) check(op string, mt *Trace, seed uint64, needParams bool) (err error) {
	defer catch(op, &err)
	g := graph.New()
	gt, _ := s.traces(g, seed)
	for _, m := range mt.Latent() {
		if q := gt.Site(m.Name); q == nil || q.Kind != SampleSite || q.auxiliary {
			return fmt.Errorf("%s: the guide misses the latent site %q of the model", op, m.Name)
		}
	}
	for _, q := range gt.Sites {
		if q.Kind != SampleSite || q.auxiliary {
			continue
		}
		if m := mt.Site(q.Name); m != nil && m.Enumerate {
			return errEnumGuide(op, q.Name)
		}
		if m := mt.Site(q.Name); m == nil || m.Kind != SampleSite || m.Observed {
			return fmt.Errorf("%s: the guide's site %q is not a latent site of the model", op, q.Name)
		}
	}
	if needParams && len(s.Params.names) == 0 {
		return fmt.Errorf("%s: the guide and the model have no parameter to fit", op)
	}
	return nil
}

// traces runs the guide and then the model replaying it, on g.
func (s *SVI) traces(g *graph.Graph, seed uint64) (gt, mt *Trace) {
	gt, mt = &Trace{}, &Trace{}
	Run(g, Record(Seed(WithParams(s.guide, s.Params), seed), gt))
	Run(g, Record(Replay(Seed(WithParams(s.model, s.Params), seed^0x5851f42d4c957f2d), gt), mt))
	return gt, mt
}

// step returns one estimate of −bound and its gradients.
func (s *SVI) step(g *graph.Graph, opts SVIOptions, baseline *float64, seed uint64) (loss float64, grads []*tensor.Tensor, err error) {
	defer catch("step", &err)
	g.Reset()
	n := len(s.Params.names)
	ws := make([]*graph.Node, opts.Particles)
	var surrogate *graph.Node
	for p := range opts.Particles {
		gt, mt := s.traces(g, seed+uint64(p)*0xbf58476d1ce4e5b9)
		lq := gt
		if opts.StickTheLanding && opts.Objective == TraceELBO {
			lq = &Trace{}
			Run(g, Record(Replay(withParams(s.guide, s.Params, true), gt), lq))
		}
		ws[p] = logWeight(lq, mt, opts.Objective == MeanFieldELBO)
		if sf := scoreTerms(gt); sf != nil {
			b := *baseline
			if math.IsNaN(b) {
				b = ws[p].Item()
			}
			adv := graph.StopGradient(graph.AddScalar(ws[p], -b))
			surrogate = add(surrogate, graph.Mul(adv, sf))
		}
	}
	if len(s.Params.names) != n {
		return 0, nil, fmt.Errorf("parameters %v appeared after the first run: declare every parameter on every run", s.Params.names[n:])
	}
	bound := boundOf(ws, opts)
	if w := bound.Item(); !math.IsNaN(w) && !math.IsInf(w, 0) {
		if math.IsNaN(*baseline) {
			*baseline = w
		} else {
			*baseline = 0.9**baseline + 0.1*w
		}
	}
	obj := bound
	if surrogate != nil {
		obj = graph.Add(obj, graph.MulScalar(surrogate, 1/float64(opts.Particles)))
	}
	negObj := graph.Neg(obj)
	gs := autodiff.Grad(negObj, s.Params.nodes(g)...)
	grads = make([]*tensor.Tensor, len(gs))
	for i, gn := range gs {
		grads[i] = gn.Value()
	}
	return -bound.Item(), grads, nil
}

// boundOf combines the particles' log-weights into the objective.
func boundOf(ws []*graph.Node, opts SVIOptions) *graph.Node {
	if opts.Objective != RenyiELBO {
		var sum *graph.Node
		for _, w := range ws {
			sum = add(sum, w)
		}
		return graph.MulScalar(sum, 1/float64(len(ws)))
	}
	a := 1 - opts.Alpha
	stacked := graph.MulScalar(graph.Stack(0, ws...), a)
	lme := graph.AddScalar(graph.LogSumExp(stacked, []int{0}, false), -math.Log(float64(len(ws))))
	return graph.MulScalar(lme, 1/a)
}

// logWeight returns log p(x, z) − log q(z) for one draw z of the guide,
// with the closed-form KL in place of the latent terms where the registry
// has it when meanField is set.
func logWeight(gt, mt *Trace, meanField bool) *graph.Node {
	var w *graph.Node
	analytic := map[string]bool{}
	enumerated := slices.ContainsFunc(mt.Sites, func(s *Site) bool { return s.EnumDim != 0 })
	for _, m := range mt.Sites {
		if m.Kind != SampleSite {
			continue
		}
		if meanField && !m.Observed && m.EnumDim == 0 {
			q := gt.Site(m.Name)
			if kl, ok := closedKL(q, m); ok {
				w = add(w, graph.Neg(kl))
				analytic[m.Name] = true
				continue
			}
		}
		if !enumerated {
			w = add(w, m.ScaledLogProb())
		}
	}
	if enumerated { // the enumerated sites summed out of the model's terms
		w = add(w, enumLogJoint(mt, func(s *Site) bool { return analytic[s.Name] }))
	}
	for _, q := range gt.Sites {
		if q.Kind == SampleSite && !analytic[q.Name] {
			w = add(w, graph.Neg(q.ScaledLogProb()))
		}
	}
	return w
}

// closedKL returns the guide site's KL from the model site's
// distribution, summed and scaled, when the registry has the pair and the
// batch shapes agree.
func closedKL(q, m *Site) (kl *graph.Node, ok bool) {
	if q == nil || m.Mask != nil || q.Mask != nil || !slices.Equal(q.Dist.BatchShape(), m.Value.Shape()) {
		return nil, false
	}
	k, err := probabilistic.KL(q.Dist, m.Dist)
	if err != nil || !slices.Equal(k.Shape(), q.Dist.BatchShape()) {
		return nil, false
	}
	k = graph.Sum(k, nil, false)
	if m.Scale != 1 {
		k = graph.MulScalar(k, m.Scale)
	}
	return k, true
}

// scoreTerms returns Σ log q of the guide's sites drawn without a
// reparameterisation (nil if none): the score-function term's factor.
func scoreTerms(gt *Trace) *graph.Node {
	var sf *graph.Node
	for _, q := range gt.Sites {
		if q.Kind == SampleSite && !q.reparam && !q.Observed && q.Value.IsConst() {
			sf = add(sf, q.ScaledLogProb())
		}
	}
	return sf
}
