package probabilistic

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// klFunc is a registered closed form, with its operands' types erased.
type klFunc func(p, q Distribution) *graph.Node

var klRegistry = struct {
	sync.RWMutex
	m map[[2]reflect.Type]klFunc
}{m: map[[2]reflect.Type]klFunc{}}

// RegisterKL registers the closed form fn of KL(p ‖ q) for p of type P and
// q of type Q (concrete types, usually pointers such as *Normal). fn returns
// the divergence shaped like the broadcast batch shapes. A later
// registration of the same pair replaces the earlier one, so users can
// override a built-in form. It is safe for concurrent use. It panics if P
// or Q is an interface type, which KL's lookup by dynamic type would never
// match.
func RegisterKL[P, Q Distribution](fn func(p P, q Q) *graph.Node) {
	key := [2]reflect.Type{reflect.TypeFor[P](), reflect.TypeFor[Q]()}
	if key[0].Kind() == reflect.Interface || key[1].Kind() == reflect.Interface {
		tensor.Fail("probabilistic.RegisterKL", "types %v and %v must both be concrete distribution types", key[0], key[1])
	}
	klRegistry.Lock()
	defer klRegistry.Unlock()
	klRegistry.m[key] = func(p, q Distribution) *graph.Node { return fn(p.(P), q.(Q)) }
}

// KL returns the Kullback–Leibler divergence KL(p ‖ q) = E_p[log p − log q]
// in closed form, shaped like the broadcast batch shapes of p and q and
// differentiable with respect to both distributions' parameters. It returns
// an error naming both types when no closed form is registered for the
// pair; it never falls back to a Monte Carlo estimate. It panics, like the
// graph ops, when the two distributions' shapes, graphs or dtypes do not
// fit.
func KL(p, q Distribution) (*graph.Node, error) {
	if p == nil || q == nil {
		return nil, fmt.Errorf("probabilistic.KL: nil distribution (%T, %T)", p, q)
	}
	key := [2]reflect.Type{reflect.TypeOf(p), reflect.TypeOf(q)}
	klRegistry.RLock()
	fn, ok := klRegistry.m[key]
	klRegistry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("probabilistic.KL: no closed form registered for KL(%T ‖ %T); register one with RegisterKL or estimate it by sampling", p, q)
	}
	return fn(p, q), nil
}

func init() {
	RegisterKL(klNormalNormal)
	RegisterKL(klMVNMVN)
	RegisterKL(klBernoulliBernoulli)
	RegisterKL(klCategoricalCategorical)
	RegisterKL(klBetaBeta)
	RegisterKL(klGammaGamma)
	RegisterKL(klDirichletDirichlet)
}

// klShape checks that two distributions can be compared (one graph, one
// dtype, equal event shapes, broadcasting batches) and returns the
// broadcast batch shape.
func klShape(op string, p, q Distribution, pn, qn *graph.Node) []int {
	if pn.Graph() != qn.Graph() {
		tensor.Fail(op, "the distributions' parameters %s belong to different graphs", graph.Describe(pn, qn))
	}
	if pn.DType() != qn.DType() {
		tensor.Fail(op, "the distributions' parameters %s have different dtypes", graph.Describe(pn, qn))
	}
	pe, qe := p.EventShape(), q.EventShape()
	if tensor.FormatShape(pe) != tensor.FormatShape(qe) {
		tensor.Fail(op, "event shapes %s and %s differ", tensor.FormatShape(pe), tensor.FormatShape(qe))
	}
	return batchOf(op, p.BatchShape(), q.BatchShape())
}

// klNormalNormal: log(σ₂/σ₁) + (σ₁² + (μ₁ − μ₂)²)/(2σ₂²) − ½.
func klNormalNormal(p, q *Normal) *graph.Node {
	batch := klShape("probabilistic.KL(Normal‖Normal)", p, q, p.Loc, q.Loc)
	r := graph.Div(p.Scale, q.Scale)
	dm := graph.Div(graph.Sub(p.Loc, q.Loc), q.Scale)
	t := graph.MulScalar(graph.Add(graph.Square(r), graph.Square(dm)), 0.5)
	kl := graph.AddScalar(graph.Sub(t, graph.Log(r)), -0.5)
	return graph.BroadcastTo(kl, batch...)
}

// klMVNMVN: ½[tr(Σ₂⁻¹Σ₁) + (μ₂ − μ₁)ᵀΣ₂⁻¹(μ₂ − μ₁) − d] + log det L₂ − log det L₁,
// with tr(Σ₂⁻¹Σ₁) = ‖L₂⁻¹L₁‖²_F.
func klMVNMVN(p, q *MultivariateNormal) *graph.Node {
	batch := klShape("probabilistic.KL(MultivariateNormal‖MultivariateNormal)", p, q, p.Loc, q.Loc)
	m := graph.TriSolve(q.ScaleTril, p.ScaleTril, true, false)
	tr := graph.Sum(graph.Square(m), []int{-2, -1}, false)
	z := graph.TriSolve(q.ScaleTril, graph.Unsqueeze(graph.Sub(q.Loc, p.Loc), -1), true, false)
	maha := graph.Sum(graph.Square(z), []int{-2, -1}, false)
	t := graph.MulScalar(graph.AddScalar(graph.Add(tr, maha), -float64(p.d)), 0.5)
	kl := graph.Add(t, graph.Sub(q.halfLogDet(), p.halfLogDet()))
	return graph.BroadcastTo(kl, batch...)
}

// klBernoulliBernoulli: p₁(log p₁ − log p₂) + (1 − p₁)(log(1 − p₁) − log(1 − p₂)),
// with the logs as −softplus of the logits.
func klBernoulliBernoulli(p, q *Bernoulli) *graph.Node {
	batch := klShape("probabilistic.KL(Bernoulli‖Bernoulli)", p, q, p.Logits, q.Logits)
	p1 := p.Probs()
	a := graph.Mul(p1, graph.Sub(logSigmoid(p.Logits), logSigmoid(q.Logits)))
	b := graph.Mul(graph.Sub(scalar(p1, 1), p1), graph.Sub(graph.Softplus(q.Logits), graph.Softplus(p.Logits)))
	return graph.BroadcastTo(graph.Add(a, b), batch...)
}

// klCategoricalCategorical: Σₖ pₖ(log pₖ − log qₖ).
func klCategoricalCategorical(p, q *Categorical) *graph.Node {
	op := "probabilistic.KL(Categorical‖Categorical)"
	batch := klShape(op, p, q, p.Logits, q.Logits)
	if p.k != q.k {
		tensor.Fail(op, "logits %s have different numbers of classes", graph.Describe(p.Logits, q.Logits))
	}
	kl := graph.Sum(graph.Mul(p.Probs(), graph.Sub(p.logp, q.logp)), []int{-1}, false)
	return graph.BroadcastTo(kl, batch...)
}

// klBetaBeta: log B(a₂, b₂) − log B(a₁, b₁) + (a₁ − a₂)ψ(a₁) + (b₁ − b₂)ψ(b₁)
// + (a₂ − a₁ + b₂ − b₁)ψ(a₁ + b₁).
func klBetaBeta(p, q *Beta) *graph.Node {
	batch := klShape("probabilistic.KL(Beta‖Beta)", p, q, p.Alpha, q.Alpha)
	a1, b1, a2, b2 := p.Alpha, p.Beta, q.Alpha, q.Beta
	kl := graph.Sub(lbeta(a2, b2), lbeta(a1, b1))
	kl = graph.Add(kl, graph.Mul(graph.Sub(a1, a2), graph.Digamma(a1)))
	kl = graph.Add(kl, graph.Mul(graph.Sub(b1, b2), graph.Digamma(b1)))
	s := graph.Sub(graph.Add(a2, b2), graph.Add(a1, b1))
	kl = graph.Add(kl, graph.Mul(s, graph.Digamma(graph.Add(a1, b1))))
	return graph.BroadcastTo(kl, batch...)
}

// klGammaGamma: (α₁ − α₂)ψ(α₁) − log Γ(α₁) + log Γ(α₂) + α₂(log β₁ − log β₂)
// + α₁(β₂ − β₁)/β₁.
func klGammaGamma(p, q *Gamma) *graph.Node {
	batch := klShape("probabilistic.KL(Gamma‖Gamma)", p, q, p.Concentration, q.Concentration)
	a1, r1, a2, r2 := p.Concentration, p.Rate, q.Concentration, q.Rate
	kl := graph.Mul(graph.Sub(a1, a2), graph.Digamma(a1))
	kl = graph.Add(kl, graph.Sub(graph.Lgamma(a2), graph.Lgamma(a1)))
	kl = graph.Add(kl, graph.Mul(a2, graph.Sub(graph.Log(r1), graph.Log(r2))))
	kl = graph.Add(kl, graph.Mul(a1, graph.Div(graph.Sub(r2, r1), r1)))
	return graph.BroadcastTo(kl, batch...)
}

// klDirichletDirichlet: log Γ(α₀) − Σ log Γ(αₖ) − log Γ(β₀) + Σ log Γ(βₖ)
// + Σₖ (αₖ − βₖ)(ψ(αₖ) − ψ(α₀)).
func klDirichletDirichlet(p, q *Dirichlet) *graph.Node {
	batch := klShape("probabilistic.KL(Dirichlet‖Dirichlet)", p, q, p.Concentration, q.Concentration)
	a, b := p.Concentration, q.Concentration
	a0 := p.total()
	dig := graph.Sub(graph.Digamma(a), graph.Digamma(graph.Unsqueeze(a0, -1)))
	s := graph.Sum(graph.Mul(graph.Sub(a, b), dig), []int{-1}, false)
	kl := graph.Add(graph.Sub(q.logNorm(), p.logNorm()), s)
	return graph.BroadcastTo(kl, batch...)
}
