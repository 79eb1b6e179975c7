package mixture

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Prior is a conjugate prior for MAP-EM of a Gaussian mixture with full
// covariances (seed 001 §8.1.4): a symmetric Dirichlet(Alpha) on the
// weights and, for every component, a Normal-inverse-Wishart
// Σₖ ~ IW(Scale, Nu), μₖ | Σₖ ~ N(Mean, Σₖ/Kappa). The M-step becomes,
// with Nₖ = Σᵢ rᵢₖ, x̄ₖ the weighted mean and Sₖ = Σᵢ rᵢₖ(xᵢ − x̄ₖ)(xᵢ − x̄ₖ)ᵀ,
//
//	πₖ = (Nₖ + α − 1) / (n + Kα − K)
//	μₖ = (Nₖ x̄ₖ + κ₀ m₀) / (Nₖ + κ₀)
//	Σₖ = (Ψ₀ + Sₖ + κ₀Nₖ/(κ₀ + Nₖ)(x̄ₖ − m₀)(x̄ₖ − m₀)ᵀ) / (ν₀ + Nₖ + d + 2)
//
// (d + 1 in the last denominator when Kappa = 0, the flat prior on means).
// Scale plays the part of scikit-learn's reg_covar, generalised: it keeps
// every covariance positive definite, even for a component with no rows.
type Prior struct {
	Alpha float64        // Dirichlet concentration, ≥ 1 (default 1: flat on the weights)
	Mean  []float64      // m₀ (default: the data's mean)
	Kappa float64        // κ₀ ≥ 0, pseudo-counts on the means (0: flat)
	Nu    float64        // ν₀ > d − 1, pseudo-counts on the covariances (default d + 2)
	Scale *tensor.Tensor // Ψ₀ (d, d) positive definite (default diag(data variances)/K^(2/d))
}

// resolve fills the prior's defaults for the data x (n, d) and K
// components, or returns an error naming the bad field.
func (p Prior) resolve(x *tensor.Tensor, k int) (*Prior, error) {
	n, d := x.Shape()[0], x.Shape()[1]
	const op = "mixture.FitGaussianMixture"
	if p.Alpha == 0 {
		p.Alpha = 1
	}
	if p.Alpha < 1 || math.IsNaN(p.Alpha) {
		return nil, fmt.Errorf("%s: Prior.Alpha = %v, want ≥ 1 (a MAP estimate needs a mode)", op, p.Alpha)
	}
	if p.Kappa < 0 || math.IsNaN(p.Kappa) {
		return nil, fmt.Errorf("%s: Prior.Kappa = %v, want ≥ 0", op, p.Kappa)
	}
	if p.Nu == 0 {
		p.Nu = float64(d) + 2
	}
	if p.Nu <= float64(d)-1 || math.IsNaN(p.Nu) {
		return nil, fmt.Errorf("%s: Prior.Nu = %v, want > d − 1 = %d", op, p.Nu, d-1)
	}
	xv := x.Float64s()
	if p.Mean == nil {
		p.Mean = make([]float64, d)
		for i := range n {
			for f := range d {
				p.Mean[f] += xv[i*d+f] / float64(n)
			}
		}
	} else if len(p.Mean) != d {
		return nil, fmt.Errorf("%s: Prior.Mean has %d entries for %d features", op, len(p.Mean), d)
	}
	if p.Scale == nil {
		v := tensor.Variance(x, []int{0}, false, 0).Float64s()
		s := make([]float64, d*d)
		for f := range d {
			s[f*d+f] = v[f] / math.Pow(float64(k), 2/float64(d))
		}
		p.Scale = tensor.FromFloat64s(s, d, d)
	}
	if sh := p.Scale.Shape(); len(sh) != 2 || sh[0] != d || sh[1] != d {
		return nil, fmt.Errorf("%s: Prior.Scale has shape %v, want (%d, %d)", op, sh, d, d)
	}
	p.Scale = p.Scale.Cast(tensor.Float64).Contiguous()
	if _, err := tensor.Cholesky(p.Scale); err != nil {
		return nil, fmt.Errorf("%s: Prior.Scale is not positive definite: %w", op, err)
	}
	return &p, nil
}

// mapStep replaces the maximum-likelihood weights, means and covariances
// set by mStep (from the responsibilities resp) by the posterior mode.
func (p *Prior) mapStep(m *GaussianMixture, x, resp *tensor.Tensor) {
	n, d, k := x.Shape()[0], x.Shape()[1], resp.Shape()[1]
	nk := tensor.Sum(resp, []int{0}, false).Values()
	for j := range k {
		nk[j] += 10 * math.SmallestNonzeroFloat64 * float64(n) // as in mStep: an empty component stays finite
		m.Weights[j] = (nk[j] + p.Alpha - 1) / (float64(n) + float64(k)*(p.Alpha-1))
	}
	mv, cv, psi := m.Means.Float64s(), m.Covariances.Float64s(), p.Scale.Float64s()
	extra := 1.0
	if p.Kappa > 0 {
		extra = 2
	}
	diff := make([]float64, d)
	for j := range k {
		mu, c := mv[j*d:(j+1)*d], cv[j*d*d:(j+1)*d*d]
		for f := range d {
			diff[f] = mu[f] - p.Mean[f] // x̄ₖ − m₀
		}
		shrink := p.Kappa * nk[j] / (p.Kappa + nk[j])
		den := p.Nu + nk[j] + float64(d) + extra
		for a := range d {
			for b := range d {
				// mStep left Sₖ/Nₖ in c.
				c[a*d+b] = (psi[a*d+b] + c[a*d+b]*nk[j] + shrink*diff[a]*diff[b]) / den
			}
		}
		for f := range d {
			mu[f] = (nk[j]*mu[f] + p.Kappa*p.Mean[f]) / (nk[j] + p.Kappa)
		}
	}
}

// logPrior returns log p(π, μ, Σ) up to a constant: the Dirichlet's
// Σₖ (α − 1) log πₖ and, for every component, the NIW's
// −(ν₀ + d + 1 + [κ₀ > 0])/2 · log|Σₖ| − tr(Ψ₀Σₖ⁻¹)/2 − κ₀/2 (μₖ − m₀)ᵀΣₖ⁻¹(μₖ − m₀).
func (p *Prior) logPrior(m *GaussianMixture) (float64, error) {
	k, d := len(m.Weights), m.Means.Shape()[1]
	l, err := tensor.Cholesky(m.Covariances)
	if err != nil {
		return 0, fmt.Errorf("mixture: a covariance is not positive definite: %w", err)
	}
	// Σₖ⁻¹Ψ₀ and Σₖ⁻¹(μₖ − m₀) from one batched solve.
	rhs := make([]float64, k*d*(d+1))
	mv, psi := m.Means.Float64s(), p.Scale.Float64s()
	for j := range k {
		for a := range d {
			for b := range d {
				rhs[j*d*(d+1)+a*(d+1)+b] = psi[a*d+b]
			}
			rhs[j*d*(d+1)+a*(d+1)+d] = mv[j*d+a] - p.Mean[a]
		}
	}
	sol := tensor.CholeskySolve(l, tensor.FromFloat64s(rhs, k, d, d+1)).Float64s()
	lv := l.Float64s()
	s := 0.0
	expo := p.Nu + float64(d) + 1
	if p.Kappa > 0 {
		expo++
	}
	for j := range k {
		s += (p.Alpha - 1) * math.Log(m.Weights[j])
		logdet, tr, maha := 0.0, 0.0, 0.0
		for a := range d {
			logdet += 2 * math.Log(lv[j*d*d+a*d+a])
			tr += sol[j*d*(d+1)+a*(d+1)+a]
			maha += (mv[j*d+a] - p.Mean[a]) * sol[j*d*(d+1)+a*(d+1)+d]
		}
		s += -0.5*expo*logdet - 0.5*tr - 0.5*p.Kappa*maha
	}
	return s, nil
}
