package ppl

import (
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Handler is an effect handler: while the model it wraps runs, every site
// passes through Process (innermost handler first) before the site gets
// its default value, and through Postprocess (outermost first) after.
// Handlers are values; Handle wraps a model in one, and the constructors
// below (Record, Seed, Condition, Substitute, Block, Scale, Mask, Replay,
// Unconstrain, WithParams) return the wrapped model directly.
type Handler interface {
	Process(s *Site)
	Postprocess(s *Site)
}

// Handle returns m wrapped in h: h sees every site m declares, after the
// handlers m wraps itself and before those wrapped around the result.
func Handle(m Model, h Handler) Model {
	if m == nil || h == nil {
		tensor.Fail("ppl.Handle", "nil model or handler")
	}
	return func(c *Ctx) {
		c.stack = append(c.stack, h)
		defer func() { c.stack = c.stack[:len(c.stack)-1] }()
		m(c)
	}
}

// funcs adapts two functions (either may be nil) to a Handler.
type funcs struct{ process, post func(*Site) }

func (f funcs) Process(s *Site) {
	if f.process != nil {
		f.process(s)
	}
}

func (f funcs) Postprocess(s *Site) {
	if f.post != nil {
		f.post(s)
	}
}

// Trace is the record of one run: its sites in the order they were
// declared.
type Trace struct {
	Sites  []*Site
	byName map[string]*Site
}

// Site returns the site named name, or nil.
func (t *Trace) Site(name string) *Site { return t.byName[name] }

// Latent returns the sample sites that are not observed, in order,
// without the sites declared by Enumerated (the engines sum those out).
func (t *Trace) Latent() []*Site {
	var out []*Site
	for _, s := range t.Sites {
		if s.Kind == SampleSite && !s.Observed && !s.Enumerate {
			out = append(out, s)
		}
	}
	return out
}

// LogJoint returns the log joint density of the run, Σ ScaledLogProb over
// its sample sites: log p(latents, data) up to the plates' scaling, plus
// the log-Jacobians of Unconstrain. When the run enumerated sites (under
// Enum), their values are summed out: the result is log Σ_z p(z, rest)
// over every enumerated site z, by variable elimination across plates.
// It panics with a *tensor.Error when the enumerated sites are not
// tree-structured across plates, or when one is used outside its plates.
func (t *Trace) LogJoint() *graph.Node {
	if slices.ContainsFunc(t.Sites, func(s *Site) bool { return s.EnumDim != 0 }) {
		return enumLogJoint(t, nil)
	}
	var total *graph.Node
	for _, s := range t.Sites {
		if s.Kind == SampleSite {
			total = add(total, s.ScaledLogProb())
		}
	}
	if total == nil {
		tensor.Fail("ppl.Trace.LogJoint", "the trace has no sample site")
	}
	return total
}

// Record returns m wrapped in the trace handler: each run empties tr and
// records every site that reaches it, after the handlers inside.
func Record(m Model, tr *Trace) Model {
	if tr == nil {
		tensor.Fail("ppl.Record", "nil trace")
	}
	inner := Handle(m, funcs{post: func(s *Site) {
		tr.Sites = append(tr.Sites, s)
		tr.byName[s.Name] = s
	}})
	return func(c *Ctx) {
		tr.Sites, tr.byName = nil, map[string]*Site{}
		inner(c)
	}
}

// Seed returns m wrapped in a handler that gives every site inside a
// random stream, seeded by seed when the wrapped model starts, so that
// its draws and subsamples are the same on every run.
func Seed(m Model, seed uint64) Model {
	return func(c *Ctx) {
		rng := tensor.NewRNG(seed)
		Handle(m, funcs{process: func(s *Site) {
			if s.RNG == nil {
				s.RNG = rng
			}
		}})(c)
	}
}

// Condition returns m with the sample sites named in data observed at the
// given values, as if the model had called Observe.
func Condition(m Model, data map[string]*tensor.Tensor) Model {
	return func(c *Ctx) {
		Handle(m, funcs{process: func(s *Site) {
			if v, ok := data[s.Name]; ok && s.Kind == SampleSite && v != nil {
				s.Value, s.Observed = c.g.Const(v), true
			}
		}})(c)
	}
}

// Substitute returns m with the sample, parameter and deterministic sites
// named in values given those values (not observed: they stay latent).
// The nodes must belong to the graph the model runs on.
func Substitute(m Model, values map[string]*graph.Node) Model {
	return Handle(m, funcs{process: func(s *Site) {
		if v, ok := values[s.Name]; ok && s.Kind != PlateSite && v != nil {
			s.Value = v
		}
	}})
}

// Block returns m with the sites for which hide returns true hidden from
// the handlers outside the block (a nil hide hides every site).
func Block(m Model, hide func(name string) bool) Model {
	return Handle(m, funcs{process: func(s *Site) {
		if hide == nil || hide(s.Name) {
			s.Stop = true
		}
	}})
}

// Scale returns m with the log-probability of every sample site inside
// multiplied by factor (a tempered likelihood, or a data set's size over a
// batch's when the caller subsamples by hand). It panics for a factor
// that is not positive.
func Scale(m Model, factor float64) Model {
	if !(factor > 0) {
		tensor.Fail("ppl.Scale", "factor %v is not positive", factor)
	}
	return Handle(m, funcs{process: func(s *Site) { s.Scale *= factor }})
}

// Mask returns m with the elementwise log-probability of every sample site
// inside multiplied by mask (1 keeps an element, 0 drops it; it broadcasts
// against each site's batch shape). mask is a tensor so that one masked
// model runs on many graphs.
func Mask(m Model, mask *tensor.Tensor) Model {
	return func(c *Ctx) {
		mk := c.g.Const(mask)
		Handle(m, funcs{process: func(s *Site) {
			if s.Kind != SampleSite {
				return
			}
			if s.Mask == nil {
				s.Mask = mk
			} else {
				s.Mask = graph.Mul(s.Mask, mk)
			}
		}})(c)
	}
}

// Replay returns m with its latent sample sites given their values in tr,
// and its plates the subsamples recorded there: how SVI runs the model on
// the guide's draws.
func Replay(m Model, tr *Trace) Model {
	return Handle(m, funcs{process: func(s *Site) {
		r := tr.Site(s.Name)
		if r == nil {
			return
		}
		switch {
		case s.Kind == SampleSite && !s.Observed && r.Kind == SampleSite:
			s.Value = r.Value
		case s.Kind == PlateSite && r.Kind == PlateSite && r.Size == s.Size:
			s.Indices = r.Indices
		}
	}})
}

// Unconstrain returns m with each latent sample site named in values given
// the value Forward(u) of its support's bijector at the unconstrained u in
// values, and log|det J(u)| added to the joint density: a density over the
// unconstrained space that samplers can move in freely. Sites whose
// support is the real line take u as it is.
func Unconstrain(m Model, values map[string]*graph.Node) Model {
	return Handle(m, funcs{process: func(s *Site) {
		u, ok := values[s.Name]
		if !ok || s.Kind != SampleSite || s.Observed {
			return
		}
		b := bijectorOf(s)
		if b == nil {
			s.Value = u
			return
		}
		s.Value = b.Forward(u)
		s.LogJacobian = graph.Sum(b.LogDetJacobian(u), nil, false)
	}})
}

// bijectorOf returns the bijector onto the support of a latent sample
// site, or fails naming the site when it has none (a discrete site).
func bijectorOf(s *Site) probabilistic.Bijector {
	sp, ok := supportOf(s.Dist)
	if !ok || sp.discrete {
		tensor.Fail("ppl.Unconstrain", "latent site %q (%T) is %s: it cannot be moved to an unconstrained space; observe it, marginalise it, or give its distribution a Support method (probabilistic.Supported)", s.Name, s.Dist, sp.what())
	}
	return sp.bijector()
}

func add(a, b *graph.Node) *graph.Node {
	if a == nil {
		return b
	}
	return graph.Add(a, b)
}
