package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// HalfNormal is a batch of half-normal distributions, the law of |X| for
// X ~ N(0, Scale²): density √2/(σ√π)·exp(−x²/2σ²) on x ≥ 0, a common prior
// on scales (Gelman 2006, "Prior distributions for variance parameters in
// hierarchical models").
type HalfNormal struct {
	Scale *graph.Node // σ > 0
	batch []int
}

// NewHalfNormal returns HalfNormal(scale). It panics if scale is a constant
// with a non-positive entry.
func NewHalfNormal(scale *graph.Node) *HalfNormal {
	const op = "probabilistic.HalfNormal"
	checkParams(op, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &HalfNormal{Scale: scale, batch: scale.Shape()}
}

// BatchShape returns the scale's shape.
func (d *HalfNormal) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *HalfNormal) EventShape() []int { return []int{} }

// LogProb returns ½ log(2/π) − log σ − x²/2σ² for x ≥ 0 and −∞ for x < 0.
func (d *HalfNormal) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.HalfNormal.LogProb", x, d.Scale, d.batch, nil)
	z := graph.Div(x, d.Scale)
	lp := graph.Neg(graph.Add(graph.MulScalar(graph.Square(z), 0.5), graph.Log(d.Scale)))
	lp = graph.AddScalar(lp, 0.5*math.Log(2/math.Pi))
	return graph.Where(graph.GreaterEqual(x, scalar(x, 0)), lp, scalar(x, math.Inf(-1)))
}

// LogCDF returns log erf(x/σ√2) (−∞ for x ≤ 0).
func (d *HalfNormal) LogCDF(x *graph.Node) *graph.Node {
	checkValue("probabilistic.HalfNormal.LogCDF", x, d.Scale, d.batch, nil)
	z := graph.Clamp(graph.Div(x, d.Scale), 0, math.Inf(1))
	return graph.Log(graph.Erf(graph.MulScalar(z, invSqrt2)))
}

// LogSurvival returns log erfc(x/σ√2), from graph.Erf (see Normal.LogCDF
// for the accuracy in the far tail).
func (d *HalfNormal) LogSurvival(x *graph.Node) *graph.Node {
	checkValue("probabilistic.HalfNormal.LogSurvival", x, d.Scale, d.batch, nil)
	z := graph.Clamp(graph.Div(x, d.Scale), 0, math.Inf(1))
	return graph.Log(erfc(graph.MulScalar(z, invSqrt2)))
}

// Entropy returns ½ log(πσ²/2) + ½.
func (d *HalfNormal) Entropy() *graph.Node {
	return graph.AddScalar(graph.Log(d.Scale), 0.5*math.Log(math.Pi/2)+0.5)
}

// Mean returns σ√(2/π).
func (d *HalfNormal) Mean() *graph.Node { return graph.MulScalar(d.Scale, math.Sqrt(2/math.Pi)) }

// Variance returns σ²(1 − 2/π).
func (d *HalfNormal) Variance() *graph.Node {
	return graph.MulScalar(graph.Square(d.Scale), 1-2/math.Pi)
}

// Support returns Exp: the positive numbers.
func (d *HalfNormal) Support() Bijector { return Exp{} }

// Sample draws σ|ε| with ε ~ N(0, 1), without gradient.
func (d *HalfNormal) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := rng.Normal(d.Scale.DType(), 0, 1, sampleShape("probabilistic.HalfNormal.Sample", n, d.batch, nil)...)
	return tensor.Mul(hostValue(d.Scale), tensor.Abs(eps))
}

// RSample returns the node σ·|ε| with ε a constant, differentiable in σ.
func (d *HalfNormal) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := rng.Normal(d.Scale.DType(), 0, 1, sampleShape("probabilistic.HalfNormal.RSample", n, d.batch, nil)...)
	return graph.Mul(d.Scale, d.Scale.Graph().Const(tensor.Abs(eps)))
}

// HalfCauchy is a batch of half-Cauchy distributions, the law of |X| for X
// Cauchy with location 0 and the given scale: density 2/(πs(1 + (x/s)²)) on
// x ≥ 0, the weakly informative scale prior of Gelman (2006) and of the
// horseshoe (Carvalho, Polson and Scott 2010, "The horseshoe estimator for
// sparse signals"). Its mean and variance are infinite.
type HalfCauchy struct {
	Scale *graph.Node // s > 0
	batch []int
}

// NewHalfCauchy returns HalfCauchy(scale). It panics if scale is a constant
// with a non-positive entry.
func NewHalfCauchy(scale *graph.Node) *HalfCauchy {
	const op = "probabilistic.HalfCauchy"
	checkParams(op, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &HalfCauchy{Scale: scale, batch: scale.Shape()}
}

// BatchShape returns the scale's shape.
func (d *HalfCauchy) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *HalfCauchy) EventShape() []int { return []int{} }

// LogProb returns log(2/π) − log s − log(1 + (x/s)²) for x ≥ 0 and −∞ for
// x < 0.
func (d *HalfCauchy) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.HalfCauchy.LogProb", x, d.Scale, d.batch, nil)
	lp := graph.Neg(graph.Add(cauchyKernel(graph.Div(x, d.Scale)), graph.Log(d.Scale)))
	lp = graph.AddScalar(lp, math.Log(2/math.Pi))
	return graph.Where(graph.GreaterEqual(x, scalar(x, 0)), lp, scalar(x, math.Inf(-1)))
}

// cauchyKernel returns log(1 + z²).
func cauchyKernel(z *graph.Node) *graph.Node { return graph.Log1p(graph.Square(z)) }

// Entropy returns log(2πs).
func (d *HalfCauchy) Entropy() *graph.Node {
	return graph.AddScalar(graph.Log(d.Scale), math.Log(2*math.Pi))
}

// Mean returns +∞.
func (d *HalfCauchy) Mean() *graph.Node {
	return graph.AddScalar(graph.MulScalar(d.Scale, 0), math.Inf(1))
}

// Variance returns +∞.
func (d *HalfCauchy) Variance() *graph.Node { return d.Mean() }

// Support returns Exp: the positive numbers.
func (d *HalfCauchy) Support() Bijector { return Exp{} }

// cauchyNoise returns standard Cauchy variates tan(π(u − ½)), by the
// inverse CDF, shaped (n, batch...).
func cauchyNoise(op string, rng *tensor.RNG, dt tensor.DType, n int, batch []int) *tensor.Tensor {
	shape := sampleShape(op, n, batch, nil)
	vals := make([]float64, prod(shape))
	for i := range vals {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64() // tan(−π/2) is −∞
		}
		vals[i] = math.Tan(math.Pi * (u - 0.5))
	}
	return tensor.FromValues(dt, vals, shape...)
}

// Sample draws s|ε| with ε standard Cauchy, without gradient.
func (d *HalfCauchy) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := cauchyNoise("probabilistic.HalfCauchy.Sample", rng, d.Scale.DType(), n, d.batch)
	return tensor.Mul(hostValue(d.Scale), tensor.Abs(eps))
}

// RSample returns the node s·|ε| with ε a constant, differentiable in s.
func (d *HalfCauchy) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := cauchyNoise("probabilistic.HalfCauchy.RSample", rng, d.Scale.DType(), n, d.batch)
	return graph.Mul(d.Scale, d.Scale.Graph().Const(tensor.Abs(eps)))
}

// Cauchy is a batch of Cauchy (Lorentz) distributions: density
// 1/(πs(1 + ((x − Loc)/s)²)). Its mean is undefined (NaN) and its variance
// infinite.
type Cauchy struct {
	Loc   *graph.Node // location (median)
	Scale *graph.Node // half width at half maximum s > 0
	batch []int
}

// NewCauchy returns Cauchy(loc, scale). It panics if the parameters do not
// broadcast, are in different graphs or dtypes, or if scale is a constant
// with a non-positive entry.
func NewCauchy(loc, scale *graph.Node) *Cauchy {
	const op = "probabilistic.Cauchy"
	checkParams(op, loc, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &Cauchy{Loc: loc, Scale: scale, batch: batchOf(op, loc.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of Loc and Scale.
func (d *Cauchy) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *Cauchy) EventShape() []int { return []int{} }

// LogProb returns −log π − log s − log(1 + z²) with z = (x − loc)/s.
func (d *Cauchy) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Cauchy.LogProb", x, d.Loc, d.batch, nil)
	z := graph.Div(graph.Sub(x, d.Loc), d.Scale)
	return graph.Neg(graph.AddScalar(graph.Add(cauchyKernel(z), graph.Log(d.Scale)), math.Log(math.Pi)))
}

// Entropy returns log(4πs).
func (d *Cauchy) Entropy() *graph.Node {
	return graph.BroadcastTo(graph.AddScalar(graph.Log(d.Scale), math.Log(4*math.Pi)), d.batch...)
}

// Mean returns NaN: the Cauchy distribution has no mean.
func (d *Cauchy) Mean() *graph.Node {
	return graph.BroadcastTo(graph.AddScalar(graph.MulScalar(d.Loc, 0), math.NaN()), d.batch...)
}

// Variance returns +∞.
func (d *Cauchy) Variance() *graph.Node {
	return graph.BroadcastTo(graph.AddScalar(graph.MulScalar(d.Scale, 0), math.Inf(1)), d.batch...)
}

// Support returns Identity: the real line.
func (d *Cauchy) Support() Bijector { return Identity{} }

// Sample draws loc + s·ε with ε standard Cauchy, without gradient.
func (d *Cauchy) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	eps := cauchyNoise("probabilistic.Cauchy.Sample", rng, d.Loc.DType(), n, d.batch)
	return tensor.Add(hostValue(d.Loc), tensor.Mul(hostValue(d.Scale), eps))
}

// RSample returns the node loc + s·ε with ε a constant standard Cauchy
// noise, differentiable in loc and s.
func (d *Cauchy) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := cauchyNoise("probabilistic.Cauchy.RSample", rng, d.Loc.DType(), n, d.batch)
	return graph.Add(d.Loc, graph.Mul(d.Scale, d.Loc.Graph().Const(eps)))
}
