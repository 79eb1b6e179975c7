package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// LKJCholesky is the LKJ distribution (Lewandowski, Kurowicka and Joe
// 2009) over d×d correlation matrices C ∝ det(C)^{η−1}, expressed on
// their lower Cholesky factors L (C = LLᵀ, rows of unit norm, positive
// diagonal), the usual prior on the correlations of a covariance matrix
// (Stan's lkj_corr_cholesky). η = 1 is uniform over correlation matrices;
// larger η concentrates near the identity. The density of L is
// Πᵢ₌₂..d Lᵢᵢ^{d−i+2η−2} over its normaliser.
type LKJCholesky struct {
	Concentration *graph.Node // η > 0, a scalar
	d             int
}

// NewLKJCholesky returns LKJCholesky(d, η). It panics for d < 2, a
// non-scalar η or a constant η ≤ 0.
func NewLKJCholesky(d int, concentration *graph.Node) *LKJCholesky {
	const op = "probabilistic.LKJCholesky"
	checkParams(op, concentration)
	if d < 2 || concentration.Dim() != 0 {
		tensor.Fail(op, "want d ≥ 2 and a scalar concentration, got d = %d and %s", d, graph.Describe(concentration))
	}
	checkConst(op, "concentration", concentration, positive, "concentration > 0")
	return &LKJCholesky{Concentration: concentration, d: d}
}

// BatchShape returns ().
func (l *LKJCholesky) BatchShape() []int { return []int{} }

// EventShape returns (d, d).
func (l *LKJCholesky) EventShape() []int { return []int{l.d, l.d} }

// LogProb returns Σᵢ₌₂..d (d − i + 2η − 2)·log Lᵢᵢ − log Z for Cholesky
// factors x (..., d, d), with log Z = ((d−1)/2)·log π + log Γ_{d−1}(η +
// (d−2)/2) − (d−1)·log Γ(η + (d−1)/2) (Lewandowski et al. 2009, p. 1999).
func (l *LKJCholesky) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.LKJCholesky.LogProb", x, l.Concentration, nil, []int{l.d, l.d})
	d, eta := l.d, l.Concentration
	g := eta.Graph()
	logDiag := graph.Log(graph.Slice(graph.Diagonal(x), -1, 1, d, 1)) // (..., d−1), i = 2..d
	order := make([]float64, d-1)
	for i := 2; i <= d; i++ {
		order[i-2] = float64(d - i - 2)
	}
	coef := graph.Add(g.Const(tensor.FromValues(eta.DType(), order, d-1)), graph.MulScalar(eta, 2))
	lp := graph.Sum(graph.Mul(coef, logDiag), []int{-1}, false)
	dm1 := float64(d - 1)
	alpha := graph.AddScalar(eta, 0.5*dm1)
	logZ := graph.AddScalar(lmvgamma(graph.AddScalar(alpha, -0.5), d-1), 0.5*dm1*math.Log(math.Pi))
	logZ = graph.Sub(logZ, graph.MulScalar(graph.Lgamma(alpha), dm1))
	return graph.Sub(lp, logZ)
}

// Entropy panics: not available here.
func (l *LKJCholesky) Entropy() *graph.Node {
	tensor.Fail("probabilistic.LKJCholesky.Entropy", "not available; estimate −E[log p(L)] from samples")
	return nil
}

// Mean panics: the mean of a Cholesky factor is not a useful summary (the
// mean correlation matrix is the identity).
func (l *LKJCholesky) Mean() *graph.Node {
	tensor.Fail("probabilistic.LKJCholesky.Mean", "not available; the mean correlation matrix LLᵀ is the identity")
	return nil
}

// Variance panics, as Mean does.
func (l *LKJCholesky) Variance() *graph.Node {
	tensor.Fail("probabilistic.LKJCholesky.Variance", "not available; each correlation has variance 1/(2η + d − 1)")
	return nil
}

// Sample draws Cholesky factors by the onion method (Lewandowski et al.
// 2009, §3.2): row i (from 0) is √y·u on its first i entries and √(1 − y)
// on the diagonal, with u uniform on the unit sphere of ℝⁱ and
// y ~ Beta(i/2, η + (d − 1 − i)/2). Without gradient.
func (l *LKJCholesky) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.LKJCholesky.Sample", n, nil, []int{l.d, l.d})
	eta := l.Concentration.Value().Item()
	d := l.d
	count := max(n, 1)
	out := make([]float64, count*d*d)
	for s := range count {
		m := out[s*d*d : (s+1)*d*d]
		m[0] = 1
		for i := 1; i < d; i++ {
			a, b := sampleGamma(rng, float64(i)/2), sampleGamma(rng, eta+float64(d-1-i)/2)
			y := a / (a + b)
			u := make([]float64, i)
			norm := 0.0
			for j := range u {
				u[j] = rng.NormFloat64()
				norm += u[j] * u[j]
			}
			norm = math.Sqrt(norm)
			for j := range u {
				m[i*d+j] = math.Sqrt(y) * u[j] / norm
			}
			m[i*d+i] = math.Sqrt(1 - y)
		}
	}
	return tensor.FromValues(l.Concentration.DType(), out, shape...)
}
