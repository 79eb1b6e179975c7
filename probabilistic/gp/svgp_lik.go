package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Likelihood is the observation model p(y | f) of an SVGP, where each
// observation reads L ≥ 1 latent function values f = (f₁ … f_L) (L = 1
// for most; 2 for the heteroscedastic Gaussian's mean and log variance;
// K for the softmax over K classes). It supplies the expected
// log-likelihood under the independent Gaussian marginals q(f_l) as graph
// ops (so the ELBO's gradient comes from autodiff) and the predictive
// distribution of y in plain float64.
//
// The package implements it by GaussianLikelihood, BernoulliLikelihood,
// PoissonLikelihood, StudentTLikelihood, HeteroscedasticLikelihood and
// SoftmaxLikelihood; expectations are closed form where one exists and
// otherwise by Gauss–Hermite quadrature (one latent) or reparameterised
// Monte Carlo (softmax).
type Likelihood interface {
	// Name names the likelihood in errors ("gaussian", "bernoulli-logit").
	Name() string
	// Latents returns L, the number of latent functions per observation.
	Latents() int
	// Hyperparams returns the likelihood's own hyperparameters (the
	// Gaussian noise variance), fitted beside the kernel's.
	Hyperparams() []*kernel.Hyperparam
	// ExpectedLogLik returns E_{N(f | mu, v)} log p(y | f) for each point
	// as a (b) node of mu's graph; mu and v are (b, L) nodes (for L = 1,
	// (b) is accepted too) and y is a (b) node.
	ExpectedLogLik(mu, v, y *graph.Node) *graph.Node
	// CheckTargets returns an error naming the first target outside the
	// likelihood's support.
	CheckTargets(y []float64) error
	// PredictY returns the mean and variance of a new observation y (b
	// values each) when f ~ N(mu, v); mu and v hold b·L values, row-major
	// (b, L).
	PredictY(mu, v []float64) (mean, variance []float64)
	// LogPredictive returns log ∫ p(y | f) N(f | mu, v) df for each of the
	// b points; mu and v are as in PredictY.
	LogPredictive(mu, v, y []float64) []float64
}

// flatLatent reshapes the (b, 1) or (b) mean and variance of one latent
// function to (b).
func flatLatent(mu, v *graph.Node) (*graph.Node, *graph.Node) {
	b := mu.Shape()[0]
	return graph.Reshape(mu, b), graph.Reshape(v, b)
}

// GaussianLikelihood is y = f + ε with ε ~ N(0, σ²); its expected
// log-likelihood is closed form:
//
//	E log N(y | f, σ²) = −½ log 2πσ² − ((y − μ)² + v)/(2σ²).
type GaussianLikelihood struct{ noise *kernel.Hyperparam }

// NewGaussianLikelihood returns a Gaussian likelihood whose noise variance
// σ² ("noise", floored at 1e-6) starts at noise; zero means 0.1. It panics
// with a *tensor.Error if noise is not above the floor.
func NewGaussianLikelihood(noise float64) *GaussianLikelihood {
	if noise == 0 {
		noise = 0.1
	}
	if !(noise > 1e-6) || math.IsInf(noise, 0) {
		tensor.Fail("gp.NewGaussianLikelihood", "noise variance %g must be finite and above its floor 1e-6", noise)
	}
	p := kernel.NewHyperparam("noise", noise).SetFloor(1e-6)
	if err := p.Set(noise); err != nil {
		tensor.Fail("gp.NewGaussianLikelihood", "%v", err)
	}
	return &GaussianLikelihood{noise: p}
}

// Name returns "gaussian".
func (l *GaussianLikelihood) Name() string { return "gaussian" }

// Latents returns 1.
func (l *GaussianLikelihood) Latents() int { return 1 }

// Noise returns the noise-variance hyperparameter σ².
func (l *GaussianLikelihood) Noise() *kernel.Hyperparam { return l.noise }

// Hyperparams returns the noise variance.
func (l *GaussianLikelihood) Hyperparams() []*kernel.Hyperparam {
	return []*kernel.Hyperparam{l.noise}
}

// ExpectedLogLik returns −½ log 2πσ² − ((y − μ)² + v)/(2σ²) per point.
func (l *GaussianLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	mu, v = flatLatent(mu, v)
	s2 := graph.Reshape(l.noise.Node(mu.Graph()))
	quad := graph.Div(graph.Add(graph.Square(graph.Sub(y, mu)), v), s2)
	c := graph.AddScalar(graph.Log(s2), math.Log(2*math.Pi))
	return graph.MulScalar(graph.Add(quad, c), -0.5)
}

// LogLik returns log N(y | f, σ²), y broadcast against f.
func (l *GaussianLikelihood) LogLik(f, y *graph.Node) *graph.Node {
	s2 := graph.Reshape(l.noise.Node(f.Graph()))
	quad := graph.Div(graph.Square(graph.Sub(y, f)), s2)
	return graph.MulScalar(graph.Add(quad, graph.AddScalar(graph.Log(s2), math.Log(2*math.Pi))), -0.5)
}

// CheckTargets rejects NaN and ±Inf.
func (l *GaussianLikelihood) CheckTargets(y []float64) error {
	if i := firstNonFinite(y); i >= 0 {
		return fmt.Errorf("y[%d] = %g is not finite", i, y[i])
	}
	return nil
}

// PredictY returns μ and v + σ².
func (l *GaussianLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	s2 := l.noise.Value()
	variance = make([]float64, len(v))
	for i := range v {
		variance[i] = v[i] + s2
	}
	return append([]float64(nil), mu...), variance
}

// LogPredictive returns log N(y | μ, v + σ²).
func (l *GaussianLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	s2 := l.noise.Value()
	out := make([]float64, len(y))
	for i := range y {
		t := v[i] + s2
		out[i] = -0.5 * (math.Log(2*math.Pi*t) + (y[i]-mu[i])*(y[i]-mu[i])/t)
	}
	return out
}

// Link selects the inverse link of a BernoulliLikelihood.
type Link int

const (
	// Logit is p(y = 1 | f) = σ(f) = 1/(1 + e^−f).
	Logit Link = iota
	// Probit is p(y = 1 | f) = Φ(f), the standard normal CDF.
	Probit
)

// logPhiSplit is where logNormCDF switches from the error function to
// the continued fraction; above it 1 + erf(z/√2) keeps 10 significant digits.
const logPhiSplit = -5

// logNormCDF returns log Φ(z) elementwise to about 10 significant digits in both
// tails: log(½(1 + erf(z/√2))) for z ≥ −5 and, below, the continued
// fraction of Mills' ratio Φ(−t)/φ(t) = 1/(t + 1/(t + 2/(t + 3/(t + …))))
// at t = −z (Laplace 1805; 20 levels reach full precision for t ≥ 5).
// Each branch sees its argument clamped to its own side, so neither
// produces an infinity whose zero-weighted gradient would be NaN.
func logNormCDF(z *graph.Node) *graph.Node {
	g, dt := z.Graph(), z.DType()
	split := g.Scalar(dt, logPhiSplit)
	hi := graph.Maximum(z, split)
	body := graph.Log(graph.MulScalar(graph.AddScalar(graph.Erf(graph.MulScalar(hi, 1/math.Sqrt2)), 1), 0.5))
	t := graph.Neg(graph.Minimum(z, split))
	r := t
	for k := 20; k >= 1; k-- {
		r = graph.Add(t, graph.MulScalar(graph.Reciprocal(r), float64(k)))
	}
	tail := graph.Neg(graph.Add(graph.MulScalar(graph.Square(t), 0.5), graph.Log(r)))
	tail = graph.AddScalar(tail, -0.5*math.Log(2*math.Pi))
	return graph.Where(graph.Less(z, split), tail, body)
}

// BernoulliLikelihood is binary classification, y ∈ {0, 1} with
// p(y = 1 | f) = σ(f) (Logit) or Φ(f) (Probit). Its expected
// log-likelihood is computed by Gauss–Hermite quadrature,
//
//	E log p(y | f) ≈ Σₖ (wₖ/√π) log p(y | μ + √(2v) xₖ),
//
// as in Hensman, Matthews and Ghahramani (2015), "Scalable Variational
// Gaussian Process Classification". The probit predictive probability is
// closed form, Φ(μ/√(1 + v)); the logit one is by the same quadrature.
type BernoulliLikelihood struct {
	link Link
	ghRule
}

// NewBernoulliLikelihood returns a Bernoulli likelihood with the given
// link and points Gauss–Hermite nodes (zero means 20). It panics with a
// *tensor.Error for an unknown link or a negative or excessive count
// (above 100).
func NewBernoulliLikelihood(link Link, points int) *BernoulliLikelihood {
	if link != Logit && link != Probit {
		tensor.Fail("gp.NewBernoulliLikelihood", "unknown link %d (want gp.Logit or gp.Probit)", link)
	}
	return &BernoulliLikelihood{link: link, ghRule: newGHRule("gp.NewBernoulliLikelihood", points)}
}

// ghRule is a Gauss–Hermite rule for expectations under N(μ, v):
// E h(f) ≈ Σₖ (wₖ/√π) h(μ + √(2v) xₖ).
type ghRule struct {
	nodes   []float64 // Gauss–Hermite nodes xₖ
	weights []float64 // wₖ/√π, summing to 1
}

// newGHRule returns the rule with points nodes (zero means 20); it panics
// with a *tensor.Error naming op for a count outside 1 to 100.
func newGHRule(op string, points int) ghRule {
	if points == 0 {
		points = 20
	}
	if points < 1 || points > 100 {
		tensor.Fail(op, "%d quadrature points; want 1 to 100", points)
	}
	x, w := GaussHermite(points)
	for i := range w {
		w[i] /= math.SqrtPi
	}
	return ghRule{nodes: x, weights: w}
}

// expect returns the quadrature estimate of E h(f) (b) for f ~ N(mu, v)
// with mu and v (b) or (b, 1) nodes; h maps the (b, k) node values to
// (b, k) values. Variances below 1e-12 are raised to it, so √v stays
// differentiable.
func (r ghRule) expect(mu, v *graph.Node, h func(f *graph.Node) *graph.Node) *graph.Node {
	g, dt, b := mu.Graph(), mu.DType(), mu.Shape()[0]
	k := len(r.nodes)
	x := g.Const(tensor.FromValues(dt, r.nodes, 1, k))
	w := g.Const(tensor.FromValues(dt, r.weights, 1, k))
	sd := graph.Sqrt(graph.MulScalar(graph.Clamp(v, 1e-12, math.Inf(1)), 2))
	f := graph.Add(graph.Reshape(mu, b, 1), graph.Mul(graph.Reshape(sd, b, 1), x)) // (b, k)
	return graph.Sum(graph.Mul(h(f), w), []int{1}, false)
}

// logExpect returns log E exp(logh(f)) for f ~ N(mu, v) by the rule,
// summing in the log domain.
func (r ghRule) logExpect(mu, v float64, logh func(f float64) float64) float64 {
	sd, top := math.Sqrt(2*math.Max(v, 0)), math.Inf(-1)
	terms := make([]float64, len(r.nodes))
	for k, x := range r.nodes {
		terms[k] = math.Log(r.weights[k]) + logh(mu+sd*x)
		top = math.Max(top, terms[k])
	}
	if math.IsInf(top, -1) {
		return top
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - top)
	}
	return top + math.Log(s)
}

// Name returns "bernoulli-logit" or "bernoulli-probit".
func (l *BernoulliLikelihood) Name() string {
	if l.link == Probit {
		return "bernoulli-probit"
	}
	return "bernoulli-logit"
}

// Link returns the inverse link.
func (l *BernoulliLikelihood) Link() Link { return l.link }

// Latents returns 1.
func (l *BernoulliLikelihood) Latents() int { return 1 }

// Hyperparams returns none: the Bernoulli likelihood has no parameters.
func (l *BernoulliLikelihood) Hyperparams() []*kernel.Hyperparam { return nil }

// LogLik returns log p(y | f) for labels y ∈ {0, 1} (broadcast against f),
// through s = 2y − 1: log σ(sf) = −softplus(−sf), or log Φ(sf).
func (l *BernoulliLikelihood) LogLik(f, y *graph.Node) *graph.Node {
	sf := graph.Mul(graph.AddScalar(graph.MulScalar(y, 2), -1), f)
	if l.link == Logit {
		return graph.Neg(graph.Softplus(graph.Neg(sf)))
	}
	return logNormCDF(sf)
}

// ExpectedLogLik returns the quadrature estimate of E log p(y | f) per
// point. Variances below 1e-12 are raised to it, so √v stays
// differentiable.
func (l *BernoulliLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	yb := graph.Reshape(y, mu.Shape()[0], 1)
	return l.expect(mu, v, func(f *graph.Node) *graph.Node { return l.LogLik(f, yb) })
}

// CheckTargets accepts 0 and 1 only.
func (l *BernoulliLikelihood) CheckTargets(y []float64) error {
	for i, v := range y {
		if v != 0 && v != 1 {
			return fmt.Errorf("target %d is %g; the %s likelihood takes labels 0 and 1", i, v, l.Name())
		}
	}
	return nil
}

// prob returns p(y = 1) = ∫ p(y = 1 | f) N(f | μ, v) df.
func (l *BernoulliLikelihood) prob(mu, v float64) float64 {
	if l.link == Probit {
		return stdNormCDF(mu / math.Sqrt(1+v))
	}
	p, sd := 0.0, math.Sqrt(2*math.Max(v, 0))
	for k, x := range l.nodes {
		p += l.weights[k] * sigmoid(mu+sd*x)
	}
	return p
}

// PredictY returns p = p(y = 1) and p(1 − p).
func (l *BernoulliLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	mean, variance = make([]float64, len(mu)), make([]float64, len(mu))
	for i := range mu {
		p := l.prob(mu[i], v[i])
		mean[i], variance[i] = p, p*(1-p)
	}
	return mean, variance
}

// LogPredictive returns log p(y) for labels y ∈ {0, 1}.
func (l *BernoulliLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	out := make([]float64, len(y))
	for i := range y {
		p := l.prob(mu[i], v[i])
		if y[i] == 0 {
			p = 1 - p
		}
		out[i] = math.Log(p)
	}
	return out
}

func stdNormCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// GaussHermite returns the nodes xₖ and weights wₖ of the n-point
// Gauss–Hermite rule, ∫ e^(−x²) h(x) dx ≈ Σ wₖ h(xₖ), exact for
// polynomials h of degree below 2n: the eigenvalues of the symmetric
// tridiagonal Jacobi matrix of the Hermite recurrence (off-diagonal
// √(k/2)) and √π times the squared first components of its eigenvectors
// (Golub and Welsch 1969, "Calculation of Gauss Quadrature Rules"). Nodes
// are in increasing order. It panics with a *tensor.Error if n < 1.
func GaussHermite(n int) (nodes, weights []float64) {
	if n < 1 {
		tensor.Fail("gp.GaussHermite", "%d points; want at least 1", n)
	}
	j := tensor.Zeros(tensor.Float64, n, n)
	jv := j.Values()
	for k := 1; k < n; k++ {
		b := math.Sqrt(float64(k) / 2)
		jv[(k-1)*n+k], jv[k*n+k-1] = b, b
	}
	w, v, err := tensor.Eigh(tensor.FromFloat64s(jv, n, n))
	if err != nil {
		tensor.Fail("gp.GaussHermite", "eigendecomposition failed: %v", err)
	}
	nodes, vv := w.Values(), v.Values()
	weights = make([]float64, n)
	for k := range weights {
		weights[k] = math.SqrtPi * vv[k] * vv[k] // row 0, column k
	}
	for k := 0; k < n/2; k++ { // symmetrise away rounding: x₋ₖ = −xₖ, w₋ₖ = wₖ
		x := (nodes[n-1-k] - nodes[k]) / 2
		nodes[k], nodes[n-1-k] = -x, x
		wk := (weights[k] + weights[n-1-k]) / 2
		weights[k], weights[n-1-k] = wk, wk
	}
	if n%2 == 1 {
		nodes[n/2] = 0
	}
	return nodes, weights
}
