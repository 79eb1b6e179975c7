package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// checkCounts returns an error naming the first target that is not a
// non-negative integer.
func checkCounts(name string, y []float64) error {
	for i, v := range y {
		if !(v >= 0) || math.IsInf(v, 0) || v != math.Floor(v) {
			return fmt.Errorf("target %d is %g; the %s likelihood takes counts 0, 1, 2, …", i, v, name)
		}
	}
	return nil
}

// PoissonLikelihood is count regression, y ~ Poisson(e^f) with the log
// link. Its expected log-likelihood is closed form,
//
//	E log p(y | f) = y μ − e^(μ + v/2) − log y!,
//
// and its predictive log density is by Gauss–Hermite quadrature.
type PoissonLikelihood struct{ ghRule }

// NewPoissonLikelihood returns a Poisson likelihood whose predictive
// density uses points Gauss–Hermite nodes (zero means 20). It panics with
// a *tensor.Error for a count outside 1 to 100.
func NewPoissonLikelihood(points int) *PoissonLikelihood {
	return &PoissonLikelihood{newGHRule("gp.NewPoissonLikelihood", points)}
}

// Name returns "poisson".
func (l *PoissonLikelihood) Name() string { return "poisson" }

// Latents returns 1.
func (l *PoissonLikelihood) Latents() int { return 1 }

// Hyperparams returns none.
func (l *PoissonLikelihood) Hyperparams() []*kernel.Hyperparam { return nil }

// ExpectedLogLik returns y μ − e^(μ + v/2) − log y! per point.
func (l *PoissonLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	mu, v = flatLatent(mu, v)
	rate := graph.Exp(graph.Add(mu, graph.MulScalar(v, 0.5)))
	return graph.Sub(graph.Sub(graph.Mul(y, mu), rate), graph.Lgamma(graph.AddScalar(y, 1)))
}

// LogLik returns y f − e^f − log y!, y broadcast against f.
func (l *PoissonLikelihood) LogLik(f, y *graph.Node) *graph.Node {
	return graph.Sub(graph.Sub(graph.Mul(y, f), graph.Exp(f)), graph.Lgamma(graph.AddScalar(y, 1)))
}

// CheckTargets accepts non-negative integers.
func (l *PoissonLikelihood) CheckTargets(y []float64) error { return checkCounts(l.Name(), y) }

// PredictY returns the mean e^(μ + v/2) and the variance
// mean + (e^v − 1) e^(2μ + v) of the count.
func (l *PoissonLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	mean, variance = make([]float64, len(mu)), make([]float64, len(mu))
	for i := range mu {
		mean[i] = math.Exp(mu[i] + v[i]/2)
		variance[i] = mean[i] + math.Expm1(v[i])*math.Exp(2*mu[i]+v[i])
	}
	return mean, variance
}

// LogPredictive returns log ∫ Poisson(y | e^f) N(f | μ, v) df.
func (l *PoissonLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	out := make([]float64, len(y))
	for i := range y {
		lf, _ := math.Lgamma(y[i] + 1)
		out[i] = l.logExpect(mu[i], v[i], func(f float64) float64 { return y[i]*f - math.Exp(f) - lf })
	}
	return out
}

// StudentTLikelihood is robust regression, y = f + ε with ε a Student-t
// of ν degrees of freedom and scale σ,
//
//	log p(y | f) = log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(νπσ²) − (ν+1)/2 · log(1 + (y − f)²/(νσ²)),
//
// whose heavy tails let outliers pull the fit much less than under a
// Gaussian (Jylänki, Vanhatalo and Vehtari 2011, "Robust Gaussian Process
// Regression with a Student-t Likelihood"). Expectations are by
// Gauss–Hermite quadrature. The scale ("scale", floored at 1e-6) is fitted
// with the kernel; ν ("df") is fixed unless the caller unfixes it.
type StudentTLikelihood struct {
	ghRule
	df, scale *kernel.Hyperparam
}

// NewStudentTLikelihood returns a Student-t likelihood with df degrees of
// freedom (zero means 4) and scale (zero means 1), using points
// Gauss–Hermite nodes (zero means 20). It panics with a *tensor.Error for
// a df or scale that is not positive and finite, or a node count outside
// 1 to 100.
func NewStudentTLikelihood(df, scale float64, points int) *StudentTLikelihood {
	const op = "gp.NewStudentTLikelihood"
	if df == 0 {
		df = 4
	}
	if scale == 0 {
		scale = 1
	}
	if !(df > 0) || math.IsInf(df, 0) || !(scale > 1e-6) || math.IsInf(scale, 0) {
		tensor.Fail(op, "df %g and scale %g must be finite and positive (scale above 1e-6)", df, scale)
	}
	l := &StudentTLikelihood{ghRule: newGHRule(op, points)}
	l.df = kernel.NewHyperparam("df", df).SetFixed(true)
	l.scale = kernel.NewHyperparam("scale", scale).SetFloor(1e-6)
	if err := l.scale.Set(scale); err != nil {
		tensor.Fail(op, "%v", err)
	}
	return l
}

// Name returns "student-t".
func (l *StudentTLikelihood) Name() string { return "student-t" }

// Latents returns 1.
func (l *StudentTLikelihood) Latents() int { return 1 }

// DF returns the degrees-of-freedom hyperparameter ν (fixed by default).
func (l *StudentTLikelihood) DF() *kernel.Hyperparam { return l.df }

// Scale returns the scale hyperparameter σ.
func (l *StudentTLikelihood) Scale() *kernel.Hyperparam { return l.scale }

// Hyperparams returns the scale and the degrees of freedom.
func (l *StudentTLikelihood) Hyperparams() []*kernel.Hyperparam {
	return []*kernel.Hyperparam{l.scale, l.df}
}

// ExpectedLogLik returns the quadrature estimate of E log p(y | f).
func (l *StudentTLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	mu, v = flatLatent(mu, v)
	yb := graph.Reshape(y, y.Shape()[0], 1)
	return l.expect(mu, v, func(f *graph.Node) *graph.Node { return l.LogLik(f, yb) })
}

// LogLik returns log t_ν(y | f, σ), y broadcast against f.
func (l *StudentTLikelihood) LogLik(f, y *graph.Node) *graph.Node {
	g := f.Graph()
	nu, s := graph.Reshape(l.df.Node(g)), graph.Reshape(l.scale.Node(g))
	half := graph.MulScalar(graph.AddScalar(nu, 1), 0.5)
	nuS2 := graph.Mul(nu, graph.Square(s))
	c := graph.Sub(graph.Sub(graph.Lgamma(half), graph.Lgamma(graph.MulScalar(nu, 0.5))),
		graph.MulScalar(graph.Log(graph.MulScalar(nuS2, math.Pi)), 0.5))
	r := graph.Div(graph.Square(graph.Sub(y, f)), nuS2)
	return graph.Sub(c, graph.Mul(half, graph.Log1p(r)))
}

// CheckTargets rejects NaN and ±Inf.
func (l *StudentTLikelihood) CheckTargets(y []float64) error {
	if i := firstNonFinite(y); i >= 0 {
		return fmt.Errorf("y[%d] = %g is not finite", i, y[i])
	}
	return nil
}

// PredictY returns μ and v + σ²ν/(ν − 2), the latter +Inf for ν ≤ 2.
func (l *StudentTLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	nu, s := l.df.Value(), l.scale.Value()
	noise := math.Inf(1)
	if nu > 2 {
		noise = s * s * nu / (nu - 2)
	}
	variance = make([]float64, len(v))
	for i := range v {
		variance[i] = v[i] + noise
	}
	return append([]float64(nil), mu...), variance
}

// LogPredictive returns log ∫ t_ν(y | f, σ) N(f | μ, v) df by a
// 4000-panel trapezoid rule on μ ± 10√v: the t density is often far
// narrower than q(f), where Gauss–Hermite rules lose digits.
func (l *StudentTLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	nu, s := l.df.Value(), l.scale.Value()
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	c := a - b - 0.5*math.Log(nu*math.Pi*s*s)
	out := make([]float64, len(y))
	for i := range y {
		out[i] = logTrapezoid(mu[i], v[i], func(f float64) float64 {
			return c - (nu+1)/2*math.Log1p((y[i]-f)*(y[i]-f)/(nu*s*s))
		})
	}
	return out
}

// HeteroscedasticLikelihood is regression whose noise varies with the
// input: two latent functions, the mean f₁ and the log noise variance f₂,
// y ~ N(f₁, e^{f₂}) (Saul et al. 2016, "Chained Gaussian Processes";
// Lázaro-Gredilla and Titsias 2011, "Variational Heteroscedastic Gaussian
// Process Regression"). Its expected log-likelihood is closed form,
//
//	E log p(y | f) = −½ log 2π − ½ μ₂ − ½ ((y − μ₁)² + v₁) e^(−μ₂ + v₂/2),
//
// and its predictive density is by Gauss–Hermite quadrature over f₂.
// Column 0 of an SVGP's latent predictions is the mean, column 1 the log
// noise variance; SVGPOptions.LatentKernels gives the noise a kernel of
// its own.
type HeteroscedasticLikelihood struct{ ghRule }

// NewHeteroscedasticLikelihood returns the likelihood with points
// Gauss–Hermite nodes for its predictive density (zero means 20). It
// panics with a *tensor.Error for a count outside 1 to 100.
func NewHeteroscedasticLikelihood(points int) *HeteroscedasticLikelihood {
	return &HeteroscedasticLikelihood{newGHRule("gp.NewHeteroscedasticLikelihood", points)}
}

// Name returns "heteroscedastic-gaussian".
func (l *HeteroscedasticLikelihood) Name() string { return "heteroscedastic-gaussian" }

// Latents returns 2: the mean and the log noise variance.
func (l *HeteroscedasticLikelihood) Latents() int { return 2 }

// Hyperparams returns none: the noise is a latent function.
func (l *HeteroscedasticLikelihood) Hyperparams() []*kernel.Hyperparam { return nil }

// ExpectedLogLik returns the closed form above per point; mu and v are
// (b, 2).
func (l *HeteroscedasticLikelihood) ExpectedLogLik(mu, v, y *graph.Node) *graph.Node {
	b := mu.Shape()[0]
	col := func(a *graph.Node, j int) *graph.Node { return graph.Reshape(graph.Slice(a, 1, j, j+1, 1), b) }
	m1, m2, v1, v2 := col(mu, 0), col(mu, 1), col(v, 0), col(v, 1)
	prec := graph.Exp(graph.Sub(graph.MulScalar(v2, 0.5), m2)) // E e^{−f₂}
	quad := graph.Mul(graph.Add(graph.Square(graph.Sub(y, m1)), v1), prec)
	return graph.MulScalar(graph.AddScalar(graph.Add(m2, quad), math.Log(2*math.Pi)), -0.5)
}

// CheckTargets rejects NaN and ±Inf.
func (l *HeteroscedasticLikelihood) CheckTargets(y []float64) error {
	if i := firstNonFinite(y); i >= 0 {
		return fmt.Errorf("y[%d] = %g is not finite", i, y[i])
	}
	return nil
}

// PredictY returns μ₁ and v₁ + e^(μ₂ + v₂/2) per point.
func (l *HeteroscedasticLikelihood) PredictY(mu, v []float64) (mean, variance []float64) {
	b := len(mu) / 2
	mean, variance = make([]float64, b), make([]float64, b)
	for i := range mean {
		mean[i] = mu[2*i]
		variance[i] = v[2*i] + math.Exp(mu[2*i+1]+v[2*i+1]/2)
	}
	return mean, variance
}

// LogPredictive returns log ∫ N(y | μ₁, v₁ + e^{f₂}) N(f₂ | μ₂, v₂) df₂.
func (l *HeteroscedasticLikelihood) LogPredictive(mu, v, y []float64) []float64 {
	out := make([]float64, len(y))
	for i := range y {
		m1, v1 := mu[2*i], v[2*i]
		out[i] = l.logExpect(mu[2*i+1], v[2*i+1], func(f float64) float64 {
			t := v1 + math.Exp(f)
			return -0.5 * (math.Log(2*math.Pi*t) + (y[i]-m1)*(y[i]-m1)/t)
		})
	}
	return out
}

// logTrapezoid returns log ∫ exp(logh(f)) N(f | mu, v) df by the trapezoid
// rule with 4000 panels on mu ± 10√v, summed in the log domain.
func logTrapezoid(mu, v float64, logh func(f float64) float64) float64 {
	const panels = 4000
	if !(v > 0) {
		return logh(mu)
	}
	sd := math.Sqrt(v)
	step := 20 * sd / panels
	terms := make([]float64, panels+1)
	top := math.Inf(-1)
	for i := range terms {
		z := -10 + float64(i)*20/panels
		terms[i] = logh(mu+sd*z) - z*z/2
		if i == 0 || i == panels {
			terms[i] -= math.Ln2
		}
		top = math.Max(top, terms[i])
	}
	if math.IsInf(top, -1) {
		return top
	}
	s := 0.0
	for _, t := range terms {
		s += math.Exp(t - top)
	}
	return top + math.Log(s*step/math.Sqrt(2*math.Pi*v))
}
