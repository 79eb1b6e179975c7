package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
)

func init() {
	RegisterKL(klExponentialExponential)
	RegisterKL(klLogNormalLogNormal)
	RegisterKL(klHalfNormalHalfNormal)
	RegisterKL(klInverseGammaInverseGamma)
	RegisterKL(klLaplaceLaplace)
	RegisterKL(klCauchyCauchy)
	RegisterKL(klGeometricGeometric)
	RegisterKL(klUniformUniform)
}

// klExponentialExponential: log λ₁ − log λ₂ + λ₂/λ₁ − 1.
func klExponentialExponential(p, q *Exponential) *graph.Node {
	batch := klShape("probabilistic.KL(Exponential‖Exponential)", p, q, p.Rate, q.Rate)
	r := graph.Div(q.Rate, p.Rate)
	return graph.BroadcastTo(graph.AddScalar(graph.Sub(r, graph.Log(r)), -1), batch...)
}

// klLogNormalLogNormal: that of the normals of the logs, KL being invariant
// under the bijection exp.
func klLogNormalLogNormal(p, q *LogNormal) *graph.Node {
	klShape("probabilistic.KL(LogNormal‖LogNormal)", p, q, p.Loc, q.Loc)
	return klNormalNormal(p.normal(), q.normal())
}

// klHalfNormalHalfNormal: log(σ₂/σ₁) + σ₁²/(2σ₂²) − ½, that of N(0, σ₁²)
// against N(0, σ₂²) folded onto the same half line.
func klHalfNormalHalfNormal(p, q *HalfNormal) *graph.Node {
	batch := klShape("probabilistic.KL(HalfNormal‖HalfNormal)", p, q, p.Scale, q.Scale)
	r := graph.Div(p.Scale, q.Scale)
	kl := graph.AddScalar(graph.Sub(graph.MulScalar(graph.Square(r), 0.5), graph.Log(r)), -0.5)
	return graph.BroadcastTo(kl, batch...)
}

// klInverseGammaInverseGamma: that of Gamma(α₁, β₁) against Gamma(α₂, β₂),
// KL being invariant under the bijection x ↦ 1/x.
func klInverseGammaInverseGamma(p, q *InverseGamma) *graph.Node {
	klShape("probabilistic.KL(InverseGamma‖InverseGamma)", p, q, p.Concentration, q.Concentration)
	gp := &Gamma{Concentration: p.Concentration, Rate: p.Scale, batch: p.batch}
	gq := &Gamma{Concentration: q.Concentration, Rate: q.Scale, batch: q.batch}
	return klGammaGamma(gp, gq)
}

// klLaplaceLaplace: log(b₂/b₁) + |μ₁ − μ₂|/b₂ + (b₁/b₂)e^{−|μ₁−μ₂|/b₁} − 1.
func klLaplaceLaplace(p, q *Laplace) *graph.Node {
	batch := klShape("probabilistic.KL(Laplace‖Laplace)", p, q, p.Loc, q.Loc)
	dm := graph.Abs(graph.Sub(p.Loc, q.Loc))
	r := graph.Div(p.Scale, q.Scale)
	kl := graph.Add(graph.Neg(graph.Log(r)), graph.Div(dm, q.Scale))
	kl = graph.Add(kl, graph.Mul(r, graph.Exp(graph.Neg(graph.Div(dm, p.Scale)))))
	return graph.BroadcastTo(graph.AddScalar(kl, -1), batch...)
}

// klCauchyCauchy: log((s₁ + s₂)² + (μ₁ − μ₂)²) − log 4s₁s₂ (Chyzak and
// Nielsen 2019, "A closed-form formula for the Kullback–Leibler divergence
// between Cauchy distributions").
func klCauchyCauchy(p, q *Cauchy) *graph.Node {
	batch := klShape("probabilistic.KL(Cauchy‖Cauchy)", p, q, p.Loc, q.Loc)
	num := graph.Add(graph.Square(graph.Add(p.Scale, q.Scale)), graph.Square(graph.Sub(p.Loc, q.Loc)))
	den := graph.MulScalar(graph.Mul(p.Scale, q.Scale), 4)
	return graph.BroadcastTo(graph.Log(graph.Div(num, den)), batch...)
}

// klGeometricGeometric: −H(p) − E_p[k]·log(1 − q) − log q, with the logs
// as −softplus of the logits.
func klGeometricGeometric(p, q *Geometric) *graph.Node {
	batch := klShape("probabilistic.KL(Geometric‖Geometric)", p, q, p.Logits, q.Logits)
	cross := graph.Add(graph.Mul(p.Mean(), graph.Softplus(q.Logits)), graph.Softplus(graph.Neg(q.Logits)))
	return graph.BroadcastTo(graph.Sub(cross, p.Entropy()), batch...)
}

// klUniformUniform: log((b₂ − a₂)/(b₁ − a₁)) when [a₁, b₁] ⊆ [a₂, b₂], +∞
// otherwise (p puts mass where q has none).
func klUniformUniform(p, q *Uniform) *graph.Node {
	batch := klShape("probabilistic.KL(Uniform‖Uniform)", p, q, p.Low, q.Low)
	kl := graph.Log(graph.Div(q.width(), p.width()))
	inside := graph.Mul(graph.GreaterEqual(p.Low, q.Low), graph.LessEqual(p.High, q.High))
	return graph.BroadcastTo(graph.Where(inside, kl, scalar(kl, math.Inf(1))), batch...)
}
