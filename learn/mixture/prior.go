package mixture

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Prior is a conjugate prior for MAP-EM of a Gaussian mixture (the
// M-step maximises the expected complete log-likelihood plus log p(θ);
// Fraley and Raftery 2007, "Bayesian regularization for normal mixture
// estimation and model-based clustering"), for every CovarianceType. The weights have a symmetric
// Dirichlet(Alpha) and each component's mean μₖ | Σₖ ~ N(Mean, Σₖ/Kappa)
// (flat when Kappa = 0); the covariances' prior is built from the inverse
// Wishart IW(Scale, Nu) = IW(Ψ₀, ν₀) to suit the type:
//
//	Full       Σₖ ~ IW(Ψ₀, ν₀) for each component
//	Tied       one Σ ~ IW(Ψ₀, ν₀) shared by the components
//	Diagonal   σ²ₖf ~ IG(a, Ψ₀ff/2) for each component and feature, a = (ν₀ − d + 1)/2
//	Spherical  σ²ₖ ~ IG(d·a, tr Ψ₀/2) for each component
//
// Diagonal's inverse gamma is the inverse Wishart's marginal of one
// diagonal entry, so with the normal prior on the mean each feature has a
// normal-inverse-gamma prior; Spherical's pools the d of them as the
// spherical fit pools the features (IG(a, b) counts as 2a pseudo-deviations
// whose squares sum to 2b).
//
// The M-step is the posterior mode, found by zeroing the gradient of the
// expected complete log posterior (the derivation of Murphy, Machine
// Learning: a Probabilistic Perspective, 2012, §11.4.2.8 for Full; the
// others are the same calculation with the normal-inverse-gamma of §4.6.3's
// univariate case). With Nₖ = Σᵢ rᵢₖ, x̄ₖ the weighted mean,
// Sₖ = Σᵢ rᵢₖ(xᵢ − x̄ₖ)(xᵢ − x̄ₖ)ᵀ, δₖ = x̄ₖ − m₀, cₖ = κ₀Nₖ/(κ₀ + Nₖ) and
// e = 1 if Kappa > 0 (else 0):
//
//	πₖ   = (Nₖ + α − 1) / (n + Kα − K)
//	μₖ   = (Nₖ x̄ₖ + κ₀ m₀) / (Nₖ + κ₀)
//	Σₖ   = (Ψ₀ + Sₖ + cₖ δₖδₖᵀ) / (ν₀ + Nₖ + d + 1 + e)                  Full
//	Σ    = (Ψ₀ + Σₖ (Sₖ + cₖ δₖδₖᵀ)) / (ν₀ + n + d + 1 + K·e)           Tied
//	σ²ₖf = (Ψ₀ff + Sₖff + cₖ δₖf²) / (Nₖ + ν₀ − d + 3 + e)               Diagonal
//	σ²ₖ  = (tr Ψ₀ + tr Sₖ + cₖ ‖δₖ‖²) / (d(Nₖ + ν₀ − d + 1 + e) + 2)     Spherical
//
// In one dimension the four priors and M-steps are the same (Tied's with
// K = 1, as in any dimension). Scale plays the part of scikit-learn's
// reg_covar, generalised: it keeps every covariance positive definite,
// even for a component with no rows (Diagonal uses its diagonal,
// Spherical its trace).
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
// set by mStep (from the responsibilities resp) by the posterior mode for
// the covariance type ct (formulas in Prior's doc). mStep leaves, per
// component, Sₖ/Nₖ (Full), its diagonal (Diagonal), tr Sₖ/(dNₖ) on the
// diagonal (Spherical) or Σₖ Sₖ/n in every component (Tied).
func (p *Prior) mapStep(m *GaussianMixture, x, resp *tensor.Tensor, ct CovarianceType) {
	n, d, k := x.Shape()[0], x.Shape()[1], resp.Shape()[1]
	nk := tensor.Sum(resp, []int{0}, false).Values()
	for j := range k {
		nk[j] += 10 * math.SmallestNonzeroFloat64 * float64(n) // as in mStep: an empty component stays finite
		m.Weights[j] = (nk[j] + p.Alpha - 1) / (float64(n) + float64(k)*(p.Alpha-1))
	}
	mv, cv, psi := m.Means.Float64s(), m.Covariances.Float64s(), p.Scale.Float64s()
	e := 0.0
	if p.Kappa > 0 {
		e = 1
	}
	fd := float64(d)
	diff := make([]float64, k*d) // δₖ = x̄ₖ − m₀
	shrink := make([]float64, k) // cₖ
	for j := range k {
		for f := range d {
			diff[j*d+f] = mv[j*d+f] - p.Mean[f]
		}
		shrink[j] = p.Kappa * nk[j] / (p.Kappa + nk[j])
	}
	switch ct {
	case Full:
		for j := range k {
			c, dj := cv[j*d*d:(j+1)*d*d], diff[j*d:(j+1)*d]
			den := p.Nu + nk[j] + fd + 1 + e
			for a := range d {
				for b := range d {
					c[a*d+b] = (psi[a*d+b] + c[a*d+b]*nk[j] + shrink[j]*dj[a]*dj[b]) / den
				}
			}
		}
	case Tied:
		sum := make([]float64, d*d)
		for a := range d {
			for b := range d {
				sum[a*d+b] = psi[a*d+b] + cv[a*d+b]*float64(n)
				for j := range k {
					sum[a*d+b] += shrink[j] * diff[j*d+a] * diff[j*d+b]
				}
			}
		}
		den := p.Nu + float64(n) + fd + 1 + float64(k)*e
		for j := range k {
			for i, v := range sum {
				cv[j*d*d+i] = v / den
			}
		}
	case Diagonal:
		for j := range k {
			for f := range d {
				c := &cv[j*d*d+f*d+f]
				*c = (psi[f*d+f] + *c*nk[j] + shrink[j]*diff[j*d+f]*diff[j*d+f]) / (nk[j] + p.Nu - fd + 3 + e)
			}
		}
	case Spherical:
		trPsi := 0.0
		for f := range d {
			trPsi += psi[f*d+f]
		}
		for j := range k {
			num := trPsi + cv[j*d*d]*fd*nk[j]
			for f := range d {
				num += shrink[j] * diff[j*d+f] * diff[j*d+f]
			}
			v := num / (fd*(nk[j]+p.Nu-fd+1+e) + 2)
			for f := range d {
				cv[j*d*d+f*d+f] = v
			}
		}
	}
	for j := range k {
		for f := range d {
			mv[j*d+f] = (nk[j]*mv[j*d+f] + p.Kappa*p.Mean[f]) / (nk[j] + p.Kappa)
		}
	}
}

// logPrior returns log p(π, μ, Σ) up to a constant (the normalising
// constants of the densities dropped) for the covariance type ct: the
// Dirichlet's Σₖ (α − 1) log πₖ and
//
//   - Full, per component:
//     −(ν₀ + d + 1 + e)/2 · log|Σₖ| − tr(Ψ₀Σₖ⁻¹)/2 − κ₀/2 (μₖ − m₀)ᵀΣₖ⁻¹(μₖ − m₀);
//   - Tied, once: −(ν₀ + d + 1 + Ke)/2 · log|Σ| − tr(Ψ₀Σ⁻¹)/2, and
//     −κ₀/2 (μₖ − m₀)ᵀΣ⁻¹(μₖ − m₀) per component;
//   - Diagonal, per component and feature:
//     −(ν₀ − d + 3 + e)/2 · log σ²ₖf − Ψ₀ff/(2σ²ₖf) − κ₀(μₖf − m₀f)²/(2σ²ₖf);
//   - Spherical, per component:
//     −(d(ν₀ − d + 1 + e)/2 + 1) · log σ²ₖ − tr Ψ₀/(2σ²ₖ) − κ₀‖μₖ − m₀‖²/(2σ²ₖ).
func (p *Prior) logPrior(m *GaussianMixture, ct CovarianceType) (float64, error) {
	k, d := len(m.Weights), m.Means.Shape()[1]
	fd := float64(d)
	e := 0.0
	if p.Kappa > 0 {
		e = 1
	}
	s := 0.0
	for j := range k {
		s += (p.Alpha - 1) * math.Log(m.Weights[j])
	}
	mv, cv, psi := m.Means.Float64s(), m.Covariances.Float64s(), p.Scale.Float64s()
	switch ct {
	case Diagonal:
		for j := range k {
			for f := range d {
				v, dm := cv[j*d*d+f*d+f], mv[j*d+f]-p.Mean[f]
				s += -(p.Nu-fd+3+e)/2*math.Log(v) - psi[f*d+f]/(2*v) - p.Kappa*dm*dm/(2*v)
			}
		}
		return s, nil
	case Spherical:
		trPsi := 0.0
		for f := range d {
			trPsi += psi[f*d+f]
		}
		for j := range k {
			v, maha := cv[j*d*d], 0.0
			for f := range d {
				dm := mv[j*d+f] - p.Mean[f]
				maha += dm * dm
			}
			s += -(fd*(p.Nu-fd+1+e)/2+1)*math.Log(v) - trPsi/(2*v) - p.Kappa*maha/(2*v)
		}
		return s, nil
	}
	l, err := tensor.Cholesky(m.Covariances)
	if err != nil {
		return 0, fmt.Errorf("mixture: a covariance is not positive definite: %w", err)
	}
	// Σₖ⁻¹Ψ₀ and Σₖ⁻¹(μₖ − m₀) from one batched solve.
	rhs := make([]float64, k*d*(d+1))
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
	for j := range k {
		logdet, tr, maha := 0.0, 0.0, 0.0
		for a := range d {
			logdet += 2 * math.Log(lv[j*d*d+a*d+a])
			tr += sol[j*d*(d+1)+a*(d+1)+a]
			maha += (mv[j*d+a] - p.Mean[a]) * sol[j*d*(d+1)+a*(d+1)+d]
		}
		s -= 0.5 * p.Kappa * maha
		switch {
		case ct == Full:
			s += -0.5*(p.Nu+fd+1+e)*logdet - 0.5*tr
		case j == 0: // Tied: the one shared covariance's terms
			s += -0.5*(p.Nu+fd+1+float64(k)*e)*logdet - 0.5*tr
		}
	}
	return s, nil
}
