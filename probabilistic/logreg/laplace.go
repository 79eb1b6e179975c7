package logreg

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// BayesConfig configures FitLaplace.
type BayesConfig struct {
	// Alpha is the prior precision α of θ ~ N(0, α⁻¹I). Zero means: choose
	// α by maximising the Laplace evidence (see FitAlpha).
	Alpha       float64
	Link        Link   // Logit (default), Probit or Softmax
	Classes     int    // Softmax only; 0 means max(y)+1
	Solver      string // the MAP solver: LBFGS (default), Newton or IRLS
	MaxIter     int    // as in Config
	GradTol     float64
	NoIntercept bool // fit without the intercept
	// AlphaMin and AlphaMax bound the evidence search; zero means 1e-4 and 1e4.
	AlphaMin, AlphaMax float64
}

// Posterior is the Laplace approximation N(θ*, H⁻¹) of the posterior of a
// Bayesian logistic (or probit, or softmax) regression.
type Posterior struct {
	*Model              // the MAP fit θ*
	Alpha       float64 // the prior precision
	LogEvidence float64 // the Laplace approximation of log p(y | X, α)
	// Hessian is H = ∇²E(θ*) (autodiff), the posterior precision, p×p
	// row-major in the layout of Model.Theta.
	Hessian []float64
	// Evaluations lists the (α, log evidence) pairs tried while fitting α.
	Evaluations [][2]float64

	chol  *tensor.Tensor // lower Cholesky factor of H
	theta []float64
	rows  int
	cols  int
}

// FitLaplace fits Bayesian logistic regression with the prior θ ~ N(0, α⁻¹I)
// on every parameter (the intercept included) by the Laplace approximation.
// With cfg.Alpha = 0 it chooses α by maximising the evidence (FitAlpha).
// Errors are as for Fit, plus a Hessian that is not positive definite.
func FitLaplace(x *tensor.Tensor, y []int, cfg BayesConfig) (post *Posterior, err error) {
	defer tensor.Recover(&err)
	if cfg.Alpha == 0 {
		return FitAlpha(x, y, cfg)
	}
	if cfg.Alpha < 0 || !isFinite(cfg.Alpha) {
		return nil, fmt.Errorf("logreg: Alpha = %v must be finite and > 0", cfg.Alpha)
	}
	p, err := setup(x, y, cfg.config(cfg.Alpha, nil))
	if err != nil {
		return nil, err
	}
	return p.laplace(cfg, cfg.Alpha, nil)
}

// config returns the MAP configuration for prior precision alpha.
func (c BayesConfig) config(alpha float64, init []float64) Config {
	return Config{L2: alpha, interceptPrec: alpha, Solver: c.Solver, Link: c.Link, Classes: c.Classes,
		MaxIter: c.MaxIter, GradTol: c.GradTol, Init: init, NoIntercept: c.NoIntercept}
}

// laplace fits the MAP at alpha (warm-started from init) and forms the
// Laplace approximation.
func (p *problem) laplace(cfg BayesConfig, alpha float64, init []float64) (*Posterior, error) {
	c := cfg.config(alpha, init)
	p.setPrecision(alpha, alpha)
	m, err := p.fit(c)
	if err != nil {
		return nil, err
	}
	theta := m.Theta()
	f, _, h := p.hessian(theta)
	np := p.size()
	l, err := tensor.Cholesky(tensor.FromFloat64s(append([]float64(nil), h...), np, np))
	if err != nil {
		return nil, fmt.Errorf("logreg: Laplace approximation at α = %g: the Hessian is not positive definite: %w", alpha, err)
	}
	logDet := tensor.LogDetChol(l).Item()
	// log p(y|θ*) + log p(θ*) + (d/2)·log 2π − ½·log det H, where
	// log p(θ*) = (d/2)·log(α/2π) − (α/2)‖θ*‖², and −E(θ*) is the sum of
	// the first term and the quadratic part of the second.
	logEv := -f + 0.5*float64(np)*math.Log(alpha) - 0.5*logDet
	return &Posterior{Model: m, Alpha: alpha, LogEvidence: logEv, Hessian: h, chol: l, theta: theta,
		rows: p.rows, cols: p.cols}, nil
}

// FitAlpha chooses the prior precision α that maximises the Laplace
// log-evidence over [AlphaMin, AlphaMax]: a scan of log α at 13 points,
// then golden-section search on log α around the best one down to a bracket
// of width 1e-3 in log₁₀ α. Each evaluation refits the MAP, warm-started
// from the previous one. (MacKay's fixed point α = γ/‖θ*‖² is cheaper but
// ignores how H changes with θ*, so it only approximately maximises the
// Laplace evidence of a non-Gaussian likelihood; the search maximises it.)
func FitAlpha(x *tensor.Tensor, y []int, cfg BayesConfig) (post *Posterior, err error) {
	defer tensor.Recover(&err)
	lo, hi := cfg.AlphaMin, cfg.AlphaMax
	if lo == 0 {
		lo = 1e-4
	}
	if hi == 0 {
		hi = 1e4
	}
	if !(lo > 0 && hi > lo) || !isFinite(hi) {
		return nil, fmt.Errorf("logreg: the α range [%g, %g] must satisfy 0 < AlphaMin < AlphaMax < ∞", lo, hi)
	}
	p, err := setup(x, y, cfg.config(lo, nil))
	if err != nil {
		return nil, err
	}
	var (
		best  *Posterior
		evals [][2]float64
		init  []float64
	)
	cache := map[float64]float64{} // log evidence by log₁₀ α; only the best posterior is kept
	eval := func(la float64) (float64, error) {
		if v, ok := cache[la]; ok {
			return v, nil
		}
		q, err := p.laplace(cfg, math.Pow(10, la), init)
		if err != nil {
			return 0, err
		}
		init = q.theta
		cache[la] = q.LogEvidence
		evals = append(evals, [2]float64{q.Alpha, q.LogEvidence})
		if best == nil || q.LogEvidence > best.LogEvidence {
			best = q
		}
		return q.LogEvidence, nil
	}
	a, b := math.Log10(lo), math.Log10(hi)
	const scan = 13
	step := (b - a) / (scan - 1)
	bestK := 0
	bestV := math.Inf(-1)
	for k := range scan {
		v, err := eval(a + float64(k)*step)
		if err != nil {
			return nil, err
		}
		if v > bestV {
			bestK, bestV = k, v
		}
	}
	l, r := a+float64(max(bestK-1, 0))*step, a+float64(min(bestK+1, scan-1))*step
	const invPhi = 0.6180339887498949
	c, d := r-invPhi*(r-l), l+invPhi*(r-l)
	fc, err := eval(c)
	if err != nil {
		return nil, err
	}
	fd, err := eval(d)
	if err != nil {
		return nil, err
	}
	for r-l > 1e-3 {
		if fc > fd {
			r, d, fd = d, c, fc
			c = r - invPhi*(r-l)
			if fc, err = eval(c); err != nil {
				return nil, err
			}
		} else {
			l, c, fc = c, d, fd
			d = l + invPhi*(r-l)
			if fd, err = eval(d); err != nil {
				return nil, err
			}
		}
	}
	best.Evaluations = evals
	return best, nil
}

// Cov returns the posterior covariance H⁻¹ (p×p, row-major), from the
// Cholesky factor of H.
func (q *Posterior) Cov() []float64 {
	np := len(q.theta)
	return tensor.CholeskySolve(q.chol, tensor.Eye(tensor.Float64, np)).Values()
}

// design returns the rows of x (n, d) with the intercept column appended.
func (q *Posterior) design(x *tensor.Tensor) ([]float64, int) {
	d := len(q.Coef[0])
	if len(x.Shape()) != 2 || x.Shape()[1] != d {
		tensor.Fail("logreg.Posterior", "x has shape %v, the model has %d features", x.Shape(), d)
	}
	n := x.Shape()[0]
	v := x.Values()
	out := make([]float64, n*q.cols)
	for i := range n {
		copy(out[i*q.cols:], v[i*d:(i+1)*d])
		if q.cols > d {
			out[i*q.cols+d] = 1
		}
	}
	return out, n
}

// PredictiveMoments returns the posterior mean μ and variance s² of the
// linear predictor of each class row (n, rows): μ = θ*ᵀx̃ and
// s² = x̃ᵀΣₖₖx̃ = ‖L⁻¹eₖ⊗x̃‖² with Σ = H⁻¹ = (LLᵀ)⁻¹.
func (q *Posterior) PredictiveMoments(x *tensor.Tensor) (mu, s2 [][]float64) {
	xs, n := q.design(x)
	np, c, k := len(q.theta), q.cols, q.rows
	mu = make([][]float64, n)
	s2 = make([][]float64, n)
	const chunk = 256
	for i0 := 0; i0 < n; i0 += chunk {
		i1 := min(i0+chunk, n)
		m := (i1 - i0) * k
		b := make([]float64, np*m)
		for i := i0; i < i1; i++ {
			for r := range k {
				col := (i-i0)*k + r
				for j := range c {
					b[(r*c+j)*m+col] = xs[i*c+j]
				}
			}
		}
		z := tensor.TriSolve(q.chol, tensor.FromFloat64s(b, np, m), true, false).Values()
		for i := i0; i < i1; i++ {
			mu[i] = make([]float64, k)
			s2[i] = make([]float64, k)
			for r := range k {
				col := (i-i0)*k + r
				var e, v float64
				for j := range c {
					e += q.theta[r*c+j] * xs[i*c+j]
				}
				for t := range np {
					v += z[t*m+col] * z[t*m+col]
				}
				mu[i][r], s2[i][r] = e, v
			}
		}
	}
	return mu, s2
}

// PredictProbit returns the predictive class probabilities (n, Classes)
// by the probit approximation: for the logit link MacKay's
// σ(κ(s²)·μ), κ(s²) = (1 + πs²/8)^(−1/2), which matches ∫σ(a)N(a|μ,s²)da to
// about 0.02; for the probit link the exact Φ(μ/√(1+s²)); for softmax the
// same κ scaling of each class's logit before the softmax (the mean-field
// approximation of Lu, Ie and Sha 2020), which ignores correlations between
// classes.
func (q *Posterior) PredictProbit(x *tensor.Tensor) [][]float64 {
	mu, s2 := q.PredictiveMoments(x)
	out := make([][]float64, len(mu))
	for i := range mu {
		e := make([]float64, len(mu[i]))
		for r := range e {
			if q.Link == Probit {
				e[r] = mu[i][r] / math.Sqrt(1+s2[i][r])
			} else {
				e[r] = mu[i][r] / math.Sqrt(1+math.Pi*s2[i][r]/8)
			}
		}
		out[i] = probs(q.Link, e)
	}
	return out
}

// PredictMC returns the predictive class probabilities (n, Classes)
// averaged over samples draws θ = θ* + L⁻ᵀε, ε ~ N(0, I), from the
// Laplace posterior, using rng (seeded by the caller for reproducibility).
func (q *Posterior) PredictMC(x *tensor.Tensor, rng *tensor.RNG, samples int) [][]float64 {
	if samples <= 0 {
		tensor.Fail("logreg.Posterior.PredictMC", "samples = %d must be positive", samples)
	}
	xs, n := q.design(x)
	np, c, k := len(q.theta), q.cols, q.rows
	eps := rng.Normal(tensor.Float64, 0, 1, np, samples)
	z := tensor.TriSolve(q.chol, eps, true, true).Values() // (np, samples): Lᵀz = ε
	out := make([][]float64, n)
	classes := q.Model.Classes
	for i := range n {
		out[i] = make([]float64, classes)
	}
	th := make([]float64, np)
	e := make([]float64, k)
	for s := range samples {
		for t := range np {
			th[t] = q.theta[t] + z[t*samples+s]
		}
		for i := range n {
			for r := range k {
				var v float64
				for j := range c {
					v += th[r*c+j] * xs[i*c+j]
				}
				e[r] = v
			}
			for cl, pv := range probs(q.Link, e) {
				out[i][cl] += pv
			}
		}
	}
	for i := range out {
		for cl := range out[i] {
			out[i][cl] /= float64(samples)
		}
	}
	return out
}
