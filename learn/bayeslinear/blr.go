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

// Options configures FitEvidence and FitRVM.
type Options struct {
	Alpha, Beta float64 // starting precisions (default 1 and 1/var(y))
	MaxIter     int     // re-estimation steps (default 1000)
	Tol         float64 // stop when the log evidence changes less (default 1e-9)
	PruneAlpha  float64 // RVM: drop weights whose α exceeds it (default 1e9)
}

func (o Options) defaults(y []float64) Options {
	if o.Alpha <= 0 {
		o.Alpha = 1
	}
	if o.Beta <= 0 {
		mean, v := 0.0, 0.0
		for _, t := range y {
			mean += t
		}
		mean /= float64(len(y))
		for _, t := range y {
			v += (t - mean) * (t - mean)
		}
		o.Beta = float64(len(y)) / math.Max(v, 1e-12)
	}
	if o.MaxIter <= 0 {
		o.MaxIter = 1000
	}
	if o.Tol <= 0 {
		o.Tol = 1e-9
	}
	if o.PruneAlpha <= 0 {
		o.PruneAlpha = 1e9
	}
	return o
}

// EvidenceOptions configures FitEvidence and FitEvidenceGradient. Zero
// fields take the defaults given.
type EvidenceOptions struct {
	Alpha   float64 // starting prior precision (default 1)
	Beta    float64 // starting noise precision (default 1/var(y))
	MaxIter int     // re-estimations, or L-BFGS iterations for FitEvidenceGradient (default 1000)
	Tol     float64 // stop when the log evidence changes less (default 1e-9)
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
// MaxIter re-estimations the model comes back with a
// *tensor.NotConvergedError, and when ctx is cancelled with an error
// wrapping ctx.Err().
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
			return model, nil
		}
		prev = model.LogEvidence
		alpha = gamma / math.Max(ww, 1e-300)
		beta = (float64(n) - gamma) / math.Max(rss, 1e-300)
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

// check returns the design matrix x as a contiguous float64 (n, M) matrix
// and the targets y as values, or an error naming op: not a matrix, zero
// columns, y not an (n) tensor, NaN or Inf.
func check(op string, x, y *tensor.Tensor) (*tensor.Tensor, []float64, error) {
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 {
		return nil, nil, fmt.Errorf("%s: the design matrix must be a non-empty (n, M) matrix, got %v", op, x)
	}
	if x.Shape()[1] == 0 {
		return nil, nil, fmt.Errorf("%s: the design matrix has zero columns", op)
	}
	if y == nil || y.Dim() != 1 {
		return nil, nil, fmt.Errorf("%s: the targets must be an (n) tensor, got %v", op, y)
	}
	if x.Shape()[0] != y.Shape()[0] {
		return nil, nil, fmt.Errorf("%s: %d rows but %d targets", op, x.Shape()[0], y.Shape()[0])
	}
	p := x.Cast(tensor.Float64).Contiguous()
	for i, v := range p.Values() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("%s: design matrix row %d, column %d is %v", op, i/p.Shape()[1], i%p.Shape()[1], v)
		}
	}
	yv := y.Cast(tensor.Float64).Contiguous().Float64s()
	for i, v := range yv {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, fmt.Errorf("%s: target %d is %v", op, i, v)
		}
	}
	return p, yv, nil
}
