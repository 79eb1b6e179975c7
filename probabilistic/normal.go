package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Normal is a batch of univariate normal distributions N(Loc, Scale²).
type Normal struct {
	Loc   *graph.Node // mean μ
	Scale *graph.Node // standard deviation σ > 0
	batch []int
}

// NewNormal returns N(loc, scale²) with the batch shape the two parameters
// broadcast to. It panics if they do not broadcast, are in different graphs
// or dtypes, or if scale is a constant with a non-positive entry.
func NewNormal(loc, scale *graph.Node) *Normal {
	const op = "probabilistic.Normal"
	checkParams(op, loc, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &Normal{Loc: loc, Scale: scale, batch: batchOf(op, loc.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of Loc and Scale.
func (d *Normal) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (): each component is a scalar.
func (d *Normal) EventShape() []int { return []int{} }

// LogProb returns −½((x−μ)/σ)² − log σ − ½ log 2π.
func (d *Normal) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Normal.LogProb", x, d.Loc, d.batch, nil)
	z := graph.Div(graph.Sub(x, d.Loc), d.Scale)
	lp := graph.Add(graph.MulScalar(graph.Square(z), 0.5), graph.Log(d.Scale))
	return graph.Neg(graph.AddScalar(lp, 0.5*log2Pi))
}

// Entropy returns ½ + ½ log 2π + log σ.
func (d *Normal) Entropy() *graph.Node {
	h := graph.AddScalar(graph.Log(d.Scale), 0.5+0.5*log2Pi)
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns μ broadcast to the batch shape.
func (d *Normal) Mean() *graph.Node { return graph.BroadcastTo(d.Loc, d.batch...) }

// Variance returns σ² broadcast to the batch shape.
func (d *Normal) Variance() *graph.Node {
	return graph.BroadcastTo(graph.Square(d.Scale), d.batch...)
}

// Sample draws μ + σ·ε with ε ~ N(0, 1), without gradient.
func (d *Normal) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := rng.Normal(d.Loc.DType(), 0, 1, sampleShape("probabilistic.Normal.Sample", n, d.batch, nil)...)
	return tensor.Add(hostValue(d.Loc), tensor.Mul(hostValue(d.Scale), eps))
}

// RSample returns the node μ + σ·ε with the noise ε ~ N(0, 1) a constant,
// so the samples are differentiable with respect to μ and σ.
func (d *Normal) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := rng.Normal(d.Loc.DType(), 0, 1, sampleShape("probabilistic.Normal.RSample", n, d.batch, nil)...)
	return graph.Add(d.Loc, graph.Mul(d.Scale, d.Loc.Graph().Const(eps)))
}
