package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Laplace is a batch of Laplace (double exponential) distributions with
// density exp(−|x−Loc|/Scale) / (2·Scale).
type Laplace struct {
	Loc   *graph.Node // location μ (mean and median)
	Scale *graph.Node // scale b > 0
	batch []int
}

// NewLaplace returns Laplace(loc, scale). It panics if the parameters do not
// broadcast, are in different graphs or dtypes, or if scale is a constant
// with a non-positive entry.
func NewLaplace(loc, scale *graph.Node) *Laplace {
	const op = "probabilistic.Laplace"
	checkParams(op, loc, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &Laplace{Loc: loc, Scale: scale, batch: batchOf(op, loc.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of Loc and Scale.
func (d *Laplace) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Laplace) EventShape() []int { return []int{} }

// LogProb returns −log 2b − |x−μ|/b. Its derivative in x at x = μ is taken
// as 0.
func (d *Laplace) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Laplace.LogProb", x, d.Loc, d.batch, nil)
	z := graph.Div(graph.Abs(graph.Sub(x, d.Loc)), d.Scale)
	return graph.Neg(graph.Add(z, graph.AddScalar(graph.Log(d.Scale), math.Ln2)))
}

// Entropy returns 1 + log 2b.
func (d *Laplace) Entropy() *graph.Node {
	return graph.BroadcastTo(graph.AddScalar(graph.Log(d.Scale), 1+math.Ln2), d.batch...)
}

// Mean returns μ.
func (d *Laplace) Mean() *graph.Node { return graph.BroadcastTo(d.Loc, d.batch...) }

// Variance returns 2b².
func (d *Laplace) Variance() *graph.Node {
	return graph.BroadcastTo(graph.MulScalar(graph.Square(d.Scale), 2), d.batch...)
}

// noise returns u uniform on (−½, ½) and the standard Laplace variates
// −sign(u)·log(1 − 2|u|) built from it, both as tensors.
func (d *Laplace) noise(op string, rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape(op, n, d.batch, nil)
	vals := make([]float64, prod(shape))
	for i := range vals {
		u := rng.Float64() - 0.5 // [−½, ½)
		if u == -0.5 {
			u = 0 // log(1 − 2|u|) would be −∞
		}
		vals[i] = -math.Copysign(math.Log1p(-2*math.Abs(u)), u)
	}
	return tensor.FromValues(d.Loc.DType(), vals, shape...)
}

// Sample draws μ + b·ε with ε standard Laplace (inverse CDF), without
// gradient.
func (d *Laplace) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := d.noise("probabilistic.Laplace.Sample", rng, n)
	return tensor.Add(hostValue(d.Loc), tensor.Mul(hostValue(d.Scale), eps))
}

// RSample returns the node μ + b·ε with ε a constant standard Laplace
// noise, differentiable with respect to μ and b.
func (d *Laplace) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := d.noise("probabilistic.Laplace.RSample", rng, n)
	return graph.Add(d.Loc, graph.Mul(d.Scale, d.Loc.Graph().Const(eps)))
}
