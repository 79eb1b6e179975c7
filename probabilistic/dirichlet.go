package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Dirichlet is a batch of Dirichlet distributions on the simplex
// {x ∈ (0, 1)ᴷ : Σ x = 1}, with density Γ(α₀) / Πₖ Γ(αₖ) · Πₖ xₖ^{αₖ−1}
// (α₀ = Σ αₖ) with respect to the Lebesgue measure on the first K − 1
// coordinates.
type Dirichlet struct {
	Concentration *graph.Node // α (..., K), every entry > 0
	batch         []int
	k             int
}

// NewDirichlet returns Dirichlet(concentration) for concentration of shape
// (batch..., K). It panics if concentration is 0-d or a constant with a
// non-positive entry.
func NewDirichlet(concentration *graph.Node) *Dirichlet {
	const op = "probabilistic.Dirichlet"
	checkParams(op, concentration)
	s := concentration.Shape()
	if len(s) == 0 || s[len(s)-1] < 1 {
		tensor.Fail(op, "concentration %s: want shape (..., K) with K ≥ 1", graph.Describe(concentration))
	}
	checkConst(op, "concentration", concentration, positive, "concentration > 0")
	return &Dirichlet{Concentration: concentration, batch: append([]int{}, s[:len(s)-1]...), k: s[len(s)-1]}
}

// BatchShape returns the concentration's shape without its last axis.
func (d *Dirichlet) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (K).
func (d *Dirichlet) EventShape() []int { return []int{d.k} }

// total returns α₀ = Σₖ αₖ, shaped like the batch.
func (d *Dirichlet) total() *graph.Node { return graph.Sum(d.Concentration, []int{-1}, false) }

// logNorm returns log B(α) = Σ log Γ(αₖ) − log Γ(α₀).
func (d *Dirichlet) logNorm() *graph.Node {
	return graph.Sub(graph.Sum(graph.Lgamma(d.Concentration), []int{-1}, false), graph.Lgamma(d.total()))
}

// LogProb returns Σₖ (αₖ − 1) log xₖ − log B(α) for x of shape
// (..., K) on the simplex (the sum is not checked).
func (d *Dirichlet) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Dirichlet.LogProb", x, d.Concentration, d.batch, []int{d.k})
	t := graph.Sum(graph.Mul(graph.AddScalar(d.Concentration, -1), graph.Log(x)), []int{-1}, false)
	return graph.Sub(t, d.logNorm())
}

// Entropy returns log B(α) + (α₀ − K)ψ(α₀) − Σₖ (αₖ − 1)ψ(αₖ).
func (d *Dirichlet) Entropy() *graph.Node {
	a0 := d.total()
	h := graph.Add(d.logNorm(), graph.Mul(graph.AddScalar(a0, -float64(d.k)), graph.Digamma(a0)))
	s := graph.Sum(graph.Mul(graph.AddScalar(d.Concentration, -1), graph.Digamma(d.Concentration)), []int{-1}, false)
	return graph.Sub(h, s)
}

// Mean returns α/α₀.
func (d *Dirichlet) Mean() *graph.Node {
	return graph.Div(d.Concentration, graph.Unsqueeze(d.total(), -1))
}

// Variance returns αₖ(α₀ − αₖ)/(α₀²(α₀ + 1)) for each component.
func (d *Dirichlet) Variance() *graph.Node {
	a := d.Concentration
	a0 := graph.Unsqueeze(d.total(), -1)
	num := graph.Mul(a, graph.Sub(a0, a))
	return graph.Div(num, graph.Mul(graph.Square(a0), graph.AddScalar(a0, 1)))
}

// Sample draws normalised independent Gamma(αₖ, 1) variates (Marsaglia and
// Tsang's method), without gradient (RSample has one).
func (d *Dirichlet) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Dirichlet.Sample", n, d.batch, []int{d.k})
	a := hostValue(d.Concentration).Values() // contiguous (batch..., K)
	out := make([]float64, prod(shape))
	for i := 0; i < len(out); i += d.k {
		row := a[i%len(a) : i%len(a)+d.k]
		s := 0.0
		for k, ak := range row {
			out[i+k] = sampleGamma(rng, ak)
			s += out[i+k]
		}
		for k := range row {
			out[i+k] /= s
		}
	}
	return tensor.FromValues(d.Concentration.DType(), out, shape...)
}
