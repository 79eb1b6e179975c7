package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Categorical is a batch of distributions over the classes 0, …, K−1,
// parameterised by unnormalised logits of shape (batch..., K). Values (class
// indices) are held in float tensors, so that Categorical is a Distribution
// like the others; LogProbLabels takes []int.
type Categorical struct {
	Logits *graph.Node // (batch..., K), unnormalised log-probabilities
	logp   *graph.Node // log-softmax of Logits
	batch  []int
	k      int
}

// NewCategorical returns the categorical distribution with probabilities
// softmax(logits) along the last axis. It panics if logits is 0-d or has no
// class.
func NewCategorical(logits *graph.Node) *Categorical {
	const op = "probabilistic.Categorical"
	checkParams(op, logits)
	s := logits.Shape()
	if len(s) == 0 || s[len(s)-1] < 1 {
		tensor.Fail(op, "logits %s: want shape (..., K) with K ≥ 1", graph.Describe(logits))
	}
	return &Categorical{Logits: logits, logp: graph.LogSoftmax(logits, -1), batch: append([]int{}, s[:len(s)-1]...), k: s[len(s)-1]}
}

// NewCategoricalProbs returns the categorical distribution with the given
// probabilities (..., K), through logits log p; they need not be normalised.
// It panics if probs is a constant with a negative entry.
func NewCategoricalProbs(probs *graph.Node) *Categorical {
	const op = "probabilistic.Categorical"
	checkParams(op, probs)
	checkConst(op, "probs", probs, func(v float64) bool { return v >= 0 }, "probs ≥ 0")
	return NewCategorical(graph.Log(probs))
}

// BatchShape returns the logits' shape without the class axis.
func (d *Categorical) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (): a draw is one class index.
func (d *Categorical) EventShape() []int { return []int{} }

// NumClasses returns K.
func (d *Categorical) NumClasses() int { return d.k }

// LogProbs returns the normalised log-probabilities log softmax(logits),
// shaped (batch..., K).
func (d *Categorical) LogProbs() *graph.Node { return d.logp }

// Probs returns softmax(logits), shaped (batch..., K).
func (d *Categorical) Probs() *graph.Node { return graph.Exp(d.logp) }

// LogProb returns log p_x for x holding class indices (integers in [0, K)
// stored as floats), shaped like x broadcast with the batch shape. It has
// no derivative in x. It panics, naming the distribution, if an entry is
// not such an index.
func (d *Categorical) LogProb(x *graph.Node) *graph.Node {
	const op = "probabilistic.Categorical.LogProb"
	checkValue(op, x, d.Logits, d.batch, nil)
	vals := x.Value().Values()
	labels := make([]int, len(vals))
	for i, v := range vals {
		if v != math.Trunc(v) || v < 0 || v >= float64(d.k) {
			tensor.Fail(op, "value %g at flat index %d of %s is not a class index in [0, %d) (logits %s)", v, i, graph.Describe(x), d.k, graph.Describe(d.Logits))
		}
		labels[i] = int(v)
	}
	return d.pick(x.Graph(), labels, x.Shape())
}

// LogProbLabels returns log p_label for one label per element of a batch
// of shape (N) (or, for a distribution with no batch axes, N draws from
// it), shaped (N). It panics if a label is out of range.
func (d *Categorical) LogProbLabels(labels []int) *graph.Node {
	const op = "probabilistic.Categorical.LogProbLabels"
	if len(d.batch) > 1 || (len(d.batch) == 1 && d.batch[0] != len(labels) && d.batch[0] != 1) {
		tensor.Fail(op, "%d labels do not fit logits %s: want batch shape (%d) or ()", len(labels), graph.Describe(d.Logits), len(labels))
	}
	for i, l := range labels {
		if l < 0 || l >= d.k {
			tensor.Fail(op, "label %d at index %d is out of range [0, %d) (logits %s)", l, i, d.k, graph.Describe(d.Logits))
		}
	}
	return d.pick(d.Logits.Graph(), labels, []int{len(labels)})
}

// pick gathers log p at the labels, which have the given shape, by a
// one-hot product so that batch axes broadcast.
func (d *Categorical) pick(g *graph.Graph, labels []int, shape []int) *graph.Node {
	oh := tensor.Reshape(tensor.OneHot(d.Logits.DType(), labels, d.k), concatShape(shape, []int{d.k})...)
	return graph.Sum(graph.Mul(g.Const(oh), d.logp), []int{-1}, false)
}

// Entropy returns −Σₖ pₖ log pₖ.
func (d *Categorical) Entropy() *graph.Node {
	return graph.Neg(graph.Sum(graph.Mul(d.Probs(), d.logp), []int{-1}, false))
}

// classes returns the constant (0, 1, …, K−1).
func (d *Categorical) classes() *graph.Node {
	return d.Logits.Graph().Const(tensor.Arange(d.Logits.DType(), 0, float64(d.k), 1))
}

// Mean returns the mean class index Σₖ k·pₖ, the mean of Sample's values.
func (d *Categorical) Mean() *graph.Node {
	return graph.Sum(graph.Mul(d.Probs(), d.classes()), []int{-1}, false)
}

// Variance returns the variance of the class index, Σₖ k²pₖ − mean².
func (d *Categorical) Variance() *graph.Node {
	m2 := graph.Sum(graph.Mul(d.Probs(), graph.Square(d.classes())), []int{-1}, false)
	return graph.Sub(m2, graph.Square(d.Mean()))
}

// Sample draws class indices (as floats) by inverting the cumulative
// probabilities, without gradient. Categorical has no reparameterised
// sampler.
func (d *Categorical) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Categorical.Sample", n, d.batch, nil)
	p := tensor.Softmax(hostValue(d.Logits), -1).Values()
	rows := len(p) / d.k
	out := make([]float64, prod(shape))
	for i := range out {
		row := p[(i%rows)*d.k : (i%rows+1)*d.k]
		u := rng.Float64()
		c := d.k - 1 // rounding can leave the total a little below 1
		acc := 0.0
		for k, pk := range row {
			acc += pk
			if u < acc {
				c = k
				break
			}
		}
		out[i] = float64(c)
	}
	return tensor.FromValues(d.Logits.DType(), out, shape...)
}
