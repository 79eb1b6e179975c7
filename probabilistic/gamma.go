package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gamma is a batch of gamma distributions with shape (concentration) α and
// rate β: density βᵅ xᵅ⁻¹ e^{−βx} / Γ(α) on x > 0.
type Gamma struct {
	Concentration *graph.Node // shape α > 0
	Rate          *graph.Node // rate β > 0 (1/scale)
	batch         []int
}

// NewGamma returns Gamma(concentration, rate). It panics if the parameters
// do not broadcast, are in different graphs or dtypes, or are constants with
// a non-positive entry.
func NewGamma(concentration, rate *graph.Node) *Gamma {
	const op = "probabilistic.Gamma"
	checkParams(op, concentration, rate)
	checkConst(op, "concentration", concentration, positive, "concentration > 0")
	checkConst(op, "rate", rate, positive, "rate > 0")
	return &Gamma{Concentration: concentration, Rate: rate, batch: batchOf(op, concentration.Shape(), rate.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *Gamma) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Gamma) EventShape() []int { return []int{} }

// LogProb returns α log β + (α − 1) log x − βx − log Γ(α).
func (d *Gamma) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Gamma.LogProb", x, d.Concentration, d.batch, nil)
	a, b := d.Concentration, d.Rate
	t := graph.Add(graph.Mul(a, graph.Log(b)), graph.Mul(graph.AddScalar(a, -1), graph.Log(x)))
	return graph.Sub(t, graph.Add(graph.Mul(b, x), graph.Lgamma(a)))
}

// Entropy returns α − log β + log Γ(α) + (1 − α)ψ(α).
func (d *Gamma) Entropy() *graph.Node {
	a := d.Concentration
	h := graph.Add(graph.Sub(a, graph.Log(d.Rate)), graph.Lgamma(a))
	h = graph.Sub(h, graph.Mul(graph.AddScalar(a, -1), graph.Digamma(a)))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns α/β.
func (d *Gamma) Mean() *graph.Node {
	return graph.BroadcastTo(graph.Div(d.Concentration, d.Rate), d.batch...)
}

// Variance returns α/β².
func (d *Gamma) Variance() *graph.Node {
	return graph.BroadcastTo(graph.Div(d.Concentration, graph.Square(d.Rate)), d.batch...)
}

// Sample draws by Marsaglia and Tsang's method with the seeded rng, without
// gradient; RSample draws with an implicit gradient.
func (d *Gamma) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Gamma.Sample", n, d.batch, nil)
	a := expandValues(hostValue(d.Concentration), d.batch)
	b := expandValues(hostValue(d.Rate), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(a)
		out[i] = sampleGamma(rng, a[j]) / b[j]
	}
	return tensor.FromValues(d.Concentration.DType(), out, shape...)
}
