// Package bayeslinear holds Bayesian linear models (Cambridge PML notes
// §2.3, §6.2, §8.2.4; Bishop 2006 §3.3-3.5, §7.2): Bayesian linear
// regression with a Gaussian prior, its exact posterior, predictive
// distribution and evidence, the evidence maximised over the prior and
// noise precisions by MacKay's fixed point (FitEvidence) or by gradient
// through the graph (FitEvidenceGradient), and the relevance vector
// machine for regression (FitRVM) and classification (FitRVC, by the
// Laplace approximation), whose per-weight precisions prune the basis to
// a sparse set.
//
//	m, err := bayeslinear.FitEvidence(phi, y, bayeslinear.Options{}) // phi (n, M) basis
//	mean, variance := m.Predict(phiNew)
//	fmt.Println(m.Alpha, m.Beta, m.LogEvidence)
package bayeslinear

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Model is the posterior of y = Φw + ε, w ~ N(0, diag(α)⁻¹), ε ~ N(0, β⁻¹I).
type Model struct {
	Alpha       []float64      // prior precision of each weight (all equal unless RVM)
	Beta        float64        // noise precision
	Mean        []float64      // posterior mean m_N of w
	Cov         *tensor.Tensor // posterior covariance S_N (M, M)
	LogEvidence float64        // log p(y | α, β)
	Iterations  int
	Converged   bool
}

// Fit returns the exact posterior and evidence for fixed precisions α (one
// value for every weight) and β, given the design matrix phi (n, M) and
// targets y (n):
//
//	S_N = (αI + βΦᵀΦ)⁻¹,  m_N = βS_NΦᵀy,
//	log p(y) = M/2·log α + n/2·log β − β/2‖y − Φm_N‖² − α/2‖m_N‖² − ½log|S_N⁻¹| − n/2·log 2π.
func Fit(phi *tensor.Tensor, y []float64, alpha, beta float64) (*Model, error) {
	p, err := check("bayeslinear.Fit", phi, y)
	if err != nil {
		return nil, err
	}
	if !(alpha > 0) || !(beta > 0) || math.IsInf(alpha, 0) || math.IsInf(beta, 0) {
		return nil, fmt.Errorf("bayeslinear.Fit: α = %v and β = %v must be positive and finite", alpha, beta)
	}
	a := make([]float64, p.Shape()[1])
	for i := range a {
		a[i] = alpha
	}
	return posterior(p, y, a, beta)
}

// posterior computes the posterior and evidence for per-weight precisions.
func posterior(phi *tensor.Tensor, y []float64, alpha []float64, beta float64) (*Model, error) {
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
	return &Model{Alpha: alpha, Beta: beta, Mean: mv, Cov: cov, LogEvidence: ev}, nil
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

// FitEvidence chooses α and β by maximising the evidence with MacKay's
// fixed-point updates (Bishop eqs. 3.92, 3.95): with λᵢ the eigenvalues
// of βΦᵀΦ, γ = Σ λᵢ/(α + λᵢ) well-determined parameters, α ← γ/‖m_N‖² and
// 1/β ← ‖y − Φm_N‖²/(n − γ).
func FitEvidence(phi *tensor.Tensor, y []float64, opts Options) (*Model, error) {
	p, err := check("bayeslinear.FitEvidence", phi, y)
	if err != nil {
		return nil, err
	}
	opts = opts.defaults(y)
	n, m := p.Shape()[0], p.Shape()[1]
	eig, _, err := tensor.Eigh(tensor.MatMulT(p, p, true, false))
	if err != nil {
		return nil, fmt.Errorf("bayeslinear.FitEvidence: %w", err)
	}
	ev := eig.Values()
	alpha, beta := opts.Alpha, opts.Beta
	var model *Model
	prev := math.Inf(-1)
	for it := 1; it <= opts.MaxIter; it++ {
		a := make([]float64, m)
		for i := range a {
			a[i] = alpha
		}
		if model, err = posterior(p, y, a, beta); err != nil {
			return nil, err
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
		for i, t := range y {
			rss += (t - pred[i]) * (t - pred[i])
		}
		if math.Abs(model.LogEvidence-prev) < opts.Tol {
			model.Converged = true
			break
		}
		prev = model.LogEvidence
		alpha = gamma / math.Max(ww, 1e-300)
		beta = (float64(n) - gamma) / math.Max(rss, 1e-300)
	}
	return model, nil
}

// Predict returns the predictive mean m_Nᵀφ(x) and variance 1/β +
// φ(x)ᵀS_Nφ(x) for the rows of phi (k, M).
func (m *Model) Predict(phi *tensor.Tensor) (mean, variance []float64) {
	d := len(m.Mean)
	if phi == nil || phi.Dim() != 2 || phi.Shape()[1] != d {
		tensor.Fail("bayeslinear.Predict", "want a (k, %d) design matrix, got %v", d, phi)
	}
	p := phi.Cast(tensor.Float64)
	mean = tensor.MatMul(p, tensor.FromFloat64s(m.Mean, d, 1)).Values()
	ps := tensor.MatMul(p, m.Cov)
	q := tensor.Sum(tensor.Mul(ps, p), []int{1}, false).Values()
	variance = make([]float64, len(q))
	for i, v := range q {
		variance[i] = 1/m.Beta + v
	}
	return mean, variance
}

func check(op string, phi *tensor.Tensor, y []float64) (*tensor.Tensor, error) {
	if phi == nil || phi.Dim() != 2 || phi.Shape()[0] == 0 || phi.Shape()[1] == 0 {
		return nil, fmt.Errorf("%s: the design matrix must be a non-empty (n, M) matrix, got %v", op, phi)
	}
	if phi.Shape()[0] != len(y) {
		return nil, fmt.Errorf("%s: %d rows but %d targets", op, phi.Shape()[0], len(y))
	}
	p := phi.Cast(tensor.Float64).Contiguous()
	for i, v := range p.Values() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: design matrix row %d, column %d is %v", op, i/p.Shape()[1], i%p.Shape()[1], v)
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: target %d is %v", op, i, v)
		}
	}
	return p, nil
}
