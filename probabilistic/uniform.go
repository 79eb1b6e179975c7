package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Uniform is a batch of continuous uniform distributions on [Low, High).
type Uniform struct {
	Low, High *graph.Node
	batch     []int
}

// NewUniform returns U(low, high). It panics if the bounds do not broadcast,
// are in different graphs or dtypes, or are both constants with low ≥ high
// somewhere.
func NewUniform(low, high *graph.Node) *Uniform {
	const op = "probabilistic.Uniform"
	checkParams(op, low, high)
	batch := batchOf(op, low.Shape(), high.Shape())
	if low.IsConst() && high.IsConst() {
		l, h := expandValues(low.Value(), batch), expandValues(high.Value(), batch)
		for i := range l {
			if !(l[i] < h[i]) {
				tensor.Fail(op, "bounds %s: low %g is not below high %g", graph.Describe(low, high), l[i], h[i])
			}
		}
	}
	return &Uniform{Low: low, High: high, batch: batch}
}

// BatchShape returns the broadcast shape of Low and High.
func (d *Uniform) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Uniform) EventShape() []int { return []int{} }

func (d *Uniform) width() *graph.Node { return graph.Sub(d.High, d.Low) }

// LogProb returns −log(high − low) on [low, high) and −∞ outside. Its
// derivative in x is zero.
func (d *Uniform) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Uniform.LogProb", x, d.Low, d.batch, nil)
	inside := graph.Mul(graph.GreaterEqual(x, d.Low), graph.Less(x, d.High))
	return graph.Where(inside, graph.Neg(graph.Log(d.width())), scalar(x, math.Inf(-1)))
}

// Entropy returns log(high − low).
func (d *Uniform) Entropy() *graph.Node {
	return graph.BroadcastTo(graph.Log(d.width()), d.batch...)
}

// Mean returns (low + high)/2.
func (d *Uniform) Mean() *graph.Node {
	return graph.BroadcastTo(graph.MulScalar(graph.Add(d.Low, d.High), 0.5), d.batch...)
}

// Variance returns (high − low)²/12.
func (d *Uniform) Variance() *graph.Node {
	return graph.BroadcastTo(graph.MulScalar(graph.Square(d.width()), 1.0/12), d.batch...)
}

// Sample draws low + (high − low)·u with u ~ U[0, 1), without gradient.
func (d *Uniform) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	u := rng.Uniform(d.Low.DType(), 0, 1, sampleShape("probabilistic.Uniform.Sample", n, d.batch, nil)...)
	lo := hostValue(d.Low)
	return tensor.Add(lo, tensor.Mul(tensor.Sub(hostValue(d.High), lo), u))
}

// RSample returns the node low + (high − low)·u with u ~ U[0, 1) a
// constant, differentiable with respect to both bounds.
func (d *Uniform) RSample(rng *tensor.RNG, n int) *graph.Node {
	u := rng.Uniform(d.Low.DType(), 0, 1, sampleShape("probabilistic.Uniform.RSample", n, d.batch, nil)...)
	return graph.Add(d.Low, graph.Mul(d.width(), d.Low.Graph().Const(u)))
}
