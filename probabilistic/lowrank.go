package probabilistic

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// LowRankMVN is a batch of d-dimensional normal distributions whose
// covariance is a rank-r update of a diagonal, Σ = W·Wᵀ + diag(D), as in
// factor analysis and PyTorch's LowRankMultivariateNormal. Densities cost
// O(d·r²) instead of O(d³): the log-determinant comes from the matrix
// determinant lemma and the Mahalanobis term from the Woodbury identity,
// both through the r×r capacitance matrix C = I + Wᵀ D⁻¹ W.
type LowRankMVN struct {
	Loc       *graph.Node // (batch..., d)
	CovFactor *graph.Node // W, (batch..., d, r)
	CovDiag   *graph.Node // D > 0, (batch..., d)
	capL      *graph.Node // Cholesky factor of C
	batch     []int
	d, r      int
}

// NewLowRankMVN returns N(loc, W·Wᵀ + diag(D)) for loc (..., d), covFactor
// (..., d, r) and covDiag (..., d), whose batch shapes broadcast. It panics
// if the shapes do not fit or covDiag is a constant with a non-positive
// entry. (The capacitance I + WᵀD⁻¹W is positive definite for every
// positive D, so there is no data error.)
func NewLowRankMVN(loc, covFactor, covDiag *graph.Node) *LowRankMVN {
	const op = "probabilistic.LowRankMVN"
	checkParams(op, loc, covFactor, covDiag)
	ls, ws, ds := loc.Shape(), covFactor.Shape(), covDiag.Shape()
	if len(ls) == 0 || len(ws) < 2 || len(ds) == 0 || ws[len(ws)-2] != ls[len(ls)-1] || ds[len(ds)-1] != ls[len(ls)-1] {
		tensor.Fail(op, "loc, cov_factor and cov_diag %s do not fit: want (..., d), (..., d, r) and (..., d)", graph.Describe(loc, covFactor, covDiag))
	}
	checkConst(op, "cov_diag", covDiag, positive, "cov_diag > 0")
	d, r := ls[len(ls)-1], ws[len(ws)-1]
	batch := batchOf(op, ls[:len(ls)-1], ws[:len(ws)-2], ds[:len(ds)-1])
	wd := graph.Div(covFactor, graph.Unsqueeze(covDiag, -1)) // D⁻¹W
	c := graph.MatMulT(covFactor, wd, true, false)
	eye := loc.Graph().Const(tensor.Eye(loc.DType(), r))
	capL := graph.Cholesky(graph.Add(c, eye))
	return &LowRankMVN{Loc: loc, CovFactor: covFactor, CovDiag: covDiag, capL: capL, batch: batch, d: d, r: r}
}

// BatchShape returns the broadcast batch shape.
func (d *LowRankMVN) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (d).
func (d *LowRankMVN) EventShape() []int { return []int{d.d} }

// Covariance returns W·Wᵀ + diag(D), shaped (batch..., d, d).
func (d *LowRankMVN) Covariance() *graph.Node {
	ww := graph.MatMulT(d.CovFactor, d.CovFactor, false, true)
	eye := d.Loc.Graph().Const(tensor.Eye(d.Loc.DType(), d.d))
	return graph.Add(ww, graph.Mul(graph.Unsqueeze(d.CovDiag, -1), eye))
}

// logDet returns log det Σ = log det C + Σ log D.
func (d *LowRankMVN) logDet() *graph.Node {
	return graph.Add(graph.LogDetChol(d.capL), graph.Sum(graph.Log(d.CovDiag), []int{-1}, false))
}

// LogProb returns −½[(x−μ)ᵀΣ⁻¹(x−μ) + log det Σ + d log 2π] with
// (x−μ)ᵀΣ⁻¹(x−μ) = zᵀD⁻¹z − ‖L_C⁻¹WᵀD⁻¹z‖² (Woodbury), for x (..., d).
func (d *LowRankMVN) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.LowRankMVN.LogProb", x, d.Loc, d.batch, []int{d.d})
	z := graph.Sub(x, d.Loc)
	zd := graph.Div(z, d.CovDiag)
	a := graph.Sum(graph.Mul(z, zd), []int{-1}, false)
	b := graph.MatMulT(d.CovFactor, graph.Unsqueeze(zd, -1), true, false) // (..., r, 1)
	v := graph.TriSolve(d.capL, b, true, false)
	maha := graph.Sub(a, graph.Sum(graph.Square(v), []int{-2, -1}, false))
	lp := graph.Add(maha, d.logDet())
	return graph.MulScalar(graph.AddScalar(lp, float64(d.d)*log2Pi), -0.5)
}

// Entropy returns (d/2)(1 + log 2π) + ½ log det Σ.
func (d *LowRankMVN) Entropy() *graph.Node {
	h := graph.AddScalar(graph.MulScalar(d.logDet(), 0.5), 0.5*float64(d.d)*(1+log2Pi))
	return graph.BroadcastTo(h, d.batch...)
}

// Mean returns μ broadcast to (batch..., d).
func (d *LowRankMVN) Mean() *graph.Node {
	return graph.BroadcastTo(d.Loc, concatShape(d.batch, []int{d.d})...)
}

// Variance returns the diagonal of Σ, Σⱼ Wᵢⱼ² + Dᵢ.
func (d *LowRankMVN) Variance() *graph.Node {
	v := graph.Add(graph.Sum(graph.Square(d.CovFactor), []int{-1}, false), d.CovDiag)
	return graph.BroadcastTo(v, concatShape(d.batch, []int{d.d})...)
}

// Support returns Identity: ℝᵈ.
func (d *LowRankMVN) Support() Bijector { return Identity{} }

// noise returns ε₁ ~ N(0, I_r) shaped (n, batch..., r, 1) and ε₂ ~ N(0, I_d)
// shaped (n, batch..., d).
func (d *LowRankMVN) noise(op string, rng *tensor.RNG, n int) (e1, e2 *tensor.Tensor) {
	e1 = rng.Normal(d.Loc.DType(), 0, 1, sampleShape(op, n, d.batch, []int{d.r, 1})...)
	e2 = rng.Normal(d.Loc.DType(), 0, 1, sampleShape(op, n, d.batch, []int{d.d})...)
	return e1, e2
}

// RSample returns the node μ + W·ε₁ + √D ⊙ ε₂ with the noise constant,
// differentiable in μ, W and D.
func (d *LowRankMVN) RSample(rng *tensor.RNG, n int) *graph.Node {
	e1, e2 := d.noise("probabilistic.LowRankMVN.RSample", rng, n)
	g := d.Loc.Graph()
	w := graph.Squeeze(graph.MatMul(d.CovFactor, g.Const(e1)), -1)
	return graph.Add(graph.Add(d.Loc, w), graph.Mul(graph.Sqrt(d.CovDiag), g.Const(e2)))
}

// Sample draws as RSample does, without gradient.
func (d *LowRankMVN) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	e1, e2 := d.noise("probabilistic.LowRankMVN.Sample", rng, n)
	w := tensor.Squeeze(tensor.MatMul(hostValue(d.CovFactor), e1), -1)
	return tensor.Add(tensor.Add(hostValue(d.Loc), w), tensor.Mul(tensor.Sqrt(hostValue(d.CovDiag)), e2))
}

// GaussianRandomWalk is a batch of Gaussian random walks of NumSteps steps
// starting at 0: x₁ ~ N(0, σ²) and xₜ − xₜ₋₁ ~ N(0, σ²), so a draw has event
// shape (NumSteps) and xₜ has variance tσ² (NumPyro's GaussianRandomWalk).
type GaussianRandomWalk struct {
	Scale    *graph.Node // step standard deviation σ > 0, shaped like the batch
	NumSteps int
	batch    []int
}

// NewGaussianRandomWalk returns the random walk with step scale σ and
// numSteps ≥ 1 steps. It panics if numSteps < 1 or scale is a constant
// with a non-positive entry.
func NewGaussianRandomWalk(scale *graph.Node, numSteps int) *GaussianRandomWalk {
	const op = "probabilistic.GaussianRandomWalk"
	checkParams(op, scale)
	checkConst(op, "scale", scale, positive, "scale > 0")
	if numSteps < 1 {
		tensor.Fail(op, "number of steps %d: want ≥ 1", numSteps)
	}
	return &GaussianRandomWalk{Scale: scale, NumSteps: numSteps, batch: scale.Shape()}
}

// BatchShape returns the scale's shape.
func (d *GaussianRandomWalk) BatchShape() []int { return append([]int{}, d.batch...) }

// EventShape returns (NumSteps).
func (d *GaussianRandomWalk) EventShape() []int { return []int{d.NumSteps} }

// LogProb returns Σₜ log N(xₜ − xₜ₋₁; 0, σ²) with x₀ = 0, for x
// (..., NumSteps).
func (d *GaussianRandomWalk) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.GaussianRandomWalk.LogProb", x, d.Scale, d.batch, []int{d.NumSteps})
	pads := make([][2]int, x.Dim())
	pads[x.Dim()-1] = [2]int{1, 0}
	prev := graph.Slice(graph.Pad(x, pads, 0), -1, 0, d.NumSteps, 1)
	s := graph.Unsqueeze(d.Scale, -1)
	steps := &Normal{Loc: scalar(x, 0), Scale: s, batch: s.Shape()}
	return graph.Sum(steps.LogProb(graph.Sub(x, prev)), []int{-1}, false)
}

// Entropy returns NumSteps·(½ + ½ log 2π + log σ).
func (d *GaussianRandomWalk) Entropy() *graph.Node {
	return graph.MulScalar(graph.AddScalar(graph.Log(d.Scale), 0.5+0.5*log2Pi), float64(d.NumSteps))
}

// steps returns the constant (1, 2, …, NumSteps).
func (d *GaussianRandomWalk) steps() *graph.Node {
	return d.Scale.Graph().Const(tensor.Arange(d.Scale.DType(), 1, float64(d.NumSteps)+1, 1))
}

// Mean returns zeros shaped (batch..., NumSteps).
func (d *GaussianRandomWalk) Mean() *graph.Node {
	return graph.Mul(graph.Unsqueeze(graph.MulScalar(d.Scale, 0), -1), d.steps())
}

// Variance returns tσ² for t = 1, …, NumSteps.
func (d *GaussianRandomWalk) Variance() *graph.Node {
	return graph.Mul(graph.Unsqueeze(graph.Square(d.Scale), -1), d.steps())
}

// Support returns Identity: ℝ^NumSteps.
func (d *GaussianRandomWalk) Support() Bijector { return Identity{} }

// RSample returns the node cumsum(σε) with ε ~ N(0, I) a constant.
func (d *GaussianRandomWalk) RSample(rng *tensor.RNG, n int) *graph.Node {
	eps := rng.Normal(d.Scale.DType(), 0, 1, sampleShape("probabilistic.GaussianRandomWalk.RSample", n, d.batch, []int{d.NumSteps})...)
	return graph.CumSum(graph.Mul(graph.Unsqueeze(d.Scale, -1), d.Scale.Graph().Const(eps)), -1)
}

// Sample draws cumulative sums of N(0, σ²) steps, without gradient.
func (d *GaussianRandomWalk) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	shape := sampleShape("probabilistic.GaussianRandomWalk.Sample", n, d.batch, []int{d.NumSteps})
	eps := rng.Normal(d.Scale.DType(), 0, 1, shape...)
	x := tensor.Mul(tensor.Unsqueeze(hostValue(d.Scale), -1), eps).Values()
	for i := 0; i < len(x); i += d.NumSteps {
		for t := 1; t < d.NumSteps; t++ {
			x[i+t] += x[i+t-1]
		}
	}
	return tensor.FromValues(d.Scale.DType(), x, shape...)
}
