package ppl

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/inference"
)

// ImportanceOptions configures Importance. The zero value means the
// defaults given.
type ImportanceOptions struct {
	Draws int // proposals (default 1000)
	// Params holds the parameters of a fitted guide (SVI.Params); nil
	// for a guide without Param sites.
	Params *ParamStore
	Seed   uint64
}

// Weighted is the result of Importance: draws of the latent sites with
// their weights.
type Weighted struct {
	Samples Samples   // the latent sites' draws, keyed by site
	LogW    []float64 // log p(x, z) − log q(z) of each draw
	Weights []float64 // self-normalised weights (sum to 1)
	// ESS is Kish's effective sample size (Σw)²/Σw².
	ESS float64
	// LogEvidence estimates log p(x): the log of the mean unnormalised
	// weight.
	LogEvidence float64
}

// Importance draws the latent sites from a proposal and weights each draw
// by the model's joint density over the proposal's (Owen 2013, "Monte
// Carlo theory, methods and examples", ch. 9), all through the handlers:
// the proposal runs under Record and Seed, the model under Replay of its
// trace. A nil proposal draws from the prior, so the weights are the
// likelihood. The proposal may be any guide: a hand-written one, an
// automatic guide with the Params of its SVI fit, or Laplace.Guide.
// Bad models, and a proposal that misses a latent site, fail before any
// work. When ctx is cancelled it returns the draws so far with ctx.Err()
// wrapped.
func Importance(ctx context.Context, model, proposal Model, opts ImportanceOptions) (w *Weighted, err error) {
	const op = "ppl.Importance"
	if opts.Draws < 0 {
		return nil, fmt.Errorf("%s: Draws %d is negative", op, opts.Draws)
	}
	if opts.Draws == 0 {
		opts.Draws = 1000
	}
	mt, err := prototype(op, model, opts.Seed)
	if err != nil {
		return nil, err
	}
	store := opts.Params
	if store == nil {
		store = NewParamStore()
	}
	s := &SVI{Params: store, model: enumerate(mt, model), guide: proposal}
	if proposal != nil {
		if err := s.check(op, mt, opts.Seed, false); err != nil {
			return nil, err
		}
	}
	w = &Weighted{}
	var stopped error
	draws, err := collect(op, opts.Draws, func(g *graph.Graph, i int) *Trace {
		if ctx.Err() != nil {
			stopped = fmt.Errorf("%s: stopped after %d of %d draws: %w", op, i, opts.Draws, ctx.Err())
			return nil
		}
		seed := opts.Seed + uint64(i+1)*0x9e3779b97f4a7c15
		var lw *graph.Node
		gt, mtr := &Trace{}, &Trace{}
		if proposal == nil {
			Run(g, Record(Seed(model, seed), mtr))
			for _, site := range mtr.Sites {
				if site.Kind == SampleSite && site.Observed {
					lw = add(lw, site.ScaledLogProb())
				}
			}
		} else {
			gt, mtr = s.traces(g, seed)
			lw = logWeight(gt, mtr, false)
		}
		w.LogW = append(w.LogW, lw.Item())
		return mtr
	}, func(site *Site) *graph.Node {
		if site.Kind == SampleSite && !site.Observed && site.EnumDim == 0 {
			return site.Value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := len(w.LogW)
	if n == 0 {
		return nil, stopped
	}
	w.Samples = draws
	top := math.Inf(-1)
	for _, lw := range w.LogW {
		top = math.Max(top, lw)
	}
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return nil, fmt.Errorf("%s: no draw has a finite weight", op)
	}
	w.Weights, w.ESS, w.LogEvidence = inference.SelfNormalize(w.LogW)
	return w, stopped
}
