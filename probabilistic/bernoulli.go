package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Bernoulli is a batch of Bernoulli distributions on {0, 1}, parameterised
// internally by their logits log(p/(1 − p)) so that log-probabilities are
// computed stably with softplus.
type Bernoulli struct {
	Logits *graph.Node // log-odds of 1
	batch  []int
}

// NewBernoulliLogits returns the Bernoulli distribution with P(1) =
// sigmoid(logits). It is the stable form: use it when the probabilities come
// from a linear model or a network.
func NewBernoulliLogits(logits *graph.Node) *Bernoulli {
	checkParams("probabilistic.Bernoulli", logits)
	return &Bernoulli{Logits: logits, batch: logits.Shape()}
}

// NewBernoulliProbs returns the Bernoulli distribution with P(1) = probs,
// converted to logits log p − log(1 − p). Probabilities of exactly 0 or 1
// give infinite logits, and NaN log-probabilities and gradients; use
// NewBernoulliLogits near those limits. It panics if probs is a constant
// with an entry outside [0, 1].
func NewBernoulliProbs(probs *graph.Node) *Bernoulli {
	const op = "probabilistic.Bernoulli"
	checkParams(op, probs)
	checkConst(op, "probs", probs, func(v float64) bool { return v >= 0 && v <= 1 }, "0 ≤ probs ≤ 1")
	logits := graph.Sub(graph.Log(probs), graph.Log1p(graph.Neg(probs)))
	return &Bernoulli{Logits: logits, batch: probs.Shape()}
}

// BatchShape returns the logits' shape.
func (d *Bernoulli) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Bernoulli) EventShape() []int { return []int{} }

// Probs returns P(1) = sigmoid(logits).
func (d *Bernoulli) Probs() *graph.Node { return graph.Sigmoid(d.Logits) }

// LogProb returns x·l − softplus(l) for the logits l, which is log p at
// x = 1 and log(1 − p) at x = 0 (and the cross-entropy for x in between).
func (d *Bernoulli) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Bernoulli.LogProb", x, d.Logits, d.batch, nil)
	return graph.Sub(graph.Mul(x, d.Logits), graph.Softplus(d.Logits))
}

// Entropy returns softplus(l) − p·l = −p log p − (1 − p) log(1 − p).
func (d *Bernoulli) Entropy() *graph.Node {
	return graph.Sub(graph.Softplus(d.Logits), graph.Mul(d.Probs(), d.Logits))
}

// Mean returns p.
func (d *Bernoulli) Mean() *graph.Node { return d.Probs() }

// Variance returns p(1 − p).
func (d *Bernoulli) Variance() *graph.Node {
	p := d.Probs()
	return graph.Mul(p, graph.Sub(scalar(p, 1), p))
}

// Sample draws 0/1 values (1 with probability p), without gradient.
// Bernoulli has no reparameterised sampler.
func (d *Bernoulli) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Bernoulli.Sample", n, d.batch, nil)
	p := tensor.Sigmoid(hostValue(d.Logits)).Values()
	out := make([]float64, prod(shape))
	for i := range out {
		if rng.Float64() < p[i%len(p)] {
			out[i] = 1
		}
	}
	return tensor.FromValues(d.Logits.DType(), out, shape...)
}

// logSigmoid returns log sigmoid(l) = −softplus(−l).
func logSigmoid(l *graph.Node) *graph.Node { return graph.Neg(graph.Softplus(graph.Neg(l))) }
