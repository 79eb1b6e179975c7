package probabilistic

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Distributions over and with scale matrices, parameterised by a
// lower-triangular Cholesky factor L of the scale (Σ = LLᵀ, positive
// diagonal), as MultivariateNormal is. Parameters are unbatched: one
// distribution per object; their values may carry leading sample axes.

// lmvgamma returns log Γ_p(a) = p(p−1)/4·log π + Σ_{j=1..p} log Γ(a + (1 − j)/2).
func lmvgamma(a *graph.Node, p int) *graph.Node {
	s := graph.AddScalar(graph.MulScalar(a, 0), float64(p*(p-1))/4*math.Log(math.Pi))
	for j := 1; j <= p; j++ {
		s = graph.Add(s, graph.Lgamma(graph.AddScalar(a, float64(1-j)/2)))
	}
	return s
}

// mvdigamma returns ψ_p(a) = Σ_{j=1..p} ψ(a + (1 − j)/2).
func mvdigamma(a *graph.Node, p int) *graph.Node {
	s := graph.Digamma(a)
	for j := 2; j <= p; j++ {
		s = graph.Add(s, graph.Digamma(graph.AddScalar(a, float64(1-j)/2)))
	}
	return s
}

// checkTril validates a Cholesky factor parameter (p, p).
func checkTril(op string, l *graph.Node) int {
	s := l.Shape()
	if len(s) != 2 || s[0] != s[1] || s[0] == 0 {
		tensor.Fail(op, "scale_tril %s must be a non-empty square matrix", graph.Describe(l))
	}
	return s[0]
}

// Wishart is the distribution of XXᵀ summed over ν draws of N(0, Σ): the
// conjugate prior of a Gaussian's precision matrix (Bishop 2006, Pattern
// Recognition and Machine Learning, §2.3.6), with
// density |X|^{(ν−p−1)/2} exp(−tr(Σ⁻¹X)/2) / (2^{νp/2} |Σ|^{ν/2} Γ_p(ν/2))
// on p×p positive definite X, for ν > p − 1.
type Wishart struct {
	DF        *graph.Node // ν, a scalar
	ScaleTril *graph.Node // L with Σ = LLᵀ
	p         int
}

// NewWishart returns Wishart(df, LLᵀ). It panics for a scale_tril that is
// not square, a non-scalar df, or a constant df ≤ p − 1.
func NewWishart(df, scaleTril *graph.Node) *Wishart {
	const op = "probabilistic.Wishart"
	checkParams(op, df, scaleTril)
	p := checkTril(op, scaleTril)
	if df.Dim() != 0 {
		tensor.Fail(op, "df %s must be a scalar", graph.Describe(df))
	}
	checkConst(op, "df", df, func(v float64) bool { return v > float64(p-1) }, "df > p − 1")
	return &Wishart{DF: df, ScaleTril: scaleTril, p: p}
}

// BatchShape returns ().
func (d *Wishart) BatchShape() []int { return []int{} }

// EventShape returns (p, p).
func (d *Wishart) EventShape() []int { return []int{d.p, d.p} }

// LogProb returns the log density at the positive definite matrices x
// (..., p, p); a matrix that is not positive definite is a data error of
// the Cholesky factorisation.
func (d *Wishart) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.Wishart.LogProb", x, d.ScaleTril, nil, []int{d.p, d.p})
	p, nu := float64(d.p), d.DF
	cx := graph.Cholesky(x)
	z := graph.TriSolve(d.ScaleTril, cx, true, false) // L⁻¹C: tr(Σ⁻¹X) = ‖L⁻¹C‖²
	tr := graph.Sum(graph.Square(z), []int{-2, -1}, false)
	lp := graph.Mul(graph.MulScalar(graph.AddScalar(nu, -p-1), 0.5), graph.LogDetChol(cx))
	lp = graph.Sub(lp, graph.MulScalar(tr, 0.5))
	norm := graph.Add(graph.MulScalar(nu, p/2*math.Ln2), graph.Mul(graph.MulScalar(nu, 0.5), graph.LogDetChol(d.ScaleTril)))
	return graph.Sub(lp, graph.Add(norm, lmvgamma(graph.MulScalar(nu, 0.5), d.p)))
}

// Entropy returns (p+1)/2·log|Σ| + p(p+1)/2·log 2 + log Γ_p(ν/2) −
// (ν−p−1)/2·ψ_p(ν/2) + νp/2.
func (d *Wishart) Entropy() *graph.Node {
	p, nu := float64(d.p), d.DF
	half := graph.MulScalar(nu, 0.5)
	h := graph.MulScalar(graph.LogDetChol(d.ScaleTril), (p+1)/2)
	h = graph.Add(h, graph.AddScalar(lmvgamma(half, d.p), p*(p+1)/2*math.Ln2))
	h = graph.Sub(h, graph.Mul(graph.MulScalar(graph.AddScalar(nu, -p-1), 0.5), mvdigamma(half, d.p)))
	return graph.Add(h, graph.MulScalar(nu, p/2))
}

// Mean returns νΣ.
func (d *Wishart) Mean() *graph.Node {
	return graph.Mul(d.DF, graph.MatMulT(d.ScaleTril, d.ScaleTril, false, true))
}

// Variance returns Var(Xᵢⱼ) = ν(Σᵢⱼ² + ΣᵢᵢΣⱼⱼ).
func (d *Wishart) Variance() *graph.Node {
	s := graph.MatMulT(d.ScaleTril, d.ScaleTril, false, true)
	dg := graph.Diagonal(s)
	outer := graph.Mul(graph.Unsqueeze(dg, -1), graph.Unsqueeze(dg, 0))
	return graph.Mul(d.DF, graph.Add(graph.Square(s), outer))
}

// Sample draws by Bartlett's decomposition, X = L·A·AᵀLᵀ with A lower
// triangular, Aᵢᵢ² ~ χ²(ν − i) (i from 0) and Aᵢⱼ ~ N(0, 1) below the
// diagonal, without gradient.
func (d *Wishart) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	return sampleWishart(rng, n, hostValue(d.DF).Item(), hostValue(d.ScaleTril), "probabilistic.Wishart.Sample", false)
}

// sampleWishart draws n Wishart matrices (or their inverses).
func sampleWishart(rng *tensor.RNG, n int, nu float64, l *tensor.Tensor, op string, invert bool) *tensor.Tensor {
	p := l.Shape()[0]
	shape := sampleShape(op, n, nil, []int{p, p})
	count := max(n, 1)
	out := make([]*tensor.Tensor, count)
	for s := range count {
		a := make([]float64, p*p)
		for i := range p {
			a[i*p+i] = math.Sqrt(2 * sampleGamma(rng, (nu-float64(i))/2))
			for j := range i {
				a[i*p+j] = rng.NormFloat64()
			}
		}
		la := tensor.MatMul(l.Cast(tensor.Float64), tensor.FromFloat64s(a, p, p))
		x := tensor.MatMulT(la, la, false, true)
		if invert {
			var err error
			if x, err = tensor.Inverse(x); err != nil {
				tensor.Fail(op, "a draw is singular: %v", err)
			}
		}
		out[s] = tensor.Unsqueeze(x, 0)
	}
	return tensor.Reshape(tensor.Concat(0, out...), shape...).Cast(l.DType())
}

// InverseWishart is the distribution of X⁻¹ for X ~ Wishart(ν, Ψ⁻¹): the
// conjugate prior of a Gaussian's covariance, with density
// |Ψ|^{ν/2} |X|^{−(ν+p+1)/2} exp(−tr(ΨX⁻¹)/2) / (2^{νp/2} Γ_p(ν/2)).
type InverseWishart struct {
	DF        *graph.Node // ν > p − 1, a scalar
	ScaleTril *graph.Node // L with Ψ = LLᵀ
	p         int
}

// NewInverseWishart returns InverseWishart(df, LLᵀ), with the panics of
// NewWishart.
func NewInverseWishart(df, scaleTril *graph.Node) *InverseWishart {
	const op = "probabilistic.InverseWishart"
	checkParams(op, df, scaleTril)
	p := checkTril(op, scaleTril)
	if df.Dim() != 0 {
		tensor.Fail(op, "df %s must be a scalar", graph.Describe(df))
	}
	checkConst(op, "df", df, func(v float64) bool { return v > float64(p-1) }, "df > p − 1")
	return &InverseWishart{DF: df, ScaleTril: scaleTril, p: p}
}

// BatchShape returns ().
func (d *InverseWishart) BatchShape() []int { return []int{} }

// EventShape returns (p, p).
func (d *InverseWishart) EventShape() []int { return []int{d.p, d.p} }

// LogProb returns the log density at the positive definite x (..., p, p).
func (d *InverseWishart) LogProb(x *graph.Node) *graph.Node {
	checkValue("probabilistic.InverseWishart.LogProb", x, d.ScaleTril, nil, []int{d.p, d.p})
	p, nu := float64(d.p), d.DF
	cx := graph.Cholesky(x)
	z := graph.TriSolve(cx, graph.BroadcastTo(d.ScaleTril, x.Shape()...), true, false) // C⁻¹L: tr(ΨX⁻¹) = ‖C⁻¹L‖²
	tr := graph.Sum(graph.Square(z), []int{-2, -1}, false)
	lp := graph.Mul(graph.MulScalar(nu, 0.5), graph.LogDetChol(d.ScaleTril))
	lp = graph.Sub(lp, graph.Mul(graph.MulScalar(graph.AddScalar(nu, p+1), 0.5), graph.LogDetChol(cx)))
	lp = graph.Sub(lp, graph.MulScalar(tr, 0.5))
	return graph.Sub(lp, graph.Add(graph.MulScalar(nu, p/2*math.Ln2), lmvgamma(graph.MulScalar(nu, 0.5), d.p)))
}

// Entropy panics: not implemented (no closed form is offered here).
func (d *InverseWishart) Entropy() *graph.Node {
	tensor.Fail("probabilistic.InverseWishart.Entropy", "not available; estimate −E[log p(X)] from samples")
	return nil
}

// Mean returns Ψ/(ν − p − 1), defined for ν > p + 1 (NaN otherwise).
func (d *InverseWishart) Mean() *graph.Node {
	p := float64(d.p)
	den := graph.AddScalar(d.DF, -p-1)
	den = graph.Where(graph.Greater(den, scalar(den, 0)), den, scalar(den, math.NaN()))
	return graph.Div(graph.MatMulT(d.ScaleTril, d.ScaleTril, false, true), den)
}

// Variance returns Var(Xᵢⱼ) = ((ν−p+1)Ψᵢⱼ² + (ν−p−1)ΨᵢᵢΨⱼⱼ) /
// ((ν−p)(ν−p−1)²(ν−p−3)), defined for ν > p + 3 (NaN otherwise).
func (d *InverseWishart) Variance() *graph.Node {
	p, nu := float64(d.p), d.DF
	psi := graph.MatMulT(d.ScaleTril, d.ScaleTril, false, true)
	dg := graph.Diagonal(psi)
	outer := graph.Mul(graph.Unsqueeze(dg, -1), graph.Unsqueeze(dg, 0))
	num := graph.Add(graph.Mul(graph.AddScalar(nu, -p+1), graph.Square(psi)), graph.Mul(graph.AddScalar(nu, -p-1), outer))
	den := graph.Mul(graph.Mul(graph.AddScalar(nu, -p), graph.Square(graph.AddScalar(nu, -p-1))), graph.AddScalar(nu, -p-3))
	den = graph.Where(graph.Greater(graph.AddScalar(nu, -p-3), scalar(nu, 0)), den, scalar(nu, math.NaN()))
	return graph.Div(num, den)
}

// Sample draws inverses of Wishart(ν, Ψ⁻¹) draws, without gradient.
func (d *InverseWishart) Sample(rng *tensor.RNG, n int) *tensor.Tensor {
	psi := tensor.MatMulT(hostValue(d.ScaleTril), hostValue(d.ScaleTril), false, true).Cast(tensor.Float64)
	inv, err := tensor.Inverse(psi)
	if err != nil {
		tensor.Fail("probabilistic.InverseWishart.Sample", "Ψ is singular: %v", err)
	}
	l, err := tensor.Cholesky(inv)
	if err != nil {
		tensor.Fail("probabilistic.InverseWishart.Sample", "Ψ⁻¹ is not positive definite: %v", err)
	}
	return sampleWishart(rng, n, hostValue(d.DF).Item(), l, "probabilistic.InverseWishart.Sample", true).Cast(d.ScaleTril.DType())
}
