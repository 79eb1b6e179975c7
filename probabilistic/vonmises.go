package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// VonMises is a batch of von Mises distributions on the circle, with mean
// direction μ and concentration κ ≥ 0: the density
// exp(κ cos(x − μ))/(2π I₀(κ)) for x in [−π, π) (Mardia and Jupp 2000,
// Directional Statistics, ch. 3; Bishop 2006, Pattern Recognition and
// Machine Learning, §2.3.8). κ = 0 is the uniform distribution; large κ
// approaches N(μ, 1/κ).
type VonMises struct {
	Loc, Concentration *graph.Node
	batch              []int
}

// NewVonMises returns VonMises(loc, concentration). It panics if the
// parameters do not broadcast, are in different graphs or dtypes, or the
// concentration is a constant with a negative entry.
func NewVonMises(loc, concentration *graph.Node) *VonMises {
	const op = "probabilistic.VonMises"
	checkParams(op, loc, concentration)
	checkConst(op, "concentration", concentration, func(v float64) bool { return v >= 0 }, "concentration ≥ 0")
	return &VonMises{Loc: loc, Concentration: concentration, batch: batchOf(op, loc.Shape(), concentration.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *VonMises) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *VonMises) EventShape() []int { return []int{} }

// LogProb returns κ cos(x − μ) − log 2π − log I₀(κ).
func (d *VonMises) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.VonMises.LogProb", x, d.Loc, d.batch, nil)
	k := d.Concentration
	t := graph.Mul(k, graph.Cos(graph.Sub(x, d.Loc)))
	return graph.Sub(graph.AddScalar(t, -math.Log(2*math.Pi)), LogBesselI0(k))
}

// Entropy returns log(2π I₀(κ)) − κ·I₁(κ)/I₀(κ).
func (d *VonMises) Entropy() *graph.Node {
	k := d.Concentration
	h := graph.Sub(graph.AddScalar(LogBesselI0(k), math.Log(2*math.Pi)), graph.Mul(k, BesselI1OverI0(k)))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns μ, the mean direction.
func (d *VonMises) Mean() *graph.Node {
	return graph.BroadcastTo(d.Loc, d.batch...)
}

// Variance returns the circular variance 1 − I₁(κ)/I₀(κ) (PyTorch's
// convention), 1 − E[cos(x − μ)].
func (d *VonMises) Variance() *graph.Node {
	v := graph.Sub(scalar(d.Concentration, 1), BesselI1OverI0(d.Concentration))
	return graph.BroadcastTo(v, d.batch...)
}

// Sample draws angles in [−π, π) without gradient by the rejection method
// of Best and Fisher (1979).
func (d *VonMises) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.VonMises.Sample", n, d.batch, nil)
	mu := expandValues(hostValue(d.Loc), d.batch)
	kap := expandValues(hostValue(d.Concentration), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(mu)
		out[i] = wrapAngle(mu[j] + sampleVonMises(rng, kap[j]))
	}
	return tensor.FromValues(d.Loc.DType(), out, shape...)
}

// sampleVonMises draws an angle around 0 with concentration k.
func sampleVonMises(rng *tensor.RNG, k float64) float64 {
	if k < 1e-8 {
		return math.Pi * (2*rng.Float64() - 1)
	}
	tau := 1 + math.Sqrt(1+4*k*k)
	rho := (tau - math.Sqrt(2*tau)) / (2 * k)
	r := (1 + rho*rho) / (2 * rho)
	for {
		z := math.Cos(math.Pi * rng.Float64())
		f := (1 + r*z) / (r + z)
		c := k * (r - f)
		u := rng.Float64()
		if c*(2-c)-u > 0 || math.Log(c/u)+1-c >= 0 {
			theta := math.Acos(math.Max(-1, math.Min(1, f)))
			if rng.Float64() < 0.5 {
				theta = -theta
			}
			return theta
		}
	}
}

// wrapAngle maps x to [−π, π).
func wrapAngle(x float64) float64 {
	x = math.Mod(x+math.Pi, 2*math.Pi)
	if x < 0 {
		x += 2 * math.Pi
	}
	return x - math.Pi
}
