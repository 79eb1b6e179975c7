// Package bayeslinear holds Bayesian linear models (Bishop 2006, Pattern
// Recognition and Machine Learning, §3.3-3.5 and §7.2; MacKay 1992,
// "Bayesian interpolation"): Bayesian linear regression with a Gaussian
// prior, its exact posterior, predictive distribution and evidence
// (FitRegression), the evidence maximised over the prior and noise
// precisions by MacKay's fixed point (FitEvidence) or by gradient through
// the graph (FitEvidenceGradient), and the relevance vector machine for
// regression (FitRVM) and classification (FitRVC, by the Laplace
// approximation; Tipping 2001, "Sparse Bayesian learning and the relevance
// vector machine"), whose per-weight precisions prune the basis to a
// sparse set.
//
//	m, err := bayeslinear.FitEvidence(ctx, phi, y, bayeslinear.EvidenceOptions{}) // phi (n, M) basis, y (n)
//	mean, variance := m.Predict(phiNew), m.PredictVariance(phiNew)
//	fmt.Println(m.Alpha, m.Beta, m.LogEvidence)
//
// The iterative fits take a context: when it is cancelled they stop before
// the next re-estimation and return the model so far with an error
// wrapping ctx.Err(). A fit that uses MaxIter re-estimations without
// meeting Tol returns its model with a *tensor.NotConvergedError.
package bayeslinear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// Regression is the posterior of y = Φw + ε, w ~ N(0, diag(α)⁻¹),
// ε ~ N(0, β⁻¹I).
type Regression struct {
	Alpha       []float64      // prior precision of each weight (all equal unless RVM)
	Beta        float64        // noise precision
	Mean        []float64      // posterior mean m_N of w
	Cov         *tensor.Tensor // posterior covariance S_N (M, M)
	LogEvidence float64        // log p(y | α, β)
	Iterations  int            // re-estimations made (0 for FitRegression)
}

// RegressionOptions configures FitRegression. Zero fields take the
// defaults given.
type RegressionOptions struct {
	Alpha float64 // prior precision of every weight (default 1)
	Beta  float64 // noise precision (default 1/var(y))
}

// FitRegression returns the exact posterior and evidence for fixed
// precisions α (one value for every weight) and β, given the design
// matrix x (n, M) and the targets y (n):
//
//	S_N = (αI + βΦᵀΦ)⁻¹,  m_N = βS_NΦᵀy,
//	log p(y) = M/2·log α + n/2·log β − β/2‖y − Φm_N‖² − α/2‖m_N‖² − ½log|S_N⁻¹| − n/2·log 2π.
//
// It returns an error naming the fit for bad data (not a matrix, zero
// columns, NaN or Inf, a row count other than y's) or precisions that are
// negative or not finite.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitRegression(x, y *tensor.Tensor, opts RegressionOptions) (*Regression, error) {
	const op = "bayeslinear.FitRegression"
	p, yv, err := check(op, x, y)
	if err != nil {
		return nil, err
	}
	alpha, beta, err := precisions(op, opts.Alpha, opts.Beta, yv)
	if err != nil {
		return nil, err
	}
	a := make([]float64, p.Shape()[1])
	for i := range a {
		a[i] = alpha
	}
	m, err := posterior(p, yv, a, beta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return m, nil
}

// precisions checks the starting precisions alpha and beta for op and
// fills their defaults: α = 1 and β = 1/var(y).
func precisions(op string, alpha, beta float64, y []float64) (float64, float64, error) {
	if !(alpha >= 0) || !(beta >= 0) || math.IsInf(alpha, 0) || math.IsInf(beta, 0) {
		return 0, 0, fmt.Errorf("%s: α = %v and β = %v must be positive and finite (0 for the defaults)", op, alpha, beta)
	}
	if alpha == 0 {
		alpha = 1
	}
	if beta == 0 {
		mean, v := 0.0, 0.0
		for _, t := range y {
			mean += t
		}
		mean /= float64(len(y))
		for _, t := range y {
			v += (t - mean) * (t - mean)
		}
		beta = float64(len(y)) / math.Max(v, 1e-12)
	}
	return alpha, beta, nil
}

// posterior computes the posterior and evidence for per-weight precisions.
func posterior(phi *tensor.Tensor, y []float64, alpha []float64, beta float64) (*Regression, error) {
	n, m := phi.Shape()[0], phi.Shape()[1]
	prec := tensor.MulScalar(tensor.MatMulT(phi, phi, true, false), beta)
	prec = tensor.AddDiag(prec, tensor.FromFloat64s(alpha, m))
	l, err := tensor.Cholesky(prec)
	if err != nil {
		return nil, fmt.Errorf("bayeslinear: the posterior precision is not positive definite: %w", err)
	}
	yt := tensor.FromFloat64s(append([]float64(nil), y...), n, 1)
	rhs := tensor.MulScalar(tensor.MatMulT(phi, yt, true, false), beta)
	mean := tensor.TriSolve(l, tensor.TriSolve(l, rhs, true, false), true, true)
	eye := tensor.Eye(tensor.Float64, m)
	cov := tensor.TriSolve(l, tensor.TriSolve(l, eye, true, false), true, true)
	resid := tensor.Sub(yt, tensor.MatMul(phi, mean)).Values()
	mv := mean.Values()
	var rss, wAw, logA, logdet float64
	for _, r := range resid {
		rss += r * r
	}
	for i, w := range mv {
		wAw += alpha[i] * w * w
		logA += math.Log(alpha[i])
		logdet += 2 * math.Log(l.At(i, i))
	}
	ev := 0.5*logA + float64(n)/2*math.Log(beta) - beta/2*rss - wAw/2 - logdet/2 - float64(n)/2*math.Log(2*math.Pi)
	return &Regression{Alpha: alpha, Beta: beta, Mean: mv, Cov: cov, LogEvidence: ev}, nil
}

// EvidenceOptions configures FitEvidence and FitEvidenceGradient. Zero
// fields take the defaults given.
type EvidenceOptions struct {
	Alpha   float64 // starting prior precision (default 1)
	Beta    float64 // starting noise precision (default 1/var(y))
	MaxIter int     // re-estimations, or L-BFGS iterations for FitEvidenceGradient (default 1000)
	Tol     float64 // stop when the log evidence changes less (default 1e-9)
}

// betaMax bounds the noise precision of the evidence fits at 10¹⁰/var(y),
// noise 10⁻⁵ of y's spread: when the design reproduces y exactly the
// evidence grows without bound as β → ∞, and the fits stop at the bound
// (with diverged's error) rather than overflow.
func betaMax(y []float64) float64 {
	mean, v, sq := 0.0, 0.0, 0.0
	for _, t := range y {
		mean += t / float64(len(y))
	}
	for _, t := range y {
		v += (t - mean) * (t - mean) / float64(len(y))
		sq += t * t / float64(len(y))
	}
	switch {
	case v > 0:
		return 1e10 / v
	case sq > 0:
		return 1e10 / sq
	}
	return 1e10
}

// nextBeta is MacKay's update β ← (n − γ)/‖y − Φm‖², given n − γ and the
// residual sum of squares, held at bmax (which a zero residual reaches)
// and keeping beta when n − γ = 0.
func nextBeta(dof, rss, beta, bmax float64) float64 {
	switch b := dof / rss; {
	case !(b < bmax):
		return bmax
	case b > 0:
		return b
	}
	return beta
}

// diverged is the error of an evidence fit whose β reached betaMax: a
// *tensor.NotConvergedError (the evidence has no maximum to converge to),
// with the reason.
func diverged(op string, iterations int, beta float64) error {
	return fmt.Errorf("%s: the noise precision β reached its bound %.3g: the design fits y exactly, so the evidence has no maximum: %w",
		op, beta, &tensor.NotConvergedError{Op: op, Iterations: iterations})
}

// iterations checks MaxIter and Tol for op and fills their defaults.
func iterations(op string, maxIter int, tol float64) (int, float64, error) {
	if maxIter < 0 || !(tol >= 0) {
		return 0, 0, fmt.Errorf("%s: MaxIter = %d and Tol = %v must not be negative", op, maxIter, tol)
	}
	if maxIter == 0 {
		maxIter = 1000
	}
	if tol == 0 {
		tol = 1e-9
	}
	return maxIter, tol, nil
}

// FitEvidence chooses α and β by maximising the evidence with MacKay's
// fixed-point updates (Bishop 2006, eqs. 3.92 and 3.95): with λᵢ the
// eigenvalues of βΦᵀΦ, γ = Σ λᵢ/(α + λᵢ) well-determined parameters,
// α ← γ/‖m_N‖² and 1/β ← ‖y − Φm_N‖²/(n − γ), until the log evidence
// changes less than Tol. It returns an error as FitRegression does; after
// MaxIter re-estimations, or when β reaches its bound because the design
// fits y exactly (the evidence then has no maximum), the model comes back
// with a *tensor.NotConvergedError, and when ctx is cancelled with an
// error wrapping ctx.Err(). A zero design leaves α at its start: the
// evidence does not depend on it.
func FitEvidence(ctx context.Context, x, y *tensor.Tensor, opts EvidenceOptions) (*Regression, error) {
	const op = "bayeslinear.FitEvidence"
	p, yv, err := check(op, x, y)
	if err != nil {
		return nil, err
	}
	alpha, beta, err := precisions(op, opts.Alpha, opts.Beta, yv)
	if err != nil {
		return nil, err
	}
	maxIter, tol, err := iterations(op, opts.MaxIter, opts.Tol)
	if err != nil {
		return nil, err
	}
	n, m := p.Shape()[0], p.Shape()[1]
	eig, _, err := tensor.Eigh(tensor.MatMulT(p, p, true, false))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ev := eig.Values()
	bmax := betaMax(yv)
	beta = min(beta, bmax)
	var model *Regression
	prev, change := math.Inf(-1), math.Inf(1)
	for it := 1; it <= maxIter; it++ {
		if it > 1 && ctx.Err() != nil {
			return model, fmt.Errorf("%s: stopped after %d re-estimations: %w", op, model.Iterations, ctx.Err())
		}
		a := make([]float64, m)
		for i := range a {
			a[i] = alpha
		}
		if model, err = posterior(p, yv, a, beta); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		model.Iterations = it
		gamma, ww := 0.0, 0.0
		for _, l := range ev {
			gamma += beta * l / (alpha + beta*l)
		}
		for _, w := range model.Mean {
			ww += w * w
		}
		rss := 0.0
		pred := tensor.MatMul(p, tensor.FromFloat64s(model.Mean, m, 1)).Values()
		for i, t := range yv {
			rss += (t - pred[i]) * (t - pred[i])
		}
		change = math.Abs(model.LogEvidence - prev)
		if change < tol {
			if beta >= bmax {
				return model, diverged(op, it, beta)
			}
			return model, nil
		}
		prev = model.LogEvidence
		// With no well-determined parameter (γ = 0, a zero design) the
		// evidence does not depend on α, which keeps its value.
		if a := gamma / ww; gamma > 0 && a > 0 && !math.IsInf(a, 0) {
			alpha = a
		}
		beta = nextBeta(float64(n)-gamma, rss, beta, bmax)
	}
	if beta >= bmax {
		return model, diverged(op, model.Iterations, beta)
	}
	return model, &tensor.NotConvergedError{Op: op, Iterations: model.Iterations, Change: change, Tol: tol}
}

// Predict returns the predictive mean m_Nᵀφ(x) for the rows of the design
// matrix x (k, M), a (k) tensor. It panics with a *tensor.Error when x is
// not a (k, M) matrix.
func (m *Regression) Predict(x *tensor.Tensor) *tensor.Tensor {
	p := m.design("bayeslinear.Regression.Predict", x)
	return tensor.Reshape(tensor.MatMul(p, tensor.FromFloat64s(m.Mean, len(m.Mean), 1)), p.Shape()[0])
}

// PredictVariance returns the predictive variance 1/β + φ(x)ᵀS_Nφ(x) for
// the rows of the design matrix x (k, M), a (k) tensor. It panics as
// Predict does.
func (m *Regression) PredictVariance(x *tensor.Tensor) *tensor.Tensor {
	p := m.design("bayeslinear.Regression.PredictVariance", x)
	q := tensor.Sum(tensor.Mul(tensor.MatMul(p, m.Cov), p), []int{1}, false)
	return tensor.AddScalar(q, 1/m.Beta)
}

func (m *Regression) design(op string, x *tensor.Tensor) *tensor.Tensor {
	d := len(m.Mean)
	if x == nil {
		tensor.Fail(op, "nil design matrix")
	}
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want a (k, %d) design matrix, got shape %s", d, tensor.FormatShape(x.Shape()))
	}
	return x.Cast(tensor.Float64).Contiguous()
}

// check returns the design matrix x as a float64 (n, M) matrix and the
// targets y as values, or the error of validate.Matrix or validate.Target
// naming op.
func check(op string, x, y *tensor.Tensor) (*tensor.Tensor, []float64, error) {
	v, n, m, err := validate.Matrix(op, x)
	if err != nil {
		return nil, nil, err
	}
	yv, err := validate.Target(op, y, n)
	if err != nil {
		return nil, nil, err
	}
	return tensor.FromFloat64s(v, n, m), yv, nil
}
