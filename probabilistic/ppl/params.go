package ppl

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
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

// node returns the parameter as the variable of g that stands for its
// unconstrained tensor in this step (g.VarOf: every use shares one node),
// initialising it from the site on first sight. A module's parameter
// (adopt) is kept as the very tensor the module reads, so the module's own
// g.VarOf finds the same node.
func (p *ParamStore) node(g *graph.Graph, s *Site) *graph.Node {
	if _, ok := p.raw[s.Name]; !ok {
		if s.adopt {
			p.raw[s.Name] = s.Init
		} else {
			init := g.Const(s.Init)
			if s.Constraint != nil {
				init = s.Constraint.Inverse(init)
			}
			p.raw[s.Name] = init.Value().Clone()
			p.bij[s.Name] = s.Constraint
		}
		p.names = append(p.names, s.Name)
	}
	return g.VarOf(p.raw[s.Name])
}

// nodes returns this step's variables in the order of Names.
func (p *ParamStore) nodes(g *graph.Graph) []*graph.Node {
	out := make([]*graph.Node, len(p.names))
	for i, n := range p.names {
		out[i] = g.VarOf(p.raw[n])
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

// Module declares the parameters of an nn.Module (a network inside a model
// or guide) as parameter sites "<name>.<param>", as Pyro's module
// statement does: under WithParams the store holds the module's own
// tensors, so SVI's optimiser trains the network, and the module's
// Forward finds the same graph variables.
func Module(c *Ctx, name string, m nn.Module) {
	if m == nil {
		tensor.Fail("ppl.Module", "module %q is nil", name)
	}
	for _, np := range m.Params() {
		c.apply(&Site{Name: name + "." + np.Name, Kind: ParamSite, Init: np.Value, adopt: true})
	}
}
