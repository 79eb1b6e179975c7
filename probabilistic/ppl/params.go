package ppl

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// ParamStore holds the parameters of a model and guide in their
// unconstrained space, keyed by site name, in the order they first
// appeared. FitSVI fills one; WithParams reads and extends it.
type ParamStore struct {
	names []string
	raw   map[string]*tensor.Tensor // unconstrained values, updated in place by the optimiser
	bij   map[string]probabilistic.Bijector
	g     *graph.Graph
	vars  map[string]*graph.Node // this graph's variables, one per parameter
}

// NewParamStore returns an empty store.
func NewParamStore() *ParamStore {
	return &ParamStore{raw: map[string]*tensor.Tensor{}, bij: map[string]probabilistic.Bijector{}}
}

// Names returns the parameters' names in the order they first appeared.
func (p *ParamStore) Names() []string { return append([]string(nil), p.names...) }

// Unconstrained returns the unconstrained tensors, in the order of Names:
// the list an optimiser updates in place.
func (p *ParamStore) Unconstrained() []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(p.names))
	for i, n := range p.names {
		out[i] = p.raw[n]
	}
	return out
}

// Value returns the constrained value of the named parameter, or nil.
func (p *ParamStore) Value(name string) *tensor.Tensor {
	u, ok := p.raw[name]
	if !ok {
		return nil
	}
	g := graph.New()
	v := g.Const(u)
	if b := p.bij[name]; b != nil {
		v = b.Forward(v)
	}
	return v.Value().Clone()
}

// node returns the parameter as a variable of g (one per graph run),
// initialising it from the site's Init on first sight.
func (p *ParamStore) node(g *graph.Graph, s *Site) *graph.Node {
	if p.g != g || p.vars == nil {
		p.g, p.vars = g, map[string]*graph.Node{}
	}
	if v, ok := p.vars[s.Name]; ok {
		return v
	}
	if _, ok := p.raw[s.Name]; !ok {
		init := g.Const(s.Init)
		if s.Constraint != nil {
			init = s.Constraint.Inverse(init)
		}
		p.raw[s.Name] = init.Value().Clone()
		p.bij[s.Name] = s.Constraint
		p.names = append(p.names, s.Name)
	}
	v := g.Var(p.raw[s.Name])
	p.vars[s.Name] = v
	return v
}

// vars returns this graph's variables in the order of Names (those not
// used in the run get fresh variables, with zero gradients).
func (p *ParamStore) nodes(g *graph.Graph) []*graph.Node {
	out := make([]*graph.Node, len(p.names))
	for i, n := range p.names {
		v, ok := p.vars[n]
		if p.g != g || !ok {
			v = g.Var(p.raw[n])
		}
		out[i] = v
	}
	return out
}

// WithParams returns m with its parameter sites read from store: each is
// a variable of the graph holding the unconstrained value, mapped by the
// site's constraint, and a parameter seen for the first time is added to
// the store from the site's initial value. Gradients with respect to
// store's variables (in the order of Names) flow through every use.
func WithParams(m Model, store *ParamStore) Model { return withParams(m, store, false) }

// withParams is WithParams, with the parameters' gradients stopped when
// stop is set.
func withParams(m Model, store *ParamStore, stop bool) Model {
	if store == nil {
		tensor.Fail("ppl.WithParams", "nil store")
	}
	return func(c *Ctx) {
		Handle(m, funcs{process: func(s *Site) {
			if s.Kind != ParamSite || s.Value != nil {
				return
			}
			u := store.node(c.g, s)
			if stop {
				u = graph.StopGradient(u)
			}
			if b := store.bij[s.Name]; b != nil {
				s.Value = b.Forward(u)
			} else {
				s.Value = u
			}
		}})(c)
	}
}

// begin forgets the variables of the previous run: call it after each
// g.Reset, since the graph pointer alone cannot tell runs apart.
func (p *ParamStore) begin(g *graph.Graph) { p.g, p.vars = g, map[string]*graph.Node{} }
