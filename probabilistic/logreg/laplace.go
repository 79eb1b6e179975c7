package logreg

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// LaplaceOptions configures FitLaplace. The zero value chooses α by the
// evidence for binary logistic regression with an intercept, with an
// L-BFGS MAP solver.
type LaplaceOptions struct {
	// Alpha is the prior precision α of θ ~ N(0, α⁻¹I). Zero (the default)
	// means: choose α by maximising the Laplace evidence over [AlphaMin,
	// AlphaMax].
	Alpha       float64
	Link        Link    // Logit (the default), Probit or Softmax
	Classes     int     // Softmax only; 0 means max(label)+1
	Solver      string  // the MAP solver: LBFGS (the default), Newton or IRLS
	MaxIter     int     // MAP iterations; 0 means 100 (Newton, IRLS) or 1000 (L-BFGS)
	GradTol     float64 // MAP gradient tolerance; 0 means 1e-8·max(1, n)
	NoIntercept bool    // fit without the intercept
	// AlphaMin and AlphaMax bound the evidence search; zero means 1e-4 and 1e4.
	AlphaMin, AlphaMax float64
}

// Laplace is the Laplace approximation N(θ*, H⁻¹) of the posterior of a
// Bayesian logistic (or probit, or softmax) regression.
type Laplace struct {
	MAP         *Regression // the MAP fit θ*
	Alpha       float64     // the prior precision
	LogEvidence float64     // the Laplace approximation of log p(y | X, α)
	// Hessian is H = ∇²E(θ*) (autodiff), the posterior precision, a (p, p)
	// float64 tensor in the layout of Regression.Theta.
	Hessian *tensor.Tensor
	// Evaluations lists the (α, log evidence) pairs tried while fitting α.
	Evaluations [][2]float64

	chol   *tensor.Tensor // lower Cholesky factor of H
	theta  []float64
	rows   int
	cols   int
	mapErr error // the MAP solver's *tensor.NotConvergedError, if it ran out of iterations
}

// FitLaplace fits Bayesian logistic regression with the prior θ ~ N(0, α⁻¹I)
// on every parameter (the intercept included) by the Laplace approximation
// (MacKay 1992, "The evidence framework applied to classification
// networks"). With opts.Alpha = 0 it chooses α by maximising the Laplace
// log-evidence over [AlphaMin, AlphaMax]: a scan of log α at 13 points,
// then golden-section search on log α around the best one down to a
// bracket of width 1e-3 in log₁₀ α. Each evaluation refits the MAP,
// warm-started from the previous one. (MacKay's fixed point α = γ/‖θ*‖² is
// cheaper but ignores how H changes with θ*, so it only approximately
// maximises the Laplace evidence of a non-Gaussian likelihood; the search
// maximises it.)
//
// Errors are those of FitRegression (named for FitLaplace), plus a bad α
// range and a Hessian that is not positive definite. When the MAP solver
// runs out of iterations the approximation is formed at its last iterate
// and comes back with its *tensor.NotConvergedError (in the α search, when
// that happened at the α chosen). When ctx is cancelled it returns promptly with ctx.Err() wrapped
// and, during the α search, the best approximation found so far.
func FitLaplace(ctx context.Context, x *tensor.Tensor, labels []int, opts LaplaceOptions) (post *Laplace, err error) {
	const op = "logreg.FitLaplace"
	defer tensor.Recover(&err)
	if opts.Alpha == 0 {
		return fitAlpha(ctx, op, x, labels, opts)
	}
	if opts.Alpha < 0 || !isFinite(opts.Alpha) {
		return nil, fmt.Errorf("%s: Alpha = %v must be finite and > 0", op, opts.Alpha)
	}
	p, err := setup(op, x, labels, opts.regression(opts.Alpha, nil))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return p.laplace(ctx, op, opts, opts.Alpha, nil)
}

// regression returns the MAP options for prior precision alpha.
func (o LaplaceOptions) regression(alpha float64, init []float64) RegressionOptions {
	return RegressionOptions{L2: alpha, interceptPrec: alpha, Solver: o.Solver, Link: o.Link, Classes: o.Classes,
		MaxIter: o.MaxIter, GradTol: o.GradTol, Init: init, NoIntercept: o.NoIntercept}
}

// laplace fits the MAP at alpha (warm-started from init) and forms the
// Laplace approximation.
func (p *problem) laplace(ctx context.Context, op string, opts LaplaceOptions, alpha float64, init []float64) (*Laplace, error) {
	p.setPrecision(alpha, alpha)
	m, mapErr := p.fit(ctx, op, opts.regression(alpha, init))
	// A MAP out of iterations still gives a positive definite Hessian
	// (the prior's αI is in it): the approximation is formed at the last
	// iterate and comes back with the solver's NotConvergedError.
	if mapErr != nil && (m == nil || !errors.Is(mapErr, tensor.ErrNotConverged)) {
		return nil, mapErr
	}
	theta := m.Theta()
	f, _, h := p.hessian(theta)
	np := p.size()
	l, err := tensor.Cholesky(tensor.FromFloat64s(append([]float64(nil), h...), np, np))
	if err != nil {
		return nil, fmt.Errorf("%s: Laplace approximation at α = %g: the Hessian is not positive definite: %w", op, alpha, err)
	}
	logDet := tensor.LogDetChol(l).Item()
	// log p(y|θ*) + log p(θ*) + (d/2)·log 2π − ½·log det H, where
	// log p(θ*) = (d/2)·log(α/2π) − (α/2)‖θ*‖², and −E(θ*) is the sum of
	// the first term and the quadratic part of the second.
	logEv := -f + 0.5*float64(np)*math.Log(alpha) - 0.5*logDet
	return &Laplace{MAP: m, Alpha: alpha, LogEvidence: logEv, Hessian: tensor.FromFloat64s(h, np, np), chol: l, theta: theta,
		rows: p.rows, cols: p.cols, mapErr: mapErr}, mapErr
}

// fitAlpha is FitLaplace with α chosen by the evidence.
func fitAlpha(ctx context.Context, op string, x *tensor.Tensor, y []int, opts LaplaceOptions) (*Laplace, error) {
	lo, hi := opts.AlphaMin, opts.AlphaMax
	if lo == 0 {
		lo = 1e-4
	}
	if hi == 0 {
		hi = 1e4
	}
	if !(lo > 0 && hi > lo) || !isFinite(hi) {
		return nil, fmt.Errorf("%s: the α range [%g, %g] must satisfy 0 < AlphaMin < AlphaMax < ∞", op, lo, hi)
	}
	p, err := setup(op, x, y, opts.regression(lo, nil))
	if err != nil {
		return nil, err
	}
	var (
		best  *Laplace
		evals [][2]float64
		init  []float64
	)
	cache := map[float64]float64{} // log evidence by log₁₀ α; only the best posterior is kept
	eval := func(la float64) (float64, error) {
		if v, ok := cache[la]; ok {
			return v, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("%s: stopped after %d evaluations of the evidence: %w", op, len(evals), err)
		}
		q, err := p.laplace(ctx, op, opts, math.Pow(10, la), init)
		if q == nil {
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
	// stop returns the best approximation so far with err if ctx was
	// cancelled, and err alone otherwise.
	stop := func(err error) (*Laplace, error) {
		if ctx.Err() != nil && best != nil {
			best.Evaluations = evals
			return best, err
		}
		return nil, err
	}
	a, b := math.Log10(lo), math.Log10(hi)
	const scan = 13
	step := (b - a) / (scan - 1)
	bestK := 0
	bestV := math.Inf(-1)
	for k := range scan {
		v, err := eval(a + float64(k)*step)
		if err != nil {
			return stop(err)
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
		return stop(err)
	}
	fd, err := eval(d)
	if err != nil {
		return stop(err)
	}
	for r-l > 1e-3 {
		if fc > fd {
			r, d, fd = d, c, fc
			c = r - invPhi*(r-l)
			if fc, err = eval(c); err != nil {
				return stop(err)
			}
		} else {
			l, c, fc = c, d, fd
			d = l + invPhi*(r-l)
			if fd, err = eval(d); err != nil {
				return stop(err)
			}
		}
	}
	best.Evaluations = evals
	return best, best.mapErr
}

// Cov returns the posterior covariance H⁻¹, a (p, p) float64 tensor in
// the layout of Regression.Theta, from the Cholesky factor of H.
func (q *Laplace) Cov() *tensor.Tensor {
	np := len(q.theta)
	return tensor.CholeskySolve(q.chol, tensor.Eye(tensor.Float64, np))
}

// design returns the rows of x (n, d) with the intercept column appended,
// panicking naming op if x does not have the model's features.
func (q *Laplace) design(op string, x *tensor.Tensor) ([]float64, int) {
	d := len(q.MAP.Coef[0])
	v, n := validate.Query(op, x, d)
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
// linear predictor of each class row, two (n, rows of Coef) float64
// tensors: μ = θ*ᵀx̃ and s² = x̃ᵀΣₖₖx̃ = ‖L⁻¹eₖ⊗x̃‖² with Σ = H⁻¹ = (LLᵀ)⁻¹.
// It panics with a *tensor.Error if x does not have the model's features.
func (q *Laplace) PredictiveMoments(x *tensor.Tensor) (mu, s2 *tensor.Tensor) {
	xs, n := q.design("logreg.Laplace.PredictiveMoments", x)
	return q.moments(xs, n)
}

func (q *Laplace) moments(xs []float64, n int) (mu, s2 *tensor.Tensor) {
	np, c, k := len(q.theta), q.cols, q.rows
	mv := make([]float64, n*k)
	sv := make([]float64, n*k)
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
			for r := range k {
				col := (i-i0)*k + r
				var e, v float64
				for j := range c {
					e += q.theta[r*c+j] * xs[i*c+j]
				}
				for t := range np {
					v += z[t*m+col] * z[t*m+col]
				}
				mv[i*k+r], sv[i*k+r] = e, v
			}
		}
	}
	return tensor.FromFloat64s(mv, n, k), tensor.FromFloat64s(sv, n, k)
}

// PredictProba returns the predictive class probabilities, an (n, Classes)
// float64 tensor, by the probit approximation: for the logit link
// MacKay's σ(κ(s²)·μ), κ(s²) = (1 + πs²/8)^(−1/2), which matches
// ∫σ(a)N(a|μ,s²)da to about 0.02; for the probit link the exact
// Φ(μ/√(1+s²)); for softmax the same κ scaling of each class's logit
// before the softmax (the mean-field approximation of Lu, Ie and Sha 2020,
// "Mean-field approximation to Gaussian-softmax integral with application
// to uncertainty estimation"), which ignores correlations between classes.
// It panics with a *tensor.Error if x does not have the model's features.
func (q *Laplace) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	xs, n := q.design("logreg.Laplace.PredictProba", x)
	mu, s2 := q.moments(xs, n)
	k, classes := q.rows, q.MAP.Classes
	mv, sv := mu.Float64s(), s2.Float64s()
	out := make([]float64, n*classes)
	e := make([]float64, k)
	for i := range n {
		for r := range e {
			if q.MAP.Link == Probit {
				e[r] = mv[i*k+r] / math.Sqrt(1+sv[i*k+r])
			} else {
				e[r] = mv[i*k+r] / math.Sqrt(1+math.Pi*sv[i*k+r]/8)
			}
		}
		probs(q.MAP.Link, e, out[i*classes:(i+1)*classes])
	}
	return tensor.FromFloat64s(out, n, classes)
}

// Predict returns the class of each row of x that PredictProba makes most
// probable. It panics as PredictProba does.
func (q *Laplace) Predict(x *tensor.Tensor) []int { return tensor.ArgMax(q.PredictProba(x), 1) }

// PredictMC returns the predictive class probabilities, an (n, Classes)
// float64 tensor, averaged over samples draws θ = θ* + L⁻ᵀε, ε ~ N(0, I),
// from the Laplace posterior, drawn from a stream seeded by seed (the same
// seed gives the same probabilities). It panics with a *tensor.Error if x
// does not have the model's features or samples < 1.
func (q *Laplace) PredictMC(x *tensor.Tensor, samples int, seed uint64) *tensor.Tensor {
	const op = "logreg.Laplace.PredictMC"
	if samples <= 0 {
		tensor.Fail(op, "samples = %d must be positive", samples)
	}
	xs, n := q.design(op, x)
	np, c, k := len(q.theta), q.cols, q.rows
	eps := tensor.NewRNG(seed).Normal(tensor.Float64, 0, 1, np, samples)
	z := tensor.TriSolve(q.chol, eps, true, true).Values() // (np, samples): Lᵀz = ε
	classes := q.MAP.Classes
	out := make([]float64, n*classes)
	th := make([]float64, np)
	e := make([]float64, k)
	pr := make([]float64, classes)
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
			probs(q.MAP.Link, e, pr)
			for cl, pv := range pr {
				out[i*classes+cl] += pv
			}
		}
	}
	for i := range out {
		out[i] /= float64(samples)
	}
	return tensor.FromFloat64s(out, n, classes)
}
