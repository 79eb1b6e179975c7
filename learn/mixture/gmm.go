// Package mixture fits mixture models. Gaussian mixtures by
// expectation-maximisation (FitGaussianMixture; Dempster, Laird and Rubin
// 1977, "Maximum likelihood from incomplete data via the EM algorithm";
// Bishop 2006, Pattern Recognition and Machine Learning, §9.2) from a
// k-means start, with full, diagonal, spherical or tied covariances, or by
// MAP-EM under a conjugate Prior for any of them, and by gradient on the
// mixture's log-likelihood as a graph (FitGaussianMixtureGradient), which
// reaches the same optimum. Bernoulli mixtures of binary vectors by EM
// (FitBernoulliMixture).
//
//	m, err := mixture.FitGaussianMixture(ctx, x, mixture.GaussianMixtureOptions{K: 3, Seed: 1})
//	fmt.Println(m.LogLikelihood, m.Weights) // mean log p(x) per row
//	resp := m.PredictProba(x)             // (n, K) posterior of each component
//
// Every EM fit takes a context: when it is cancelled, the fit stops after
// the current iteration and returns its model so far with an error
// wrapping ctx.Err(). A fit that uses MaxIter iterations without meeting
// Tol returns its model with a *tensor.NotConvergedError.
package mixture

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/tensor"
)

// CovarianceType is the form of the components' covariance matrices.
type CovarianceType int

const (
	// Full covariance matrices (d × d each).
	Full CovarianceType = iota
	// Diagonal covariance matrices (axis-aligned components).
	Diagonal
	// Spherical covariances σₖ²I, one variance per component.
	Spherical
	// Tied: one full covariance matrix shared by every component.
	Tied
)

// GaussianMixtureOptions configures FitGaussianMixture. Zero fields take
// scikit-learn's defaults.
type GaussianMixtureOptions struct {
	K          int            // number of components (required, 1 ≤ K ≤ n)
	Covariance CovarianceType // Full (default), Diagonal, Spherical or Tied
	MaxIter    int            // EM iterations per start (default 100)
	Tol        float64        // stop when the mean log-likelihood per row rises by less (default 1e-3)
	RegCovar   float64        // added to every variance, keeping covariances positive definite (default 1e-6)
	Restarts   int            // EM runs from k-means starts with different seeds, the best kept (default 1)
	Seed       uint64         // seed of the k-means starts (default 0)
	// InitMeans, when set, holds the initial means (K, d): EM starts from
	// them with identity covariances and equal weights (one run, no
	// k-means).
	InitMeans *tensor.Tensor
	// Prior, when set, makes the fit MAP-EM under a Dirichlet and
	// Normal-inverse-Wishart prior, or for Diagonal and Spherical
	// covariances the normal-inverse-gamma priors derived from it (see
	// Prior); RegCovar is then unused, the prior's Scale keeping
	// covariances positive definite.
	Prior *Prior
}

// GaussianMixture is a fitted mixture Σₖ πₖ N(μₖ, Σₖ).
type GaussianMixture struct {
	Weights     []float64      // πₖ
	Means       *tensor.Tensor // (K, d)
	Covariances *tensor.Tensor // (K, d, d), as full matrices whatever the type
	// LogLikelihood is the mean over the training rows of log p(x) at the
	// returned parameters; Trace holds it after each EM iteration of the
	// kept run (it never decreases). With a Prior, Trace holds the mean
	// log posterior LogLikelihood + LogPrior/n instead, which MAP-EM
	// never decreases, and convergence is judged on it.
	LogLikelihood float64
	// LogPrior is log p(π, μ, Σ) up to a constant under Options.Prior (0
	// without one).
	LogPrior   float64
	Trace      []float64
	Iterations int // EM iterations of the kept run
	covariance CovarianceType
	chol       *tensor.Tensor // Cholesky factors of Covariances, (K, d, d)
	converged  bool
	change     float64 // the last rise of the monitored quantity
}

// FitGaussianMixture fits a K-component mixture to the rows of x (n, d) by
// EM: responsibilities from the k-means labels (cluster.FitKMeans, one
// restart per EM start), then alternating E-steps (posterior
// responsibilities) and M-steps (weighted means and covariances, plus
// RegCovar on the diagonal) until the mean log-likelihood gains less than
// Tol. It returns an error naming the fit for bad data (not a matrix,
// zero columns, NaN or Inf, fewer rows than components) or bad options.
// The run with the highest final objective is kept; when that run used
// MaxIter iterations without meeting Tol it comes back with a
// *tensor.NotConvergedError. When ctx is cancelled the current run stops
// after its current iteration (the first always runs, so the model has
// parameters) and the best model so far comes back with an error wrapping
// ctx.Err().
func FitGaussianMixture(ctx context.Context, x *tensor.Tensor, opts GaussianMixtureOptions) (*GaussianMixture, error) {
	const op = "mixture.FitGaussianMixture"
	x, err := checkData(op, x)
	if err != nil {
		return nil, err
	}
	n, d := x.Shape()[0], x.Shape()[1]
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("%s: K = %d components for %d rows", op, opts.K, n)
	}
	if opts.MaxIter < 0 || opts.Restarts < 0 || !(opts.Tol >= 0) || !(opts.RegCovar >= 0) {
		return nil, fmt.Errorf("%s: MaxIter = %d, Restarts = %d, Tol = %v and RegCovar = %v must not be negative", op, opts.MaxIter, opts.Restarts, opts.Tol, opts.RegCovar)
	}
	if opts.Covariance < Full || opts.Covariance > Tied {
		return nil, fmt.Errorf("%s: unknown CovarianceType %d", op, opts.Covariance)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 100
	}
	if opts.Tol == 0 {
		opts.Tol = 1e-3
	}
	if opts.RegCovar == 0 {
		opts.RegCovar = 1e-6
	}
	if opts.Restarts == 0 {
		opts.Restarts = 1
	}
	if opts.Prior != nil {
		p, err := opts.Prior.resolve(x, opts.K)
		if err != nil {
			return nil, err
		}
		opts.Prior = p
	}
	var best *GaussianMixture
	if opts.InitMeans != nil {
		if sh := opts.InitMeans.Shape(); len(sh) != 2 || sh[0] != opts.K || sh[1] != d {
			return nil, fmt.Errorf("%s: InitMeans has shape %v, want (%d, %d)", op, sh, opts.K, d)
		}
		w := make([]float64, opts.K)
		for j := range w {
			w[j] = 1 / float64(opts.K)
		}
		eye := tensor.Eye(tensor.Float64, d)
		start := &GaussianMixture{Weights: w, Means: opts.InitMeans.Cast(tensor.Float64).Contiguous(),
			Covariances: tensor.Expand(eye, opts.K, d, d).Contiguous()}
		_, resp, err := start.eStep(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if best, err = em(ctx, x, resp, opts); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	} else {
		for r := range opts.Restarts {
			km, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: opts.K, Restarts: 1, Seed: opts.Seed + uint64(r)})
			if km == nil || (err != nil && !errors.Is(err, tensor.ErrNotConverged) && ctx.Err() == nil) {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			resp := make([]float64, n*opts.K)
			for i, l := range km.Labels {
				resp[i*opts.K+l] = 1
			}
			m, err := em(ctx, x, tensor.FromFloat64s(resp, n, opts.K), opts)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", op, err)
			}
			if best == nil || m.Trace[len(m.Trace)-1] > best.Trace[len(best.Trace)-1] {
				best = m
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return best, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	case !best.converged:
		return best, &tensor.NotConvergedError{Op: op, Iterations: best.Iterations, Change: best.change, Tol: opts.Tol}
	}
	return best, nil
}

// checkData returns x as a contiguous float64 (n, d) matrix, or
// validate.Matrix's error naming op (nil, not a non-empty matrix with
// columns, or a value that is not finite).
func checkData(op string, x *tensor.Tensor) (*tensor.Tensor, error) {
	v, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	return tensor.FromFloat64s(v, n, d), nil
}

// em runs EM from the responsibilities resp until the objective gains
// less than opts.Tol, opts.MaxIter iterations or ctx is cancelled (checked
// from the second iteration on).
func em(ctx context.Context, x, resp *tensor.Tensor, opts GaussianMixtureOptions) (*GaussianMixture, error) {
	m := &GaussianMixture{covariance: opts.Covariance}
	prev := math.Inf(-1)
	for it := range opts.MaxIter {
		if it > 0 && ctx.Err() != nil {
			break
		}
		mStep(m, x, resp, opts)
		if opts.Prior != nil {
			opts.Prior.mapStep(m, x, resp, opts.Covariance)
			lp, err := opts.Prior.logPrior(m, opts.Covariance)
			if err != nil {
				return nil, err
			}
			m.LogPrior = lp
		}
		m.chol = nil
		logp, r, err := m.eStep(x)
		if err != nil {
			return nil, err
		}
		resp = r
		m.LogLikelihood = mean(logp)
		obj := m.LogLikelihood + m.LogPrior/float64(len(logp))
		m.Trace = append(m.Trace, obj)
		m.Iterations = it + 1
		m.change = obj - prev
		if obj-prev < opts.Tol {
			m.converged = true
			break
		}
		prev = obj
	}
	return m, nil
}

// mStep sets the weights, means and covariances from the
// responsibilities.
func mStep(m *GaussianMixture, x, resp *tensor.Tensor, opts GaussianMixtureOptions) {
	n, d, k := x.Shape()[0], x.Shape()[1], resp.Shape()[1]
	nk := tensor.Sum(resp, []int{0}, false).Values()
	for j := range nk {
		nk[j] += 10 * math.SmallestNonzeroFloat64 * float64(n) // an empty component keeps finite parameters
	}
	m.Weights = make([]float64, k)
	for j := range nk {
		m.Weights[j] = nk[j] / float64(n)
	}
	means := tensor.MatMulT(resp, x, true, false) // (K, d)
	mv, xv, rv := means.Float64s(), x.Float64s(), resp.Float64s()
	for j := range k {
		for f := range d {
			mv[j*d+f] /= nk[j]
		}
	}
	cov := make([]float64, k*d*d)
	for j := range k {
		c := cov[j*d*d : (j+1)*d*d]
		mu := mv[j*d : (j+1)*d]
		for i := range n {
			r := rv[i*k+j]
			if r == 0 {
				continue
			}
			row := xv[i*d : (i+1)*d]
			for a := range d {
				da := row[a] - mu[a]
				for b := 0; b <= a; b++ {
					c[a*d+b] += r * da * (row[b] - mu[b])
				}
			}
		}
		for a := range d {
			for b := 0; b <= a; b++ {
				if opts.Covariance != Tied {
					c[a*d+b] /= nk[j]
				}
				c[b*d+a] = c[a*d+b]
			}
		}
	}
	switch opts.Covariance {
	case Diagonal, Spherical:
		for j := range k {
			c := cov[j*d*d : (j+1)*d*d]
			avg := 0.0
			for a := range d {
				avg += c[a*d+a] / float64(d)
			}
			for a := range d {
				for b := range d {
					if a != b {
						c[a*d+b] = 0
					} else if opts.Covariance == Spherical {
						c[a*d+b] = avg
					}
				}
			}
		}
	case Tied:
		// Σ = Σₖ Σᵢ rᵢₖ(xᵢ − μₖ)(xᵢ − μₖ)ᵀ / n, shared.
		shared := make([]float64, d*d)
		for j := range k {
			for e := range shared {
				shared[e] += cov[j*d*d+e] / float64(n)
			}
		}
		for j := range k {
			copy(cov[j*d*d:(j+1)*d*d], shared)
		}
	}
	for j := range k {
		for a := range d {
			if opts.Prior == nil {
				cov[j*d*d+a*d+a] += opts.RegCovar
			}
		}
	}
	m.Means = means
	m.Covariances = tensor.FromFloat64s(cov, k, d, d)
}

// eStep returns log p(xᵢ) for every row and the responsibilities
// p(k | xᵢ) (n, K).
func (m *GaussianMixture) eStep(x *tensor.Tensor) ([]float64, *tensor.Tensor, error) {
	lj, err := m.jointLogProb(x)
	if err != nil {
		return nil, nil, err
	}
	n, k := x.Shape()[0], len(m.Weights)
	v := lj.Float64s()
	logp := make([]float64, n)
	for i := range n {
		row := v[i*k : (i+1)*k]
		top := math.Inf(-1)
		for _, a := range row {
			top = math.Max(top, a)
		}
		s := 0.0
		for _, a := range row {
			s += math.Exp(a - top)
		}
		logp[i] = top + math.Log(s)
		for j := range row {
			row[j] = math.Exp(row[j] - logp[i])
		}
	}
	return logp, lj, nil
}

// factor returns the Cholesky factors of the covariances, computed once.
func (m *GaussianMixture) factor() (*tensor.Tensor, error) {
	if m.chol == nil {
		l, err := tensor.Cholesky(m.Covariances)
		if err != nil {
			return nil, fmt.Errorf("mixture: a covariance is not positive definite (raise RegCovar): %w", err)
		}
		m.chol = l
	}
	return m.chol, nil
}

// jointLogProb returns log πₖ + log N(xᵢ; μₖ, Σₖ) as an (n, K) matrix.
func (m *GaussianMixture) jointLogProb(x *tensor.Tensor) (*tensor.Tensor, error) {
	n, d, k := x.Shape()[0], x.Shape()[1], len(m.Weights)
	l, err := m.factor()
	if err != nil {
		return nil, err
	}
	lv, xv, mv := l.Float64s(), x.Float64s(), m.Means.Float64s()
	out := make([]float64, n*k)
	z := make([]float64, d)
	for j := range k {
		lj := lv[j*d*d : (j+1)*d*d]
		logdet := 0.0
		for a := range d {
			logdet += 2 * math.Log(lj[a*d+a])
		}
		c := math.Log(m.Weights[j]) - 0.5*(float64(d)*math.Log(2*math.Pi)+logdet)
		for i := range n {
			// Solve L z = x − μ by forward substitution; the Mahalanobis
			// distance is ‖z‖².
			maha := 0.0
			for a := range d {
				s := xv[i*d+a] - mv[j*d+a]
				for b := range a {
					s -= lj[a*d+b] * z[b]
				}
				z[a] = s / lj[a*d+a]
				maha += z[a] * z[a]
			}
			out[i*k+j] = c - 0.5*maha
		}
	}
	return tensor.FromFloat64s(out, n, k), nil
}

// NumParams returns the number of free parameters: K − 1 weights, K·d
// means and the covariances' (full: K·d(d+1)/2, diagonal: K·d, spherical:
// K, tied: d(d+1)/2).
func (m *GaussianMixture) NumParams() int {
	k, d := len(m.Weights), m.Means.Shape()[1]
	p := k - 1 + k*d
	switch m.covariance {
	case Full:
		p += k * d * (d + 1) / 2
	case Diagonal:
		p += k * d
	case Spherical:
		p += k
	case Tied:
		p += d * (d + 1) / 2
	}
	return p
}

// BIC returns −2·log L + p·log n for the n rows of x (lower is better).
// It panics as LogProb does.
func (m *GaussianMixture) BIC(x *tensor.Tensor) float64 {
	ll, n := m.totalLogLik("mixture.GaussianMixture.BIC", x)
	return -2*ll + float64(m.NumParams())*math.Log(float64(n))
}

// AIC returns −2·log L + 2p for the rows of x. It panics as LogProb does.
func (m *GaussianMixture) AIC(x *tensor.Tensor) float64 {
	ll, _ := m.totalLogLik("mixture.GaussianMixture.AIC", x)
	return -2*ll + 2*float64(m.NumParams())
}

func (m *GaussianMixture) totalLogLik(op string, x *tensor.Tensor) (float64, int) {
	logp, _ := m.predict(op, x)
	s := 0.0
	for _, v := range logp {
		s += v
	}
	return s, len(logp)
}

// PredictProba returns the responsibilities p(k | xᵢ) for the rows of x
// (m, d): an (m, K) matrix whose rows sum to 1. It panics with a
// *tensor.Error when x is not an (m, d) matrix, or when the mixture was
// not made by a fit and a covariance is not positive definite.
func (m *GaussianMixture) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	_, r := m.predict("mixture.GaussianMixture.PredictProba", x)
	return r
}

// LogProb returns log p(xᵢ) under the mixture for the rows of x (m, d) as
// an (m) tensor. It panics as PredictProba does.
func (m *GaussianMixture) LogProb(x *tensor.Tensor) *tensor.Tensor {
	logp, _ := m.predict("mixture.GaussianMixture.LogProb", x)
	return tensor.FromFloat64s(logp, len(logp))
}

// Predict returns the most probable component of each row of x (m, d).
// It panics as PredictProba does.
func (m *GaussianMixture) Predict(x *tensor.Tensor) []int {
	_, r := m.predict("mixture.GaussianMixture.Predict", x)
	return tensor.ArgMax(r, 1)
}

// predict checks x for op and runs the E-step on it.
func (m *GaussianMixture) predict(op string, x *tensor.Tensor) ([]float64, *tensor.Tensor) {
	d := m.Means.Shape()[1]
	if x == nil {
		tensor.Fail(op, "nil data")
	}
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want an (m, %d) matrix, got shape %s", d, tensor.FormatShape(x.Shape()))
	}
	logp, r, err := m.eStep(x.Cast(tensor.Float64).Contiguous())
	if err != nil {
		tensor.Fail(op, "%v", err)
	}
	return logp, r
}

func mean(v []float64) float64 {
	s := 0.0
	for _, a := range v {
		s += a
	}
	return s / float64(len(v))
}
