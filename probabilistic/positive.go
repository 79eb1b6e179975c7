package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// LogNormal is a batch of log-normal distributions, the law of e^X for
// X ~ N(Loc, Scale²).
type LogNormal struct {
	Loc   *graph.Node // mean μ of log X
	Scale *graph.Node // standard deviation σ > 0 of log X
	batch []int
}

// NewLogNormal returns LogNormal(loc, scale). It panics if the parameters
// do not broadcast, are in different graphs or dtypes, or if scale is a
// constant with a non-positive entry.
func NewLogNormal(loc, scale *graph.Node) *LogNormal {
	const op = "probabilistic.LogNormal"
	checkParams(op, loc, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &LogNormal{Loc: loc, Scale: scale, batch: batchOf(op, loc.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of Loc and Scale.
func (d *LogNormal) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *LogNormal) EventShape() []int { return []int{} }

func (d *LogNormal) normal() *Normal { return &Normal{Loc: d.Loc, Scale: d.Scale, batch: d.batch} }

// LogProb returns log N(log x; μ, σ²) − log x.
func (d *LogNormal) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.LogNormal.LogProb", x, d.Loc, d.batch, nil)
	lx := graph.Log(x)
	return graph.Sub(d.normal().LogProb(lx), lx)
}

// LogCDF returns log Φ((log x − μ)/σ).
func (d *LogNormal) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.LogNormal.LogCDF", x, d.Loc, d.batch, nil)
	return d.normal().LogCDF(graph.Log(x))
}

// LogSurvival returns log(1 − Φ((log x − μ)/σ)).
func (d *LogNormal) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.LogNormal.LogSurvival", x, d.Loc, d.batch, nil)
	return d.normal().LogSurvival(graph.Log(x))
}

// Entropy returns μ + ½ + ½ log 2π + log σ.
func (d *LogNormal) Entropy() *graph.Node {
	return graph.Add(d.normal().Entropy(), graph.BroadcastTo(d.Loc, d.batch...))
}

// Mean returns exp(μ + σ²/2).
func (d *LogNormal) Mean() *graph.Node {
	m := graph.Exp(graph.Add(d.Loc, graph.MulScalar(graph.Square(d.Scale), 0.5)))
	return graph.BroadcastTo(m, d.batch...)
}

// Variance returns (exp(σ²) − 1)·exp(2μ + σ²).
func (d *LogNormal) Variance() *graph.Node {
	s2 := graph.Square(d.Scale)
	v := graph.Mul(graph.Expm1(s2), graph.Exp(graph.Add(graph.MulScalar(d.Loc, 2), s2)))
	return graph.BroadcastTo(v, d.batch...)
}

// Support returns Exp: the positive numbers.
func (d *LogNormal) Support() Bijector { return Exp{} }

// Sample draws exp(μ + σε), without gradient.
func (d *LogNormal) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	return tensor.Exp(d.normal().Sample(rng, n))
}

// RSample returns the node exp(μ + σε) with ε a constant.
func (d *LogNormal) RSample(rng *tensor.RNG, n int) *graph.Node {
	return graph.Exp(d.normal().RSample(rng, n))
}

// Exponential is a batch of exponential distributions with rate λ: density
// λe^{−λx} on x ≥ 0.
type Exponential struct {
	Rate  *graph.Node // λ > 0
	batch []int
}

// NewExponential returns Exponential(rate). It panics if rate is a constant
// with a non-positive entry.
func NewExponential(rate *graph.Node) *Exponential {
	const op = "probabilistic.Exponential"
	checkParams(op, rate)
	checkConst(op, "rate", rate, positive, "rate > 0")
	return &Exponential{Rate: rate, batch: rate.Shape()}
}

// BatchShape returns the rate's shape.
func (d *Exponential) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Exponential) EventShape() []int { return []int{} }

// LogProb returns log λ − λx for x ≥ 0 and −∞ for x < 0.
func (d *Exponential) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Exponential.LogProb", x, d.Rate, d.batch, nil)
	lp := graph.Sub(graph.Log(d.Rate), graph.Mul(d.Rate, x))
	return graph.Where(graph.GreaterEqual(x, scalar(x, 0)), lp, scalar(x, math.Inf(-1)))
}

// LogCDF returns log(1 − e^{−λx}), computed with expm1 (−∞ for x ≤ 0).
func (d *Exponential) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Exponential.LogCDF", x, d.Rate, d.batch, nil)
	t := graph.Mul(d.Rate, graph.Clamp(x, 0, math.Inf(1)))
	return graph.Log(graph.Neg(graph.Expm1(graph.Neg(t))))
}

// LogSurvival returns −λx (0 for x ≤ 0).
func (d *Exponential) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Exponential.LogSurvival", x, d.Rate, d.batch, nil)
	return graph.Neg(graph.Mul(d.Rate, graph.Clamp(x, 0, math.Inf(1))))
}

// Entropy returns 1 − log λ.
func (d *Exponential) Entropy() *graph.Node {
	return graph.AddScalar(graph.Neg(graph.Log(d.Rate)), 1)
}

// Mean returns 1/λ.
func (d *Exponential) Mean() *graph.Node { return graph.Reciprocal(d.Rate) }

// Variance returns 1/λ².
func (d *Exponential) Variance() *graph.Node { return graph.Reciprocal(graph.Square(d.Rate)) }

// Support returns Exp: the positive numbers.
func (d *Exponential) Support() Bijector { return Exp{} }

// noise returns standard exponential variates −log u, u ∈ (0, 1].
func (d *Exponential) noise(op string, rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape(op, n, d.batch, nil)
	vals := make([]float64, prod(shape))
	for i := range vals {
		vals[i] = -math.Log(1 - rng.Float64())
	}
	return tensor.FromValues(d.Rate.DType(), vals, shape...)
}

// Sample draws ε/λ with ε standard exponential (inverse CDF), without
// gradient.
func (d *Exponential) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	return tensor.Div(d.noise("probabilistic.Exponential.Sample", rng, n), hostValue(d.Rate))
}

// RSample returns the node ε/λ with ε a constant, differentiable in λ.
func (d *Exponential) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := d.noise("probabilistic.Exponential.RSample", rng, n)
	return graph.Div(d.Rate.Graph().Const(eps), d.Rate)
}

// InverseGamma is a batch of inverse-gamma distributions, the law of 1/X
// for X ~ Gamma(Concentration, Rate): density βᵅ x^{−α−1} e^{−β/x} / Γ(α)
// on x > 0, the conjugate prior of a normal variance.
type InverseGamma struct {
	Concentration *graph.Node // shape α > 0
	Scale         *graph.Node // scale β > 0 (the rate of the gamma 1/X)
	batch         []int
}

// NewInverseGamma returns InverseGamma(concentration, scale). It panics if
// the parameters do not broadcast, are in different graphs or dtypes, or
// are constants with a non-positive entry.
func NewInverseGamma(concentration, scale *graph.Node) *InverseGamma {
	const op = "probabilistic.InverseGamma"
	checkParams(op, concentration, scale)
	checkConst(op, "concentration", concentration, positive, "concentration > 0")
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &InverseGamma{Concentration: concentration, Scale: scale, batch: batchOf(op, concentration.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *InverseGamma) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *InverseGamma) EventShape() []int { return []int{} }

// LogProb returns α log β − (α + 1) log x − β/x − log Γ(α).
func (d *InverseGamma) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.InverseGamma.LogProb", x, d.Concentration, d.batch, nil)
	a, b := d.Concentration, d.Scale
	t := graph.Sub(graph.Mul(a, graph.Log(b)), graph.Mul(graph.AddScalar(a, 1), graph.Log(x)))
	return graph.Sub(t, graph.Add(graph.Div(b, x), graph.Lgamma(a)))
}

// Entropy returns α + log β + log Γ(α) − (1 + α)ψ(α).
func (d *InverseGamma) Entropy() *graph.Node {
	a := d.Concentration
	h := graph.Add(graph.Add(a, graph.Log(d.Scale)), graph.Lgamma(a))
	h = graph.Sub(h, graph.Mul(graph.AddScalar(a, 1), graph.Digamma(a)))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns β/(α − 1) for α > 1 and +∞ otherwise.
func (d *InverseGamma) Mean() *graph.Node {
	a := d.Concentration
	m := graph.Div(d.Scale, graph.AddScalar(a, -1))
	m = graph.Where(graph.Greater(a, scalar(a, 1)), m, scalar(a, math.Inf(1)))
	return graph.BroadcastTo(m, d.batch...)
}

// Variance returns β²/((α − 1)²(α − 2)) for α > 2 and +∞ otherwise.
func (d *InverseGamma) Variance() *graph.Node {
	a := d.Concentration
	am1 := graph.AddScalar(a, -1)
	v := graph.Div(graph.Square(d.Scale), graph.Mul(graph.Square(am1), graph.AddScalar(a, -2)))
	v = graph.Where(graph.Greater(a, scalar(a, 2)), v, scalar(a, math.Inf(1)))
	return graph.BroadcastTo(v, d.batch...)
}

// Support returns Exp: the positive numbers.
func (d *InverseGamma) Support() Bijector { return Exp{} }

// Sample draws β/G with G ~ Gamma(α, 1) (Marsaglia and Tsang), without
// gradient.
func (d *InverseGamma) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.InverseGamma.Sample", n, d.batch, nil)
	a := expandValues(hostValue(d.Concentration), d.batch)
	b := expandValues(hostValue(d.Scale), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(a)
		out[i] = b[j] / sampleGamma(rng, a[j])
	}
	return tensor.FromValues(d.Concentration.DType(), out, shape...)
}
