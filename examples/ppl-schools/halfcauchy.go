package main

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// halfCauchy is the half-Cauchy distribution on (0, ∞) with the given
// scale s: density 2/(πs(1 + (x/s)²)), Gelman's (2006, "Prior distributions
// for variance parameters in hierarchical models") weakly informative
// prior for a group-level scale. It declares its support to package ppl
// through SupportBijector, which is all a distribution needs to be sampled
// by NUTS there.
type halfCauchy struct{ scale *graph.Node }

func newHalfCauchy(scale *graph.Node) halfCauchy { return halfCauchy{scale: scale} }

// SupportBijector maps the real line onto (0, ∞).
func (halfCauchy) SupportBijector() probabilistic.Bijector { return probabilistic.Exp{} }

// LogProb returns log 2 − log π − log s − log(1 + (x/s)²).
func (d halfCauchy) LogProb(x *graph.Node) *graph.Node {
	z := graph.Square(graph.Div(x, d.scale))
	return graph.Sub(graph.AddScalar(graph.Neg(graph.Log(d.scale)), math.Log(2/math.Pi)), graph.Log1p(z))
}

// Sample draws |s·tan(π(u − ½))|, u ~ U(0, 1).
func (d halfCauchy) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := d.BatchShape()
	if n > 0 {
		shape = append([]int{n}, shape...)
	}
	s := tensor.Expand(d.scale.Value(), shape...).Values()
	out := make([]float64, len(s))
	for i := range out {
		out[i] = math.Abs(s[i] * math.Tan(math.Pi*(rng.Float64()-0.5)))
	}
	return tensor.FromValues(d.scale.DType(), out, shape...)
}

// Entropy returns log(2πs).
func (d halfCauchy) Entropy() *graph.Node {
	return graph.AddScalar(graph.Log(d.scale), math.Log(2*math.Pi))
}

// Mean is infinite.
func (d halfCauchy) Mean() *graph.Node {
	return graph.AddScalar(graph.MulScalar(d.scale, 0), math.Inf(1))
}

// Variance is infinite.
func (d halfCauchy) Variance() *graph.Node { return d.Mean() }

// BatchShape is the scale's shape.
func (d halfCauchy) BatchShape() []int { return d.scale.Shape() }

// EventShape is ().
func (halfCauchy) EventShape() []int { return []int{} }
