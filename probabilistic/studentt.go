package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// StudentT is a batch of Student t distributions with ν degrees of
// freedom, location μ and scale σ: the density
// Γ((ν+1)/2)/(Γ(ν/2)√(νπ)σ)·(1 + z²/ν)^{−(ν+1)/2}, z = (x − μ)/σ. Heavy
// tails make it the robust choice for likelihoods and priors (Bishop 2006,
// Pattern Recognition and Machine Learning, §2.3.7); ν → ∞ gives the
// normal.
type StudentT struct {
	DF, Loc, Scale *graph.Node
	batch          []int
}

// NewStudentT returns StudentT(df, loc, scale). It panics if the
// parameters do not broadcast, are in different graphs or dtypes, or df or
// scale is a constant with a non-positive entry.
func NewStudentT(df, loc, scale *graph.Node) *StudentT {
	const op = "probabilistic.StudentT"
	checkParams(op, df, loc, scale)
	checkConst(op, "df", df, positive, "df > 0")
	checkConst(op, "scale", scale, positive, "scale > 0")
	return &StudentT{DF: df, Loc: loc, Scale: scale, batch: batchOf(op, df.Shape(), loc.Shape(), scale.Shape())}
}

// BatchShape returns the broadcast shape of the parameters.
func (d *StudentT) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns ().
func (d *StudentT) EventShape() []int { return []int{} }

// LogProb returns log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπ) − log σ −
// (ν+1)/2 · log(1 + z²/ν).
func (d *StudentT) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.StudentT.LogProb", x, d.Loc, d.batch, nil)
	nu := d.DF
	half := graph.MulScalar(graph.AddScalar(nu, 1), 0.5)
	z := graph.Div(graph.Sub(x, d.Loc), d.Scale)
	norm := graph.Sub(graph.Lgamma(half), graph.Lgamma(graph.MulScalar(nu, 0.5)))
	norm = graph.Sub(norm, graph.MulScalar(graph.Log(graph.MulScalar(nu, math.Pi)), 0.5))
	norm = graph.Sub(norm, graph.Log(d.Scale))
	return graph.Sub(norm, graph.Mul(half, graph.Log1p(graph.Div(graph.Square(z), nu))))
}

// Entropy returns (ν+1)/2·(ψ((ν+1)/2) − ψ(ν/2)) + ½ log ν + log B(ν/2, ½) + log σ.
func (d *StudentT) Entropy() *graph.Node {
	nu := d.DF
	half := graph.MulScalar(graph.AddScalar(nu, 1), 0.5)
	h := graph.Mul(half, graph.Sub(graph.Digamma(half), graph.Digamma(graph.MulScalar(nu, 0.5))))
	h = graph.Add(h, graph.MulScalar(graph.Log(nu), 0.5))
	h = graph.Add(h, lbeta(graph.MulScalar(nu, 0.5), scalar(nu, 0.5)))
	return graph.BroadcastTo(graph.Add(h, graph.Log(d.Scale)), d.batch...)
}

// Mean returns μ where ν > 1 and NaN elsewhere (the mean does not exist).
func (d *StudentT) Mean() *graph.Node {
	ok := graph.BroadcastTo(graph.Greater(d.DF, scalar(d.DF, 1)), d.batch...)
	return graph.Where(ok, graph.BroadcastTo(d.Loc, d.batch...), scalar(d.DF, math.NaN()))
}

// Variance returns σ²ν/(ν − 2) where ν > 2, +Inf for 1 < ν ≤ 2 and NaN
// for ν ≤ 1.
func (d *StudentT) Variance() *graph.Node {
	nu := d.DF
	safe := graph.Where(graph.Greater(nu, scalar(nu, 2)), nu, scalar(nu, 3))
	v := graph.Div(graph.Mul(graph.Square(d.Scale), safe), graph.AddScalar(safe, -2))
	v = graph.Where(graph.Greater(nu, scalar(nu, 2)), v, scalar(nu, math.Inf(1)))
	v = graph.Where(graph.Greater(nu, scalar(nu, 1)), v, scalar(nu, math.NaN()))
	return graph.BroadcastTo(v, d.batch...)
}

// Sample draws μ + σ·Z/√(V/ν) with Z standard normal and V ~ χ²_ν = 2·Gamma(ν/2, 1),
// without gradient.
func (d *StudentT) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.StudentT.Sample", n, d.batch, nil)
	nu := expandValues(hostValue(d.DF), d.batch)
	mu := expandValues(hostValue(d.Loc), d.batch)
	s := expandValues(hostValue(d.Scale), d.batch)
	out := make([]float64, prod(shape))
	for i := range out {
		j := i % len(nu)
		v := 2 * sampleGamma(rng, nu[j]/2)
		out[i] = mu[j] + s[j]*rng.NormFloat64()/math.Sqrt(v/nu[j])
	}
	return tensor.FromValues(d.Loc.DType(), out, shape...)
}
