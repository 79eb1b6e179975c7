package ppl

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Model is a generative story: an ordinary Go function that declares its
// random choices with Sample and Observe, its point-estimated parameters
// with Param, named intermediate values with Deterministic, and its
// conditionally independent dimensions with Plate. A guide has the same
// type. The engines call a model many times, on several goroutines for
// NUTS's chains, so it must not keep state between calls.
type Model func(c *Ctx)

// SiteKind tells what a Site declares.
type SiteKind int

const (
	// SampleSite is a random choice (Sample or Observe).
	SampleSite SiteKind = iota
	// ParamSite is a point-estimated parameter (Param).
	ParamSite
	// DeterministicSite is a named function of other sites (Deterministic).
	DeterministicSite
	// PlateSite is a plate: its Size and the Indices of its subsample.
	PlateSite
)

// Site is one named statement of a model as it passes through the
// handlers: each handler may read or change it on the way in (Process) and
// on the way out (Postprocess), as in Pyro's effect handlers (Bingham et
// al. 2019, "Pyro: Deep universal probabilistic programming").
type Site struct {
	Name string
	Kind SiteKind
	// Dist is the distribution of a sample site.
	Dist probabilistic.Distribution
	// Value is the site's value: drawn, observed, substituted or computed.
	Value *graph.Node
	// Observed marks a sample site whose value is data.
	Observed bool
	// Scale multiplies the site's log-probability: the product of the
	// enclosing plates' size/subsample ratios and of Scale handlers.
	Scale float64
	// Mask, when not nil, multiplies the site's elementwise log-probability
	// (1 keeps an element, 0 drops it).
	Mask *graph.Node
	// Plates are the enclosing plates, outermost first.
	Plates []PlateFrame
	// LogJacobian is the log|det J| of the map from an unconstrained value
	// to Value, added to the joint density (set by Unconstrain).
	LogJacobian *graph.Node
	// Init and Constraint are a parameter site's initial (constrained)
	// value and the bijector from the real line onto its domain (nil: real).
	Init       *tensor.Tensor
	Constraint probabilistic.Bijector
	// Size and Indices are a plate site's full size and the indices of its
	// subsample (all of 0…Size−1 when it does not subsample).
	Size    int
	Indices []int
	// RNG draws the site's value when no handler supplied one (set by Seed).
	RNG *tensor.RNG
	// Stop hides the site from the handlers outside the one that set it
	// (set by Block).
	Stop bool
	// Enumerate marks a discrete latent site declared by Enumerated, which
	// the engines sum out instead of sampling.
	Enumerate bool
	// EnumDim is the batch dimension (negative) along which Enum laid out
	// the site's values, 0 when the site is not enumerated in this run.
	EnumDim int

	enumK      int          // the number of values of an Enumerated site
	enumValue  *graph.Node  // the value Enum gave it
	markov     *markovFrame // the Markov loop step it was declared in
	subsample  int          // plate sites: the requested subsample size (0: all)
	dim        int          // plate sites: the batch dimension (negative)
	unobserve  bool         // set by predictive sampling: draw an observed site afresh
	auxiliary  bool         // a guide's site that the model does not have
	reparam    bool         // the value is a reparameterised draw
	logDensity *graph.Node
	adopt      bool // a module's parameter: the store keeps Init itself
}

// PlateFrame is one enclosing plate as a site sees it.
type PlateFrame struct {
	Name string
	Size int // the full size
	Sub  int // the subsample size
	Dim  int // the batch dimension, counted from the right (−1 the last)
}

// Ctx is the state of one run of a model: its graph, the handlers wrapped
// around it and the plates it is inside. Engines create it; a model only
// passes it to Sample, Param, Plate and the rest.
type Ctx struct {
	g      *graph.Graph
	stack  []Handler
	plates []PlateFrame
	markov *markovFrame    // the Markov loop the model is in, if any
	loops  int             // Markov loops entered so far in this run
	names  map[string]bool // the site names used so far
}

// Graph returns the graph the model builds its nodes in.
func (c *Ctx) Graph() *graph.Graph { return c.g }

// Const returns t as a constant of the model's graph: how a model brings
// its data in.
func (c *Ctx) Const(t *tensor.Tensor) *graph.Node { return c.g.Const(t) }

// Scalar returns v as a scalar constant of the model's graph in float64.
func (c *Ctx) Scalar(v float64) *graph.Node { return c.g.Scalar(tensor.Float64, v) }

// Run runs m once on g with no handler other than those m wraps itself.
// Engines and tests compose handlers around m first, e.g.
// Run(g, Record(Seed(m, 1), tr)). It panics as the model's statements do.
func Run(g *graph.Graph, m Model) {
	if g == nil || m == nil {
		tensor.Fail("ppl.Run", "nil graph or model")
	}
	m(&Ctx{g: g, names: map[string]bool{}})
}

// Sample declares the random choice name ~ d and returns its value: a
// reparameterised draw where d has one (so gradients flow through it), a
// constant draw otherwise, or whatever value a handler supplies (Condition,
// Substitute, Replay, Unconstrain). Inside plates, a d whose batch shape
// lacks a plate's dimension (to the left of its own axes) is drawn once
// per row of the plate. It panics with a *tensor.Error when the name was
// used before in this run, or when the value's batch shape disagrees with
// an enclosing plate.
func Sample(c *Ctx, name string, d probabilistic.Distribution) *graph.Node {
	if d == nil {
		tensor.Fail("ppl.Sample", "site %q has a nil distribution", name)
	}
	s := &Site{Name: name, Kind: SampleSite, Dist: d}
	c.apply(s)
	return s.Value
}

// Observe declares the random choice name ~ d with its value observed:
// the data enter the log-likelihood. A nil value makes it a sample site
// like Sample's (a model written once for fitting and for simulation).
// Data outside d's support are reported before any work by the engines
// (Run panics with a *SupportError).
func Observe(c *Ctx, name string, d probabilistic.Distribution, value *tensor.Tensor) *graph.Node {
	if d == nil {
		tensor.Fail("ppl.Observe", "site %q has a nil distribution", name)
	}
	s := &Site{Name: name, Kind: SampleSite, Dist: d}
	if value != nil {
		s.Value, s.Observed = c.g.Const(value), true
	}
	c.apply(s)
	return s.Value
}

// Param declares a point-estimated parameter with the given initial value
// (constrained) and constraint, the bijector from the real line onto its
// domain (nil for the real line, probabilistic.Softplus{} or Exp{} for a
// positive one). Without a WithParams handler its value is the initial
// one; under WithParams (as in FitSVI) it is a variable of the graph,
// optimised in the unconstrained space.
func Param(c *Ctx, name string, init *tensor.Tensor, constraint probabilistic.Bijector) *graph.Node {
	if init == nil {
		tensor.Fail("ppl.Param", "parameter %q has a nil initial value", name)
	}
	s := &Site{Name: name, Kind: ParamSite, Init: init, Constraint: constraint}
	c.apply(s)
	return s.Value
}

// Deterministic records v under name, so that traces, posteriors and
// predictive draws report it, and returns v (or the value a handler put
// in its place).
func Deterministic(c *Ctx, name string, v *graph.Node) *graph.Node {
	if v == nil {
		tensor.Fail("ppl.Deterministic", "site %q has a nil value", name)
	}
	s := &Site{Name: name, Kind: DeterministicSite, Value: v}
	c.apply(s)
	return s.Value
}

// apply sends s through the handler stack as NumPyro does: Process from
// the innermost handler outwards until one stops the site, the default
// behaviour, then Postprocess on the same handlers from the outermost in.
func (c *Ctx) apply(s *Site) {
	if c.names == nil {
		tensor.Fail("ppl", "the Ctx was not made by Run or an engine")
	}
	if s.Name == "" {
		tensor.Fail("ppl.Sample", "a site has an empty name")
	}
	if c.names[s.Name] {
		tensor.Fail("ppl.Sample", "site name %q is used twice", s.Name)
	}
	c.names[s.Name] = true
	s.Scale = 1
	s.Plates = append([]PlateFrame(nil), c.plates...)
	if c.markov != nil {
		s.markov = &markovFrame{loop: c.markov.loop, step: c.markov.step, history: c.markov.history}
	}
	for _, p := range c.plates {
		if p.Sub != p.Size {
			s.Scale *= float64(p.Size) / float64(p.Sub)
		}
	}
	n := 0
	for i := len(c.stack) - 1; i >= 0; i-- {
		n++
		c.stack[i].Process(s)
		if s.Stop {
			break
		}
	}
	c.defaults(s)
	for _, h := range c.stack[len(c.stack)-n:] {
		h.Postprocess(s)
	}
}

// defaults gives a site its value when no handler did, and checks it.
func (c *Ctx) defaults(s *Site) {
	switch s.Kind {
	case SampleSite:
		if s.Value == nil {
			if s.RNG == nil {
				tensor.Fail("ppl.Sample", "site %q needs a random draw but no Seed handler wraps the model", s.Name)
			}
			n, full := plateDraws(s)
			if r, ok := s.Dist.(probabilistic.RSampler); ok {
				s.Value, s.reparam = r.RSample(s.RNG, n), true
			} else {
				s.Value = c.g.Const(s.Dist.Sample(s.RNG, n))
			}
			if n > 0 {
				s.Value = graph.Reshape(s.Value, append(full, s.Dist.EventShape()...)...)
			}
		}
		if s.EnumDim != 0 && s.Value != s.enumValue { // another handler gave it a value
			s.EnumDim = 0
		}
		if s.EnumDim == 0 {
			checkPlates(s)
		}
		if s.Observed {
			checkSupport(s)
		}
	case ParamSite:
		if s.Value == nil && s.adopt {
			s.Value = c.g.VarOf(s.Init)
		} else if s.Value == nil {
			s.Value = c.g.Const(s.Init)
		}
	case PlateSite:
		if s.Indices == nil {
			if s.subsample == 0 || s.subsample == s.Size {
				s.Indices = make([]int, s.Size)
				for i := range s.Indices {
					s.Indices[i] = i
				}
			} else {
				if s.RNG == nil {
					tensor.Fail("ppl.Plate", "plate %q subsamples but no Seed handler wraps the model", s.Name)
				}
				s.Indices = sortedSubset(s.RNG, s.Size, s.subsample)
			}
		}
	}
}

// plateDraws returns how many draws of the site's distribution fill the
// enclosing plates (0: one draw already does) and the batch shape they
// fill: a plate broadcasts a distribution whose batch shape lacks its
// dimension, as in Pyro, by drawing independent copies along the leading
// axes. A batch shape that disagrees with a plate is left to checkPlates.
func plateDraws(s *Site) (int, []int) {
	batch := s.Dist.BatchShape()
	need := len(batch)
	for _, p := range s.Plates {
		need = max(need, -p.Dim)
	}
	full := make([]int, need)
	for i := range full {
		full[i] = 1
	}
	copy(full[need-len(batch):], batch)
	for _, p := range s.Plates {
		if k := need + p.Dim; k < need-len(batch) {
			full[k] = p.Sub
		}
	}
	n := size(full[:need-len(batch)])
	if n == 1 && need == len(batch) {
		return 0, nil
	}
	return n, full
}

// checkPlates fails unless the site's batch shape (its value's shape
// without the event axes) has each enclosing plate's subsample size at the
// plate's dimension.
func checkPlates(s *Site) {
	if len(s.Plates) == 0 {
		return
	}
	shape := s.Value.Shape()
	batch := shape[:max(0, len(shape)-len(s.Dist.EventShape()))]
	for _, p := range s.Plates {
		k := len(batch) + p.Dim
		if k < 0 || batch[k] != p.Sub {
			got := "none"
			if k >= 0 {
				got = fmt.Sprint(batch[k])
			}
			tensor.Fail("ppl.Sample", "site %q has batch shape %s, but plate %q has size %d at dim %d (the site has %s there): give the distribution the plate's shape",
				s.Name, tensor.FormatShape(batch), p.Name, p.Sub, p.Dim, got)
		}
	}
}

// LogProb returns the site's elementwise log-probability times its mask
// (not its scale), shaped like its batch; nil for sites that are not
// sample sites.
func (s *Site) LogProb() *graph.Node {
	if s.Kind != SampleSite {
		return nil
	}
	if s.logDensity == nil {
		lp := s.Dist.LogProb(s.Value)
		if s.Mask != nil {
			lp = graph.Mul(lp, s.Mask)
		}
		s.logDensity = lp
	}
	return s.logDensity
}

// ScaledLogProb returns the site's log-probability summed and multiplied
// by its Scale, plus its LogJacobian: the site's term in the joint density.
func (s *Site) ScaledLogProb() *graph.Node {
	lp := graph.Sum(s.LogProb(), nil, false)
	if s.Scale != 1 {
		lp = graph.MulScalar(lp, s.Scale)
	}
	if s.LogJacobian != nil {
		lp = graph.Add(lp, s.LogJacobian)
	}
	return lp
}

func sortedSubset(rng *tensor.RNG, n, k int) []int {
	perm := rng.Perm(n)[:k]
	in := make([]bool, n)
	for _, i := range perm {
		in[i] = true
	}
	out := make([]int, 0, k)
	for i, ok := range in {
		if ok {
			out = append(out, i)
		}
	}
	return out
}
