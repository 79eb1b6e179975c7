package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// NormalInverseWishart is the conjugate prior of a Gaussian's mean and
// covariance: Σ ~ InverseWishart(ν, Ψ) and μ | Σ ~ N(μ₀, Σ/κ).
type NormalInverseWishart struct {
	Loc   *graph.Node // μ₀, shape (p)
	Kappa float64     // κ > 0
	IW    *InverseWishart
}

// NewNormalInverseWishart returns NIW(μ₀, κ, ν, LLᵀ); it panics with the
// errors of NewInverseWishart, or if κ ≤ 0 or μ₀ is not a vector of length p.
func NewNormalInverseWishart(loc *graph.Node, kappa float64, df, scaleTril *graph.Node) *NormalInverseWishart {
	const op = "probabilistic.NormalInverseWishart"
	iw := NewInverseWishart(df, scaleTril)
	if !(kappa > 0) {
		tensor.Fail(op, "kappa %g must be > 0", kappa)
	}
	if loc.Dim() != 1 || loc.Shape()[0] != iw.p {
		tensor.Fail(op, "loc %s must have shape (%d)", graph.Describe(loc), iw.p)
	}
	return &NormalInverseWishart{Loc: loc, Kappa: kappa, IW: iw}
}

// LogProb returns the joint log density log p(μ, Σ) at a mean mu (p) and a
// positive definite covariance sigma (p, p), as a scalar graph.
func (d *NormalInverseWishart) LogProb(mu, sigma *graph.Node) *graph.Node {
	lp := d.IW.LogProb(sigma)
	l := graph.MulScalar(graph.Cholesky(sigma), 1/math.Sqrt(d.Kappa))
	return graph.Add(lp, NewMVNFromScaleTril(d.Loc, l).LogProb(mu))
}

// Sample draws n pairs without gradient: means (n, p) and covariances (n, p, p).
func (d *NormalInverseWishart) Sample(rng *tensor.RNG, n int) (mu, sigma *tensor.Tensor) {
	sigma = d.IW.Sample(rng, n)
	p := d.IW.p
	sv, m0 := sigma.Cast(tensor.Float64).Values(), hostValue(d.Loc).Cast(tensor.Float64).Values()
	z := rng.Normal(tensor.Float64, 0, 1, n, p).Values()
	out := make([]float64, n*p)
	for i := 0; i < n; i++ {
		l, err := tensor.Cholesky(tensor.FromFloat64s(sv[i*p*p:(i+1)*p*p], p, p))
		if err != nil {
			tensor.Fail("probabilistic.NormalInverseWishart.Sample", "drawn Σ is not positive definite: %v", err)
		}
		lv := l.Values()
		for r := 0; r < p; r++ {
			acc := 0.0
			for c := 0; c <= r; c++ {
				acc += lv[r*p+c] * z[i*p+c]
			}
			out[i*p+r] = m0[r] + acc/math.Sqrt(d.Kappa)
		}
	}
	return tensor.FromFloat64s(out, n, p).Cast(d.Loc.DType()), sigma
}
