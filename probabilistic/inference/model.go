// Package inference draws from, or approximates, the posterior of a model
// written as a Go function that returns a differentiable log density: the
// No-U-Turn sampler (NUTS, the multinomial variant Stan uses) with
// dual-averaging step sizes and a diagonal mass matrix adapted in windows,
// several chains on goroutines, and the convergence diagnostics of Vehtari
// et al. (2021): rank-normalised split R̂ and bulk and tail effective
// sample sizes; ADVI with mean-field or full-rank Gaussians; and
// importance sampling with the evidence estimate.
//
//	m := inference.Model{
//		Params: []inference.Param{{Name: "mu", Shape: []int{}},
//			{Name: "sigma", Shape: []int{}, Bijector: probabilistic.Softplus{}}},
//		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node { ... },
//	}
//	res, err := inference.NUTS(ctx, m, inference.NUTSOptions{Chains: 4, Seed: 1})
//	fmt.Print(res.Summary())
//
// Parameters live in an unconstrained space: a constrained parameter names
// the bijector (from package probabilistic) that maps the unconstrained
// value onto its domain, and the sampler adds the log-Jacobian, so draws
// come from the intended posterior. Draws are reported constrained.
package inference

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// Param is one named parameter of a model.
type Param struct {
	Name string
	// Shape is the shape of the unconstrained value (() for a scalar).
	Shape []int
	// Bijector maps the unconstrained value onto the parameter's domain;
	// nil means the parameter is unconstrained.
	Bijector probabilistic.Bijector
	// Init is the initial unconstrained value (flattened); nil draws each
	// element from U(−2, 2), as Stan does.
	Init []float64
}

// Model is a log density over named parameters, up to a constant.
type Model struct {
	Params []Param
	// LogDensity returns the scalar log density (log prior + log likelihood)
	// at the constrained parameter values, built as nodes of g so that it
	// can be differentiated. It must be deterministic.
	LogDensity func(g *graph.Graph, params map[string]*graph.Node) *graph.Node
}

// evaluator computes log p(θ) + log|J| and its gradient at unconstrained
// points θ (flat float64), reusing one graph.
type evaluator struct {
	m     Model
	sizes []int
	dim   int
	g     *graph.Graph
	flat  *tensor.Tensor // the point being evaluated (dim)
}

func newEvaluator(m Model) (*evaluator, error) {
	if m.LogDensity == nil {
		return nil, fmt.Errorf("inference: the model has no LogDensity")
	}
	if len(m.Params) == 0 {
		return nil, fmt.Errorf("inference: the model has no parameters")
	}
	e := &evaluator{m: m, g: graph.New()}
	seen := map[string]bool{}
	for _, p := range m.Params {
		if p.Name == "" || seen[p.Name] {
			return nil, fmt.Errorf("inference: parameter name %q is empty or repeated", p.Name)
		}
		seen[p.Name] = true
		n := 1
		for _, s := range p.Shape {
			n *= s
		}
		if p.Init != nil && len(p.Init) != n {
			return nil, fmt.Errorf("inference: parameter %q has %d elements but Init has %d", p.Name, n, len(p.Init))
		}
		e.sizes = append(e.sizes, n)
		e.dim += n
	}
	e.flat = tensor.Zeros(tensor.Float64, e.dim)
	if err := e.checkScalar(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkScalar evaluates the density once, at the origin of the
// unconstrained space, so that a LogDensity that does not return a scalar,
// or misuses an op, is an error of the sampler's call rather than a panic
// on a chain's goroutine.
func (e *evaluator) checkScalar() (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil, *graph.DataError: // a data failure at the origin is the samplers' business
		case *tensor.Error:
			err = fmt.Errorf("inference: the model's LogDensity: %s: %s", r.Op, r.Msg)
		default:
			panic(r)
		}
	}()
	e.g.Reset()
	e.density(e.g.Const(e.flat))
	return nil
}

// logp returns the log density at θ and writes its gradient into grad. A
// data failure inside the model (a *graph.DataError, such as a covariance
// that is not positive definite) or a non-finite value or gradient returns
// −Inf, which the samplers treat as outside the support.
func (e *evaluator) logp(theta, grad []float64) (lp float64) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*graph.DataError); !ok {
				panic(r) // misuse in the model is the programmer's to see
			}
			lp = math.Inf(-1)
		}
	}()
	e.g.Reset()
	copy(e.flat.Float64s(), theta)
	th := e.g.Var(e.flat)
	total := e.density(th)
	lp = total.Item()
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return math.Inf(-1)
	}
	copy(grad, autodiff.Grad(total, th)[0].Value().Values())
	for _, v := range grad {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(-1)
		}
	}
	return lp
}

// density returns log p + log|J| at the unconstrained point theta, a node
// of length dim (or any node holding the parameters in that layout): the
// parameters are sliced out of it, mapped by their bijectors, and handed
// to the model.
func (e *evaluator) density(theta *graph.Node) *graph.Node {
	named := make(map[string]*graph.Node, len(e.m.Params))
	var total *graph.Node
	off := 0
	for i, p := range e.m.Params {
		v := graph.Reshape(graph.Slice(theta, 0, off, off+e.sizes[i], 1), p.Shape...)
		off += e.sizes[i]
		if p.Bijector != nil {
			total = add(total, graph.Sum(p.Bijector.LogDetJacobian(v), nil, false))
			v = p.Bijector.Forward(v)
		}
		named[p.Name] = v
	}
	ld := e.m.LogDensity(theta.Graph(), named)
	if ld == nil || ld.Size() != 1 {
		tensor.Fail("inference", "LogDensity returned %v, want a scalar node", ld)
	}
	return add(total, graph.Sum(ld, nil, false))
}

// constrained returns, as constants of g, every parameter's constrained
// value at θ, in the order of the model's Params.
func (e *evaluator) constrained(g *graph.Graph, theta []float64) []*graph.Node {
	out := make([]*graph.Node, len(e.m.Params))
	off := 0
	for i, p := range e.m.Params {
		v := g.Const(unflatten(theta[off:off+e.sizes[i]], p.Shape))
		off += e.sizes[i]
		if p.Bijector != nil {
			v = p.Bijector.Forward(v)
		}
		out[i] = v
	}
	return out
}

// constrain returns the constrained values of every parameter at θ,
// flattened in the order of the model's Params.
func (e *evaluator) constrain(theta []float64) []float64 {
	var out []float64
	for _, v := range e.constrained(graph.New(), theta) {
		out = append(out, v.Value().Values()...)
	}
	return out
}

// names returns the label of every constrained scalar, e.g. "beta[2]".
func (e *evaluator) names(theta []float64) []string {
	var out []string
	for i, v := range e.constrained(graph.New(), theta) {
		name := e.m.Params[i].Name
		if v.Dim() == 0 {
			out = append(out, name)
			continue
		}
		for k := range v.Size() {
			out = append(out, fmt.Sprintf("%s[%d]", name, k))
		}
	}
	return out
}

// unflatten copies v into a new tensor of the given shape (() for a
// scalar).
func unflatten(v []float64, shape []int) *tensor.Tensor {
	t := tensor.Zeros(tensor.Float64, shape...)
	copy(t.Float64s(), v)
	return t
}

func add(a, b *graph.Node) *graph.Node {
	if a == nil {
		return b
	}
	return graph.Add(a, b)
}
