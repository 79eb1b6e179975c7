package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Multinomial is a batch of multinomial distributions: the counts
// (x₁, …, x_K) of TotalCount independent draws from a categorical
// distribution with probabilities softmax(Logits). Counts are held in float
// tensors of the logits' dtype, with event shape (K).
type Multinomial struct {
	TotalCount int         // number of draws n ≥ 0
	Logits     *graph.Node // (batch..., K), unnormalised log-probabilities
	logp       *graph.Node
	batch      []int
	k          int
}

// NewMultinomial returns Multinomial(n, softmax(logits)). It panics if n < 0
// or logits is 0-d.
func NewMultinomial(n int, logits *graph.Node) *Multinomial {
	const op = "probabilistic.Multinomial"
	checkParams(op, logits)
	s := logits.Shape()
	if len(s) == 0 || s[len(s)-1] < 1 {
		tensor.Fail(op, "logits %s: want shape (..., K) with K ≥ 1", graph.Describe(logits))
	}
	if n < 0 {
		tensor.Fail(op, "total count %d: want n ≥ 0", n)
	}
	return &Multinomial{TotalCount: n, Logits: logits, logp: graph.LogSoftmax(logits, -1),
		batch: append([]int{}, s[:len(s)-1]...), k: s[len(s)-1]}
}

// BatchShape returns the logits' shape without the class axis.
func (d *Multinomial) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (K).
func (d *Multinomial) EventShape() []int { return []int{d.k} }

// Probs returns softmax(logits), shaped (batch..., K).
func (d *Multinomial) Probs() *graph.Node { return graph.Exp(d.logp) }

// LogProb returns log n! − Σₖ log xₖ! + Σₖ xₖ log pₖ for counts x
// (..., K). Counts that do not add up to n are not checked (the formula
// is evaluated as written, as PyTorch does without validation); with 0
// counts a class of probability 0 adds nothing.
func (d *Multinomial) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Multinomial.LogProb", x, d.Logits, d.batch, []int{d.k})
	lognf, _ := math.Lgamma(float64(d.TotalCount) + 1)
	// xₖ log pₖ from the log-softmax (no underflow of pₖ), taken as 0 where
	// xₖ = 0 so that a class of probability 0 (logit −∞) adds nothing.
	xlogp := graph.Where(graph.Equal(x, scalar(x, 0)), scalar(x, 0), graph.Mul(x, d.logp))
	t := graph.Sum(graph.Sub(xlogp, graph.Lgamma(graph.AddScalar(x, 1))), []int{-1}, false)
	return graph.AddScalar(t, lognf)
}

// Entropy panics: the multinomial entropy has no closed form.
func (d *Multinomial) Entropy() *graph.Node {
	return noClosedForm("probabilistic.Multinomial.Entropy", "−E[log p(x)]")
}

// Mean returns n·p.
func (d *Multinomial) Mean() *graph.Node {
	return graph.MulScalar(d.Probs(), float64(d.TotalCount))
}

// Variance returns n·p(1 − p) per class.
func (d *Multinomial) Variance() *graph.Node {
	p := d.Probs()
	return graph.MulScalar(graph.Mul(p, graph.Sub(scalar(p, 1), p)), float64(d.TotalCount))
}

// Sample draws counts by n categorical draws per row, without gradient.
func (d *Multinomial) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Multinomial.Sample", n, d.batch, []int{d.k})
	p := tensor.Softmax(hostValue(d.Logits), -1).Values()
	rows := len(p) / d.k
	out := make([]float64, prod(shape))
	for r := 0; r < len(out)/d.k; r++ {
		row := p[(r%rows)*d.k : (r%rows+1)*d.k]
		dst := out[r*d.k : (r+1)*d.k]
		for t := 0; t < d.TotalCount; t++ {
			dst[drawClass(rng, row)]++
		}
	}
	return tensor.FromValues(d.Logits.DType(), out, shape...)
}

// drawClass draws one index from the probabilities p by inverting their
// cumulative sums.
func drawClass(rng *tensor.RNG, p []float64) int {
	u := rng.Float64()
	acc := 0.0
	for k, pk := range p {
		acc += pk
		if u < acc {
			return k
		}
	}
	return len(p) - 1 // rounding can leave the total a little below 1
}

// Geometric is a batch of geometric distributions: the number k = 0, 1, 2, …
// of failures before the first success of Bernoulli trials with success
// probability p = sigmoid(Logits), P(k) = (1 − p)ᵏ p (PyTorch's and
// SciPy's geom shifted by one).
type Geometric struct {
	Logits *graph.Node // log(p/(1 − p))
	batch  []int
}

// NewGeometricLogits returns the geometric distribution with success
// probability sigmoid(logits).
func NewGeometricLogits(logits *graph.Node) *Geometric {
	checkParams("probabilistic.Geometric", logits)
	return &Geometric{Logits: logits, batch: logits.Shape()}
}

// NewGeometricProbs returns the geometric distribution with success
// probability probs, through logits log p − log(1 − p). It panics if probs
// is a constant with an entry outside (0, 1].
func NewGeometricProbs(probs *graph.Node) *Geometric {
	const op = "probabilistic.Geometric"
	checkParams(op, probs)
	checkConst(op, "probs", probs, func(v float64) bool { return v > 0 && v <= 1 }, "0 < probs ≤ 1")
	return NewGeometricLogits(graph.Sub(graph.Log(probs), graph.Log1p(graph.Neg(probs))))
}

// BatchShape returns the logits' shape.
func (d *Geometric) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Geometric) EventShape() []int { return []int{} }

// Probs returns p = sigmoid(logits).
func (d *Geometric) Probs() *graph.Node { return graph.Sigmoid(d.Logits) }

// LogProb returns k log(1 − p) + log p = −k·softplus(l) − softplus(−l).
func (d *Geometric) LogProb(k *graph.Node) *graph.Node {
	checkValue("probabilistic.Geometric.LogProb", k, d.Logits, d.batch, nil)
	return graph.Neg(graph.Add(graph.Mul(k, graph.Softplus(d.Logits)), graph.Softplus(graph.Neg(d.Logits))))
}

// Entropy returns (−(1 − p) log(1 − p) − p log p)/p = e^{−l}·softplus(l) +
// softplus(−l).
func (d *Geometric) Entropy() *graph.Node {
	l := d.Logits
	return graph.Add(graph.Mul(graph.Exp(graph.Neg(l)), graph.Softplus(l)), graph.Softplus(graph.Neg(l)))
}

// Mean returns (1 − p)/p = e^{−l}.
func (d *Geometric) Mean() *graph.Node { return graph.Exp(graph.Neg(d.Logits)) }

// Variance returns (1 − p)/p² = e^{−l}(1 + e^{−l}).
func (d *Geometric) Variance() *graph.Node {
	m := d.Mean()
	return graph.Mul(m, graph.AddScalar(m, 1))
}

// Sample draws ⌊log u / log(1 − p)⌋ with u ∈ (0, 1] (inverse CDF), without
// gradient.
func (d *Geometric) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Geometric.Sample", n, d.batch, nil)
	l := hostValue(d.Logits).Values()
	out := make([]float64, prod(shape))
	for i := range out {
		sp := softplus(l[i%len(l)]) // −log(1 − p)
		out[i] = math.Floor(-math.Log(1-rng.Float64()) / sp)
	}
	return tensor.FromValues(d.Logits.DType(), out, shape...)
}

// softplus returns log(1 + eˣ) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
