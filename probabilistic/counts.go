package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Distributions of counts k = 0, 1, 2, …: LogProb takes the counts as
// float values of the parameters' dtype (non-integer values give the
// continuous extension of the formula, as PyTorch's do without
// validation). None has a reparameterised sampler, and their entropies
// have no closed form: Entropy panics.

// noEntropy panics for the count distributions.
func noEntropy(op string) *graph.Node {
	tensor.Fail(op, "no closed form; estimate −E[log p(k)] from samples")
	return nil
}

// Poisson is a batch of Poisson distributions with rate λ:
// P(k) = λᵏe^{−λ}/k!.
type Poisson struct {
	Rate  *graph.Node
	batch []int
}

// NewPoisson returns Poisson(rate). It panics if rate is a constant with a
// negative entry.
func NewPoisson(rate *graph.Node) *Poisson {
	const op = "probabilistic.Poisson"
	checkParams(op, rate)
	checkConst(op, "rate", rate, func(v float64) bool { return v >= 0 }, "rate ≥ 0")
	return &Poisson{Rate: rate, batch: rate.Shape()}
}

// BatchShape returns the rate's shape.
func (d *Poisson) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Poisson) EventShape() []int { return []int{} }

// LogProb returns k log λ − λ − log k! (k log λ is 0 at k = 0, also for λ = 0).
func (d *Poisson) LogProb(k *graph.Node) *graph.Node {
	checkValue("probabilistic.Poisson.LogProb", k, d.Rate, d.batch, nil)
	return graph.Sub(graph.Sub(graph.Xlogy(k, d.Rate), d.Rate), graph.Lgamma(graph.AddScalar(k, 1)))
}

// Entropy panics: the Poisson entropy has no closed form.
func (d *Poisson) Entropy() *graph.Node { return noEntropy("probabilistic.Poisson.Entropy") }

// Mean returns λ.
func (d *Poisson) Mean() *graph.Node { return d.Rate }

// Variance returns λ.
func (d *Poisson) Variance() *graph.Node { return d.Rate }

// Sample draws counts without gradient: by multiplying uniforms (Knuth)
// for λ < 12, and by the transformed rejection method PTRS of Hörmann
// (1993) above.
func (d *Poisson) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Poisson.Sample", n, d.batch, nil)
	lam := expandValues(hostValue(d.Rate), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		out[i] = samplePoisson(rng, lam[i%len(lam)])
	}
	return tensor.FromValues(d.Rate.DType(), out, shape...)
}

func samplePoisson(rng *tensor.RNG, lam float64) float64 {
	switch {
	case !(lam >= 0):
		return math.NaN()
	case lam == 0:
		return 0
	case lam < 12:
		limit, p, k := math.Exp(-lam), 1.0, 0.0
		for {
			p *= rng.Float64()
			if p <= limit {
				return k
			}
			k++
		}
	}
	// PTRS (Hörmann 1993, "The transformed rejection method for generating
	// Poisson random variables"), with its published constants.
	slam := math.Sqrt(lam)
	loglam := math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		v := rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return k
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return k
		}
	}
}

// Binomial is a batch of binomial distributions: successes in TotalCount
// trials of probability p, P(k) = C(n, k)pᵏ(1 − p)ⁿ⁻ᵏ.
type Binomial struct {
	TotalCount, Probs *graph.Node
	batch             []int
}

// NewBinomial returns Binomial(totalCount, probs). It panics if the
// parameters do not broadcast, totalCount is a constant that is not a
// non-negative integer, or probs a constant outside [0, 1].
func NewBinomial(totalCount, probs *graph.Node) *Binomial {
	const op = "probabilistic.Binomial"
	checkParams(op, totalCount, probs)
	checkConst(op, "total_count", totalCount, func(v float64) bool { return v >= 0 && v == math.Trunc(v) }, "a non-negative integer total_count")
	checkConst(op, "probs", probs, func(v float64) bool { return v >= 0 && v <= 1 }, "0 ≤ probs ≤ 1")
	return &Binomial{TotalCount: totalCount, Probs: probs, batch: batchOf(op, totalCount.Shape(), probs.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *Binomial) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Binomial) EventShape() []int { return []int{} }

// LogProb returns log C(n, k) + k log p + (n − k) log(1 − p), with 0·log 0 = 0.
func (d *Binomial) LogProb(k *graph.Node) *graph.Node {
	checkValue("probabilistic.Binomial.LogProb", k, d.Probs, d.batch, nil)
	n := d.TotalCount
	rest := graph.Sub(n, k)
	c := graph.Sub(graph.Lgamma(graph.AddScalar(n, 1)), graph.Add(graph.Lgamma(graph.AddScalar(k, 1)), graph.Lgamma(graph.AddScalar(rest, 1))))
	return graph.Add(c, graph.Add(graph.Xlogy(k, d.Probs), graph.Xlogy(rest, graph.Sub(scalar(d.Probs, 1), d.Probs))))
}

// Entropy panics: the binomial entropy has no closed form.
func (d *Binomial) Entropy() *graph.Node { return noEntropy("probabilistic.Binomial.Entropy") }

// Mean returns np.
func (d *Binomial) Mean() *graph.Node {
	return graph.BroadcastTo(graph.Mul(d.TotalCount, d.Probs), d.batch...)
}

// Variance returns np(1 − p).
func (d *Binomial) Variance() *graph.Node {
	v := graph.Mul(graph.Mul(d.TotalCount, d.Probs), graph.Sub(scalar(d.Probs, 1), d.Probs))
	return graph.BroadcastTo(v, d.batch...)
}

// Sample draws counts without gradient, as sums of Bernoulli trials.
func (d *Binomial) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.Binomial.Sample", n, d.batch, nil)
	tc := expandValues(hostValue(d.TotalCount), d.batch)
	p := expandValues(hostValue(d.Probs), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(p)
		k := 0.0
		for range int(tc[j]) {
			if rng.Float64() < p[j] {
				k++
			}
		}
		out[i] = k
	}
	return tensor.FromValues(d.Probs.DType(), out, shape...)
}

// NegativeBinomial is a batch of negative binomial distributions in
// PyTorch's parameterisation: the number k of successes, each of
// probability p, before TotalCount = r failures,
// P(k) = Γ(k + r)/(k!Γ(r))·pᵏ(1 − p)ʳ. It is the Poisson with a
// Gamma-distributed rate, the usual model of over-dispersed counts.
type NegativeBinomial struct {
	TotalCount, Probs *graph.Node
	batch             []int
}

// NewNegativeBinomial returns NegativeBinomial(totalCount, probs). It
// panics if the parameters do not broadcast, totalCount is a constant with
// a non-positive entry, or probs a constant outside [0, 1).
func NewNegativeBinomial(totalCount, probs *graph.Node) *NegativeBinomial {
	const op = "probabilistic.NegativeBinomial"
	checkParams(op, totalCount, probs)
	checkConst(op, "total_count", totalCount, positive, "total_count > 0")
	checkConst(op, "probs", probs, func(v float64) bool { return v >= 0 && v < 1 }, "0 ≤ probs < 1")
	return &NegativeBinomial{TotalCount: totalCount, Probs: probs, batch: batchOf(op, totalCount.Shape(), probs.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *NegativeBinomial) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *NegativeBinomial) EventShape() []int { return []int{} }

// LogProb returns log Γ(k + r) − log k! − log Γ(r) + k log p + r log(1 − p).
func (d *NegativeBinomial) LogProb(k *graph.Node) *graph.Node {
	checkValue("probabilistic.NegativeBinomial.LogProb", k, d.Probs, d.batch, nil)
	r := d.TotalCount
	c := graph.Sub(graph.Lgamma(graph.Add(k, r)), graph.Add(graph.Lgamma(graph.AddScalar(k, 1)), graph.Lgamma(r)))
	return graph.Add(c, graph.Add(graph.Xlogy(k, d.Probs), graph.Mul(r, graph.Log1p(graph.Neg(d.Probs)))))
}

// Entropy panics: the negative binomial entropy has no closed form.
func (d *NegativeBinomial) Entropy() *graph.Node {
	return noEntropy("probabilistic.NegativeBinomial.Entropy")
}

// Mean returns rp/(1 − p).
func (d *NegativeBinomial) Mean() *graph.Node {
	m := graph.Div(graph.Mul(d.TotalCount, d.Probs), graph.Sub(scalar(d.Probs, 1), d.Probs))
	return graph.BroadcastTo(m, d.batch...)
}

// Variance returns rp/(1 − p)².
func (d *NegativeBinomial) Variance() *graph.Node {
	q := graph.Sub(scalar(d.Probs, 1), d.Probs)
	return graph.BroadcastTo(graph.Div(graph.Mul(d.TotalCount, d.Probs), graph.Square(q)), d.batch...)
}

// Sample draws Poisson(λ) counts with λ ~ Gamma(r, p/(1 − p)), without
// gradient.
func (d *NegativeBinomial) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.NegativeBinomial.Sample", n, d.batch, nil)
	r := expandValues(hostValue(d.TotalCount), d.batch)
	p := expandValues(hostValue(d.Probs), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(p)
		out[i] = samplePoisson(rng, sampleGamma(rng, r[j])*p[j]/(1-p[j]))
	}
	return tensor.FromValues(d.Probs.DType(), out, shape...)
}
