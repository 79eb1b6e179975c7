package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Beta is a batch of beta distributions on (0, 1) with density
// xᵃ⁻¹(1 − x)ᵇ⁻¹ / B(a, b).
type Beta struct {
	Alpha *graph.Node // a > 0, the concentration of x (PyTorch's concentration1)
	Beta  *graph.Node // b > 0, the concentration of 1 − x (concentration0)
	batch []int
}

// NewBeta returns Beta(alpha, beta). It panics if the parameters do not
// broadcast, are in different graphs or dtypes, or are constants with a
// non-positive entry.
func NewBeta(alpha, beta *graph.Node) *Beta {
	const op = "probabilistic.Beta"
	checkParams(op, alpha, beta)
	checkConst(op, "alpha", alpha, positive, "alpha > 0")
	checkConst(op, "beta", beta, positive, "beta > 0")
	return &Beta{Alpha: alpha, Beta: beta, batch: batchOf(op, alpha.Shape(), beta.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *Beta) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Beta) EventShape() []int { return []int{} }

// LogProb returns (a − 1) log x + (b − 1) log(1 − x) − log B(a, b).
func (d *Beta) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Beta.LogProb", x, d.Alpha, d.batch, nil)
	a, b := d.Alpha, d.Beta
	t := graph.Add(graph.Mul(graph.AddScalar(a, -1), graph.Log(x)),
		graph.Mul(graph.AddScalar(b, -1), graph.Log1p(graph.Neg(x))))
	return graph.Sub(t, lbeta(a, b))
}

// Entropy returns log B(a, b) − (a − 1)ψ(a) − (b − 1)ψ(b) + (a + b − 2)ψ(a + b).
func (d *Beta) Entropy() *graph.Node {
	a, b := d.Alpha, d.Beta
	ab := graph.Add(a, b)
	h := graph.Sub(lbeta(a, b), graph.Mul(graph.AddScalar(a, -1), graph.Digamma(a)))
	h = graph.Sub(h, graph.Mul(graph.AddScalar(b, -1), graph.Digamma(b)))
	h = graph.Add(h, graph.Mul(graph.AddScalar(ab, -2), graph.Digamma(ab)))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns a/(a + b).
func (d *Beta) Mean() *graph.Node {
	return graph.BroadcastTo(graph.Div(d.Alpha, graph.Add(d.Alpha, d.Beta)), d.batch...)
}

// Variance returns ab/((a + b)²(a + b + 1)).
func (d *Beta) Variance() *graph.Node {
	ab := graph.Add(d.Alpha, d.Beta)
	den := graph.Mul(graph.Square(ab), graph.AddScalar(ab, 1))
	return graph.BroadcastTo(graph.Div(graph.Mul(d.Alpha, d.Beta), den), d.batch...)
}

// Sample draws X/(X + Y) with X ~ Gamma(a, 1) and Y ~ Gamma(b, 1) by
// Marsaglia and Tsang's method, without gradient (RSample has one).
func (d *Beta) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Beta.Sample", n, d.batch, nil)
	a := expandValues(hostValue(d.Alpha), d.batch)
	b := expandValues(hostValue(d.Beta), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(a)
		x := sampleGamma(rng, a[j])
		y := sampleGamma(rng, b[j])
		out[i] = x / (x + y)
	}
	return tensor.FromValues(d.Alpha.DType(), out, shape...)
}
