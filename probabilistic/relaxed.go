package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The relaxed (concrete, Gumbel-softmax) distributions are continuous
// stand-ins for Bernoulli and categorical variables with a
// reparameterised sampler, so a discrete choice can be trained by pathwise
// gradients (Maddison, Mnih and Teh 2017, "The Concrete distribution: a
// continuous relaxation of discrete random variables"; Jang, Gu and Poole
// 2017, "Categorical reparameterization with Gumbel-softmax"). As the
// temperature λ → 0 their draws approach one-hot vectors. Their means and
// variances have no closed form: Mean, Variance and Entropy panic.

// RelaxedBernoulli is a batch of binary concrete distributions on (0, 1):
// y = sigmoid((l + logit u)/λ) for u ~ U(0, 1), with logits l and
// temperature λ.
type RelaxedBernoulli struct {
	Temperature *graph.Node // λ > 0
	Logits      *graph.Node // log-odds l
	batch       []int
}

// NewRelaxedBernoulli returns the binary concrete distribution with the
// given temperature and logits. It panics if they do not broadcast, are in
// different graphs or dtypes, or if temperature is a constant with a
// non-positive entry.
func NewRelaxedBernoulli(temperature, logits *graph.Node) *RelaxedBernoulli {
	const op = "probabilistic.RelaxedBernoulli"
	checkParams(op, temperature, logits)
	checkConst(op, "temperature", temperature, positive, "temperature > 0")
	return &RelaxedBernoulli{Temperature: temperature, Logits: logits, batch: batchOf(op, temperature.Shape(), logits.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *RelaxedBernoulli) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *RelaxedBernoulli) EventShape() []int { return []int{} }

// LogProb returns the density of y ∈ (0, 1) (Maddison et al. 2017, eq. 21):
// with x = logit y and t = l − λx, log λ + t − 2 softplus(t) − log y −
// log(1 − y).
func (d *RelaxedBernoulli) LogProb(y *graph.Node) *graph.Node {
	checkValue("probabilistic.RelaxedBernoulli.LogProb", y, d.Logits, d.batch, nil)
	logy, log1my := graph.Log(y), graph.Log1p(graph.Neg(y))
	t := graph.Sub(d.Logits, graph.Mul(d.Temperature, graph.Sub(logy, log1my)))
	lp := graph.Sub(graph.Add(graph.Log(d.Temperature), t), graph.MulScalar(graph.Softplus(t), 2))
	return graph.Sub(lp, graph.Add(logy, log1my))
}

// Entropy panics: there is no closed form.
func (d *RelaxedBernoulli) Entropy() *graph.Node {
	return noClosedForm("probabilistic.RelaxedBernoulli.Entropy", "−E[log p(y)]")
}

// Mean panics: there is no closed form.
func (d *RelaxedBernoulli) Mean() *graph.Node {
	return noClosedForm("probabilistic.RelaxedBernoulli.Mean", "the mean")
}

// Variance panics: there is no closed form.
func (d *RelaxedBernoulli) Variance() *graph.Node {
	return noClosedForm("probabilistic.RelaxedBernoulli.Variance", "the variance")
}

// Support returns Sigmoid: the unit interval.
func (d *RelaxedBernoulli) Support() Bijector { return Sigmoid{} }

// logisticNoise returns logit u for u uniform on (0, 1), shaped like shape.
func logisticNoise(rng *tensor.RNG, dt tensor.DType, shape []int) *tensor.Tensor {
	vals := make([]float64, prod(shape))
	for i := range vals {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		vals[i] = math.Log(u) - math.Log1p(-u)
	}
	return tensor.FromValues(dt, vals, shape...)
}

// RSample returns the node sigmoid((l + logit u)/λ) with u a constant,
// differentiable in the logits and the temperature.
func (d *RelaxedBernoulli) RSample(rng *tensor.RNG, n int) *graph.Node {
	shape := sampleShape("probabilistic.RelaxedBernoulli.RSample", n, d.batch, nil)
	eps := d.Logits.Graph().Const(logisticNoise(rng, d.Logits.DType(), shape))
	return graph.Sigmoid(graph.Div(graph.Add(d.Logits, eps), d.Temperature))
}

// Sample draws as RSample does, without gradient.
func (d *RelaxedBernoulli) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.RelaxedBernoulli.Sample", n, d.batch, nil)
	eps := logisticNoise(rng, d.Logits.DType(), shape)
	return tensor.Sigmoid(tensor.Div(tensor.Add(hostValue(d.Logits), eps), hostValue(d.Temperature)))
}

// RelaxedOneHotCategorical is a batch of concrete distributions on the
// interior of the simplex Δᴷ: y = softmax((l + g)/λ) with g independent
// standard Gumbel noise, logits l (..., K) and temperature λ (broadcasting
// against the batch shape).
type RelaxedOneHotCategorical struct {
	Temperature *graph.Node // λ > 0, shaped like the batch or broadcasting to it
	Logits      *graph.Node // (batch..., K)
	batch       []int
	k           int
}

// NewRelaxedOneHotCategorical returns the concrete distribution with the
// given temperature and logits (..., K). It panics if the logits are 0-d,
// the shapes do not broadcast, or temperature is a constant with a
// non-positive entry.
func NewRelaxedOneHotCategorical(temperature, logits *graph.Node) *RelaxedOneHotCategorical {
	const op = "probabilistic.RelaxedOneHotCategorical"
	checkParams(op, temperature, logits)
	checkConst(op, "temperature", temperature, positive, "temperature > 0")
	s := logits.Shape()
	if len(s) == 0 || s[len(s)-1] < 2 {
		tensor.Fail(op, "logits %s: want shape (..., K) with K ≥ 2", graph.Describe(logits))
	}
	batch := batchOf(op, temperature.Shape(), s[:len(s)-1])
	return &RelaxedOneHotCategorical{Temperature: temperature, Logits: logits, batch: batch, k: s[len(s)-1]}
}

// BatchShape returns the broadcast batch shape.
func (d *RelaxedOneHotCategorical) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (K).
func (d *RelaxedOneHotCategorical) EventShape() []int { return []int{d.k} }

// temp returns λ with a trailing axis to broadcast against the classes.
func (d *RelaxedOneHotCategorical) temp() *graph.Node { return graph.Unsqueeze(d.Temperature, -1) }

// LogProb returns the density of y in the simplex (Maddison et al. 2017,
// eq. 12): log (K−1)! + (K−1) log λ + Σₖ (lₖ − (λ+1) log yₖ) −
// K·logΣₖ exp(lₖ − λ log yₖ), for y (..., K).
func (d *RelaxedOneHotCategorical) LogProb(y *graph.Node) *graph.Node {
	checkValue("probabilistic.RelaxedOneHotCategorical.LogProb", y, d.Logits, d.batch, []int{d.k})
	k := float64(d.k)
	lgk, _ := math.Lgamma(k)
	logy := graph.Log(y)
	score := graph.Sub(d.Logits, graph.Mul(d.temp(), logy))
	lse := graph.LogSumExp(score, []int{-1}, false)
	t := graph.Sum(graph.Sub(score, logy), []int{-1}, false)
	lp := graph.Sub(t, graph.MulScalar(lse, k))
	return graph.AddScalar(graph.Add(lp, graph.MulScalar(graph.Log(d.Temperature), k-1)), lgk)
}

// Entropy panics: there is no closed form.
func (d *RelaxedOneHotCategorical) Entropy() *graph.Node {
	return noClosedForm("probabilistic.RelaxedOneHotCategorical.Entropy", "−E[log p(y)]")
}

// Mean panics: there is no closed form.
func (d *RelaxedOneHotCategorical) Mean() *graph.Node {
	return noClosedForm("probabilistic.RelaxedOneHotCategorical.Mean", "the mean")
}

// Variance panics: there is no closed form.
func (d *RelaxedOneHotCategorical) Variance() *graph.Node {
	return noClosedForm("probabilistic.RelaxedOneHotCategorical.Variance", "the variance")
}

// Support returns StickBreaking: the interior of the simplex.
func (d *RelaxedOneHotCategorical) Support() Bijector { return StickBreaking{} }

// gumbel returns standard Gumbel noise −log(−log u), shaped (n, batch..., K).
func (d *RelaxedOneHotCategorical) gumbel(op string, rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape(op, n, d.batch, []int{d.k})
	vals := make([]float64, prod(shape))
	for i := range vals {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		vals[i] = -math.Log(-math.Log(u))
	}
	return tensor.FromValues(d.Logits.DType(), vals, shape...)
}

// RSample returns the node softmax((l + g)/λ) with the Gumbel noise g a
// constant (the Gumbel-softmax trick), differentiable in l and λ.
func (d *RelaxedOneHotCategorical) RSample(rng *tensor.RNG, n int) *graph.Node {
	g := d.Logits.Graph().Const(d.gumbel("probabilistic.RelaxedOneHotCategorical.RSample", rng, n))
	return graph.Softmax(graph.Div(graph.Add(d.Logits, g), d.temp()), -1)
}

// Sample draws as RSample does, without gradient.
func (d *RelaxedOneHotCategorical) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	g := d.gumbel("probabilistic.RelaxedOneHotCategorical.Sample", rng, n)
	t := tensor.Unsqueeze(hostValue(d.Temperature), -1)
	return tensor.Softmax(tensor.Div(tensor.Add(hostValue(d.Logits), g), t), -1)
}
