package inference

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// NIW is a Normal-inverse-Wishart prior on a Gaussian's mean and
// covariance: Σ ~ IW(Psi, Nu), μ | Σ ~ N(Mu, Σ/Kappa).
type NIW struct {
	Mu    []float64
	Kappa float64
	Nu    float64   // > d − 1
	Psi   []float64 // d×d, row-major, positive definite
}

// DPMixtureResult is the output of the collapsed Gibbs sampler.
type DPMixtureResult struct {
	Labels [][]int // the cluster of every row after each kept sweep
	K      []int   // the number of clusters after each kept sweep
}

// DPMixtureOptions configures DPMixtureGibbs.
type DPMixtureOptions struct {
	// Alpha is the concentration α > 0 of the Dirichlet process; 0 means 1.
	Alpha float64
	// Prior is the conjugate NIW prior of each cluster's mean and
	// covariance, of the data's width (required: its zero value is
	// rejected).
	Prior NIW
	Burn  int // sweeps run and discarded first; 0 means none
	Keep  int // sweeps kept after the burn-in; 0 means 100
	Seed  uint64
}

// DPMixtureGibbs samples the partition of the rows of x (n, d) under a
// Dirichlet-process mixture of Gaussians with concentration α and the
// conjugate prior, by collapsed Gibbs sampling over the Chinese-restaurant
// representation (Neal 2000, "Markov chain sampling methods for Dirichlet
// process mixture models", algorithm 3): each row in turn leaves its
// cluster and joins cluster c with probability ∝ n_c·p(x | the cluster's
// other rows), or a new cluster ∝ α·p(x | prior), where p is the NIW
// posterior predictive, a Student t. The means and covariances are
// integrated out (Rao-Blackwellised). It runs Burn+Keep sweeps and returns
// the last Keep. It checks ctx before every sweep: when ctx is cancelled
// it returns the sweeps kept so far with ctx.Err() wrapped.
func DPMixtureGibbs(ctx context.Context, x *tensor.Tensor, opts DPMixtureOptions) (*DPMixtureResult, error) {
	const op = "inference.DPMixtureGibbs"
	alpha, prior, burn, keep := opts.Alpha, opts.Prior, opts.Burn, opts.Keep
	if alpha == 0 {
		alpha = 1
	}
	if keep == 0 {
		keep = 100
	}
	if burn < 0 || keep < 0 {
		return nil, fmt.Errorf("%s: Burn = %d and Keep = %d must not be negative", op, burn, keep)
	}
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("%s: data must be a non-empty (n, d) matrix, got %v", op, x)
	}
	n, d := x.Shape()[0], x.Shape()[1]
	if !(alpha > 0) || len(prior.Mu) != d || len(prior.Psi) != d*d || !(prior.Kappa > 0) || !(prior.Nu > float64(d)-1) {
		return nil, fmt.Errorf("%s: need α > 0, Kappa > 0, Nu > d − 1 and Mu (%d), Psi (%d×%d) of the data's width", op, d, d, d)
	}
	if _, ok := cholesky(prior.Psi, d); !ok {
		return nil, fmt.Errorf("%s: Psi is not positive definite", op)
	}
	xv := x.Cast(tensor.Float64).Contiguous().Values()
	for i, v := range xv {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: x[%d, %d] = %v is not finite", op, i/d, i%d, v)
		}
	}
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = xv[i*d : (i+1)*d]
	}
	rng := tensor.NewRNG(opts.Seed)
	labels := make([]int, n) // start with everything in one cluster
	var clusters []*suffStats
	clusters = append(clusters, newSuffStats(d))
	for _, r := range rows {
		clusters[0].add(r, 1)
	}
	res := &DPMixtureResult{}
	logw := []float64{}
	for sweep := 0; sweep < burn+keep; sweep++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("%s: stopped after %d sweeps: %w", op, sweep, err)
		}
		for i, r := range rows {
			c := labels[i]
			clusters[c].add(r, -1)
			if clusters[c].n == 0 { // drop the empty cluster, renumbering the last into its place
				last := len(clusters) - 1
				clusters[c] = clusters[last]
				clusters = clusters[:last]
				for j := range labels {
					if labels[j] == last {
						labels[j] = c
					}
				}
			}
			logw = logw[:0]
			for _, s := range clusters {
				logw = append(logw, math.Log(float64(s.n))+predictive(r, s, prior))
			}
			logw = append(logw, math.Log(alpha)+predictive(r, newSuffStats(d), prior))
			k := sampleLog(logw, rng)
			if k == len(clusters) {
				clusters = append(clusters, newSuffStats(d))
			}
			clusters[k].add(r, 1)
			labels[i] = k
		}
		if sweep >= burn {
			res.Labels = append(res.Labels, append([]int(nil), labels...))
			res.K = append(res.K, len(clusters))
		}
	}
	return res, nil
}

// suffStats are a cluster's count, sum and sum of outer products.
type suffStats struct {
	n     int
	sum   []float64
	outer []float64
}

func newSuffStats(d int) *suffStats {
	return &suffStats{sum: make([]float64, d), outer: make([]float64, d*d)}
}

func (s *suffStats) add(x []float64, sign float64) {
	d := len(x)
	s.n += int(sign)
	for a := range d {
		s.sum[a] += sign * x[a]
		for b := range d {
			s.outer[a*d+b] += sign * x[a] * x[b]
		}
	}
}

// predictive is log p(x | the cluster's rows) under the NIW posterior: a
// Student t with ν = ν_n − d + 1 degrees of freedom, location μ_n and scale
// Ψ_n(κ_n + 1)/(κ_n·ν).
func predictive(x []float64, s *suffStats, p NIW) float64 {
	d := len(x)
	nf := float64(s.n)
	kn, vn := p.Kappa+nf, p.Nu+nf
	mun := make([]float64, d)
	for a := range d {
		mun[a] = (p.Kappa*p.Mu[a] + s.sum[a]) / kn
	}
	// Ψ_n = Ψ + Σxxᵀ + κμμᵀ − κ_n μ_n μ_nᵀ (the scatter and the prior's pull in one).
	psi := make([]float64, d*d)
	for a := range d {
		for b := range d {
			psi[a*d+b] = p.Psi[a*d+b] + s.outer[a*d+b] + p.Kappa*p.Mu[a]*p.Mu[b] - kn*mun[a]*mun[b]
		}
	}
	nu := vn - float64(d) + 1
	scale := (kn + 1) / (kn * nu)
	for i := range psi {
		psi[i] *= scale
	}
	return studentT(x, mun, psi, nu)
}

// studentT is the log density of the d-variate Student t with nu degrees
// of freedom, location mu and scale matrix sigma.
func studentT(x, mu, sigma []float64, nu float64) float64 {
	d := len(x)
	l, ok := cholesky(sigma, d)
	if !ok {
		return math.Inf(-1)
	}
	z := make([]float64, d)
	maha, logdet := 0.0, 0.0
	for a := range d {
		v := x[a] - mu[a]
		for b := range a {
			v -= l[a*d+b] * z[b]
		}
		z[a] = v / l[a*d+a]
		maha += z[a] * z[a]
		logdet += 2 * math.Log(l[a*d+a])
	}
	lg := func(v float64) float64 { r, _ := math.Lgamma(v); return r }
	fd := float64(d)
	return lg((nu+fd)/2) - lg(nu/2) - fd/2*math.Log(nu*math.Pi) - logdet/2 - (nu+fd)/2*math.Log1p(maha/nu)
}

// cholesky returns the lower factor of the d×d matrix a, or false when a
// is not positive definite.
func cholesky(a []float64, d int) ([]float64, bool) {
	l := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			s := a[i*d+j]
			for k := range j {
				s -= l[i*d+k] * l[j*d+k]
			}
			if i == j {
				if !(s > 0) {
					return nil, false
				}
				l[i*d+i] = math.Sqrt(s)
			} else {
				l[i*d+j] = s / l[j*d+j]
			}
		}
	}
	return l, true
}

// sampleLog draws an index with probability ∝ exp(logw[i]).
func sampleLog(logw []float64, rng *tensor.RNG) int {
	top := math.Inf(-1)
	for _, v := range logw {
		top = math.Max(top, v)
	}
	total := 0.0
	for _, v := range logw {
		total += math.Exp(v - top)
	}
	u := rng.Float64() * total
	for i, v := range logw {
		if u -= math.Exp(v - top); u < 0 {
			return i
		}
	}
	return len(logw) - 1
}
