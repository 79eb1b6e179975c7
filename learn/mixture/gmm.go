// Package mixture fits Gaussian mixture models: by expectation-maximisation
// (FitGaussianMixture; seed 000 §9.4) from a k-means start, with full,
// diagonal, spherical or tied covariances, or by MAP-EM under a conjugate
// Prior for any of them, and by gradient on the mixture's log-likelihood as
// a graph (FitGaussianMixtureGradient), which reaches the same optimum.
//
//	m, err := mixture.FitGaussianMixture(x, mixture.Options{K: 3, Seed: 1})
//	fmt.Println(m.LogLikelihood, m.Weights)     // mean log p(x) per row
//	resp := m.Responsibilities(x)             // (n, K) posterior of each component
package mixture

import (
	"fmt"
	"math"

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

// Options configures FitGaussianMixture. Zero fields take scikit-learn's
// defaults.
type Options struct {
	K          int            // number of components (required)
	Covariance CovarianceType // Full (default), Diagonal, Spherical or Tied
	MaxIter    int            // EM iterations per start (default 100)
	Tol        float64        // stop when the mean log-likelihood per row rises by less (default 1e-3)
	RegCovar   float64        // added to every variance, keeping covariances positive definite (default 1e-6)
	Restarts   int            // EM runs from k-means starts with different seeds, the best kept (default 1)
	Seed       uint64
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
	Iterations int
	Converged  bool
	covariance CovarianceType
}

// FitGaussianMixture fits a K-component mixture to the rows of x (n, d) by
// EM: responsibilities from the k-means labels (cluster.KMeans, one
// restart per EM start), then alternating E-steps (posterior
// responsibilities) and M-steps (weighted means and covariances, plus
// RegCovar on the diagonal) until the mean log-likelihood gains less than
// Tol. It returns an error for bad data or options.
func FitGaussianMixture(x *tensor.Tensor, opts Options) (*GaussianMixture, error) {
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("mixture.FitGaussianMixture: data must be a non-empty (n, d) matrix, got %v", x)
	}
	x = x.Cast(tensor.Float64).Contiguous()
	n := x.Shape()[0]
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("mixture.FitGaussianMixture: K = %d components for %d rows", opts.K, n)
	}
	if opts.MaxIter <= 0 {
		opts.MaxIter = 100
	}
	if opts.Tol <= 0 {
		opts.Tol = 1e-3
	}
	if opts.RegCovar <= 0 {
		opts.RegCovar = 1e-6
	}
	if opts.Restarts <= 0 {
		opts.Restarts = 1
	}
	if opts.Prior != nil {
		p, err := opts.Prior.resolve(x, opts.K)
		if err != nil {
			return nil, err
		}
		opts.Prior = p
	}
	if opts.InitMeans != nil {
		d := x.Shape()[1]
		if sh := opts.InitMeans.Shape(); len(sh) != 2 || sh[0] != opts.K || sh[1] != d {
			return nil, fmt.Errorf("mixture.FitGaussianMixture: InitMeans has shape %v, want (%d, %d)", sh, opts.K, d)
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
			return nil, fmt.Errorf("mixture.FitGaussianMixture: %w", err)
		}
		return em(x, resp, opts)
	}
	var best *GaussianMixture
	for r := range opts.Restarts {
		km, err := cluster.KMeans(x, cluster.KMeansOptions{K: opts.K, Restarts: 1, Seed: opts.Seed + uint64(r)})
		if err != nil {
			return nil, fmt.Errorf("mixture.FitGaussianMixture: %w", err)
		}
		resp := make([]float64, n*opts.K)
		for i, l := range km.Labels {
			resp[i*opts.K+l] = 1
		}
		m, err := em(x, tensor.FromFloat64s(resp, n, opts.K), opts)
		if err != nil {
			return nil, err
		}
		if best == nil || m.Trace[len(m.Trace)-1] > best.Trace[len(best.Trace)-1] {
			best = m
		}
	}
	return best, nil
}

func em(x, resp *tensor.Tensor, opts Options) (*GaussianMixture, error) {
	m := &GaussianMixture{covariance: opts.Covariance}
	prev := math.Inf(-1)
	for it := range opts.MaxIter {
		mStep(m, x, resp, opts)
		if opts.Prior != nil {
			opts.Prior.mapStep(m, x, resp, opts.Covariance)
			lp, err := opts.Prior.logPrior(m, opts.Covariance)
			if err != nil {
				return nil, err
			}
			m.LogPrior = lp
		}
		logp, r, err := m.eStep(x)
		if err != nil {
			return nil, err
		}
		resp = r
		m.LogLikelihood = mean(logp)
		obj := m.LogLikelihood + m.LogPrior/float64(len(logp))
		m.Trace = append(m.Trace, obj)
		m.Iterations = it + 1
		if obj-prev < opts.Tol {
			m.Converged = true
			break
		}
		prev = obj
	}
	return m, nil
}

// mStep sets the weights, means and covariances from the
// responsibilities.
func mStep(m *GaussianMixture, x, resp *tensor.Tensor, opts Options) {
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

// jointLogProb returns log πₖ + log N(xᵢ; μₖ, Σₖ) as an (n, K) matrix.
func (m *GaussianMixture) jointLogProb(x *tensor.Tensor) (*tensor.Tensor, error) {
	n, d, k := x.Shape()[0], x.Shape()[1], len(m.Weights)
	l, err := tensor.Cholesky(m.Covariances)
	if err != nil {
		return nil, fmt.Errorf("mixture: a covariance is not positive definite (raise RegCovar): %w", err)
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
func (m *GaussianMixture) BIC(x *tensor.Tensor) (float64, error) {
	ll, n, err := m.totalLogLik(x)
	return -2*ll + float64(m.NumParams())*math.Log(float64(n)), err
}

// AIC returns −2·log L + 2p for the rows of x.
func (m *GaussianMixture) AIC(x *tensor.Tensor) (float64, error) {
	ll, _, err := m.totalLogLik(x)
	return -2*ll + 2*float64(m.NumParams()), err
}

func (m *GaussianMixture) totalLogLik(x *tensor.Tensor) (float64, int, error) {
	lp, err := m.LogProb(x)
	s := 0.0
	for _, v := range lp {
		s += v
	}
	return s, len(lp), err
}

// Responsibilities returns p(k | xᵢ) for the rows of x (m, d): an (m, K)
// matrix whose rows sum to 1.
func (m *GaussianMixture) Responsibilities(x *tensor.Tensor) (*tensor.Tensor, error) {
	_, r, err := m.eStep(m.check("mixture.Responsibilities", x))
	return r, err
}

// LogProb returns log p(xᵢ) under the mixture for the rows of x.
func (m *GaussianMixture) LogProb(x *tensor.Tensor) ([]float64, error) {
	logp, _, err := m.eStep(m.check("mixture.LogProb", x))
	return logp, err
}

// Predict returns the most probable component of each row of x.
func (m *GaussianMixture) Predict(x *tensor.Tensor) ([]int, error) {
	r, err := m.Responsibilities(x)
	if err != nil {
		return nil, err
	}
	k := len(m.Weights)
	v := r.Float64s()
	out := make([]int, x.Shape()[0])
	for i := range out {
		for j := range k {
			if v[i*k+j] > v[i*k+out[i]] {
				out[i] = j
			}
		}
	}
	return out, nil
}

func (m *GaussianMixture) check(op string, x *tensor.Tensor) *tensor.Tensor {
	d := m.Means.Shape()[1]
	if x == nil || x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want an (m, %d) matrix, got %v", d, x)
	}
	return x.Cast(tensor.Float64).Contiguous()
}

func mean(v []float64) float64 {
	s := 0.0
	for _, a := range v {
		s += a
	}
	return s / float64(len(v))
}
