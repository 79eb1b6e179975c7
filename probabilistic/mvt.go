package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// MultivariateStudentT is the d-variate Student t with ν degrees of
// freedom, location μ and scale matrix Σ = LLᵀ: the density
// Γ((ν+d)/2)/(Γ(ν/2)(νπ)^{d/2}|Σ|^{1/2})·(1 + m/ν)^{−(ν+d)/2}, m the
// Mahalanobis distance (x − μ)ᵀΣ⁻¹(x − μ). It is the marginal of a
// Gaussian whose covariance has an inverse-Wishart prior, and the
// posterior predictive of the Normal-inverse-Wishart model.
type MultivariateStudentT struct {
	DF, Loc, ScaleTril *graph.Node
	d                  int
}

// NewMultivariateStudentT returns the distribution for a scalar df, loc
// (d) and scale_tril (d, d). It panics for shapes that do not fit or a
// constant df ≤ 0.
func NewMultivariateStudentT(df, loc, scaleTril *graph.Node) *MultivariateStudentT {
	const op = "probabilistic.MultivariateStudentT"
	checkParams(op, df, loc, scaleTril)
	d := checkTril(op, scaleTril)
	if df.Dim() != 0 || loc.Dim() != 1 || loc.Shape()[0] != d {
		tensor.Fail(op, "want a scalar df, loc (%d) and scale_tril (%d, %d), got %s", d, d, d, graph.Describe(df, loc, scaleTril))
	}
	checkConst(op, "df", df, positive, "df > 0")
	return &MultivariateStudentT{DF: df, Loc: loc, ScaleTril: scaleTril, d: d}
}

// BatchShape returns ().
func (m *MultivariateStudentT) BatchShape() []int { return []int{} }

// EventShape returns (d).
func (m *MultivariateStudentT) EventShape() []int { return []int{m.d} }

// LogProb returns the log density at x (..., d).
func (m *MultivariateStudentT) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.MultivariateStudentT.LogProb", x, m.Loc, nil, []int{m.d})
	d, nu := float64(m.d), m.DF
	diff := graph.Unsqueeze(graph.Sub(x, m.Loc), -1)
	z := graph.TriSolve(m.ScaleTril, diff, true, false)
	maha := graph.Sum(graph.Square(z), []int{-2, -1}, false)
	half := graph.MulScalar(graph.AddScalar(nu, d), 0.5)
	lp := graph.Sub(graph.Lgamma(half), graph.Lgamma(graph.MulScalar(nu, 0.5)))
	lp = graph.Sub(lp, graph.MulScalar(graph.Log(graph.MulScalar(nu, math.Pi)), d/2))
	lp = graph.Sub(lp, graph.MulScalar(graph.LogDetChol(m.ScaleTril), 0.5))
	return graph.Sub(lp, graph.Mul(half, graph.Log1p(graph.Div(maha, nu))))
}

// Entropy panics: not available here.
func (m *MultivariateStudentT) Entropy() *graph.Node {
	tensor.Fail("probabilistic.MultivariateStudentT.Entropy", "not available; estimate −E[log p(x)] from samples")
	return nil
}

// Mean returns μ for ν > 1 (NaN otherwise).
func (m *MultivariateStudentT) Mean() *graph.Node {
	ok := graph.Greater(m.DF, scalar(m.DF, 1))
	return graph.Where(ok, m.Loc, graph.BroadcastTo(scalar(m.Loc, math.NaN()), m.d))
}

// Variance returns diag(Σ)·ν/(ν − 2) for ν > 2, +Inf for 1 < ν ≤ 2, NaN below.
func (m *MultivariateStudentT) Variance() *graph.Node {
	nu := m.DF
	safe := graph.Where(graph.Greater(nu, scalar(nu, 2)), nu, scalar(nu, 3))
	v := graph.Mul(graph.Sum(graph.Square(m.ScaleTril), []int{-1}, false), graph.Div(safe, graph.AddScalar(safe, -2)))
	v = graph.Where(graph.Greater(nu, scalar(nu, 2)), v, graph.BroadcastTo(scalar(nu, math.Inf(1)), m.d))
	return graph.Where(graph.Greater(nu, scalar(nu, 1)), v, graph.BroadcastTo(scalar(nu, math.NaN()), m.d))
}

// Sample draws μ + L·z/√(V/ν) with z ~ N(0, I) and V ~ χ²_ν, without gradient.
func (m *MultivariateStudentT) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.MultivariateStudentT.Sample", n, nil, []int{m.d})
	count := max(n, 1)
	nu := m.DF.Value().Item()
	l := m.ScaleTril.Value().Cast(tensor.Float64)
	z := rng.Normal(tensor.Float64, 0, 1, count, m.d)
	lz := tensor.MatMulT(z, l, false, true).Values() // rows zᵀLᵀ
	mu := m.Loc.Value().Values()
	out := make([]float64, count*m.d)
	for s := range count {
		w := math.Sqrt(nu / (2 * sampleGamma(rng, nu/2)))
		for j := range m.d {
			out[s*m.d+j] = mu[j] + w*lz[s*m.d+j]
		}
	}
	return tensor.FromValues(m.Loc.DType(), out, shape...)
}
