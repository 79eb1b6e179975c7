package mixture

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// BernoulliMixture is Σₖ πₖ Πⱼ μₖⱼ^{xⱼ}(1 − μₖⱼ)^{1−xⱼ} over binary vectors
// (seed 001 §8.2.3), such as binarised digits.
type BernoulliMixture struct {
	Weights       []float64
	Means         *tensor.Tensor // (K, d), each in [ε, 1 − ε]
	LogLikelihood float64        // mean log p(x) per row
	Trace         []float64      // after each iteration; never decreasing
	Iterations    int
	Converged     bool
}

// FitBernoulliMixture fits K components to the rows of x (n, d), values in
// [0, 1] (fractions act as soft counts), by EM from responsibilities drawn
// at random (seeded): the E-step's log p(x | k) = Σⱼ xⱼ log μₖⱼ +
// (1 − xⱼ) log(1 − μₖⱼ), the M-step's μₖ = Σᵢ rᵢₖxᵢ / Σᵢ rᵢₖ clamped to
// [1e-6, 1 − 1e-6] so no log is infinite. It stops when the mean
// log-likelihood gains less than tol (default 1e-6) or after maxIter
// iterations (default 200).
func FitBernoulliMixture(x *tensor.Tensor, k int, maxIter int, tol float64, seed uint64) (*BernoulliMixture, error) {
	const op = "mixture.FitBernoulliMixture"
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("%s: data must be a non-empty (n, d) matrix, got %v", op, x)
	}
	n, d := x.Shape()[0], x.Shape()[1]
	if k < 1 || k > n {
		return nil, fmt.Errorf("%s: K = %d components for %d rows", op, k, n)
	}
	if maxIter <= 0 {
		maxIter = 200
	}
	if tol <= 0 {
		tol = 1e-6
	}
	xv := x.Cast(tensor.Float64).Contiguous().Values()
	for i, v := range xv {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("%s: row %d, column %d is %v, not in [0, 1]", op, i/d, i%d, v)
		}
	}
	rng := tensor.NewRNG(seed)
	resp := make([]float64, n*k)
	for i := range n {
		s := 0.0
		for j := range k {
			resp[i*k+j] = 0.5 + rng.Float64()
			s += resp[i*k+j]
		}
		for j := range k {
			resp[i*k+j] /= s
		}
	}
	m := &BernoulliMixture{}
	mu := make([]float64, k*d)
	logp := make([]float64, k)
	prev := math.Inf(-1)
	const eps = 1e-6
	for it := 1; it <= maxIter; it++ {
		// M-step.
		m.Weights = make([]float64, k)
		clear(mu)
		for i := range n {
			for j := range k {
				r := resp[i*k+j]
				m.Weights[j] += r
				for f := range d {
					mu[j*d+f] += r * xv[i*d+f]
				}
			}
		}
		for j := range k {
			for f := range d {
				mu[j*d+f] = math.Min(math.Max(mu[j*d+f]/math.Max(m.Weights[j], 1e-300), eps), 1-eps)
			}
			m.Weights[j] /= float64(n)
		}
		// E-step and log-likelihood.
		total := 0.0
		for i := range n {
			top := math.Inf(-1)
			for j := range k {
				l := math.Log(math.Max(m.Weights[j], 1e-300))
				for f := range d {
					v := xv[i*d+f]
					l += v*math.Log(mu[j*d+f]) + (1-v)*math.Log(1-mu[j*d+f])
				}
				logp[j] = l
				top = math.Max(top, l)
			}
			s := 0.0
			for j := range k {
				s += math.Exp(logp[j] - top)
			}
			lse := top + math.Log(s)
			total += lse
			for j := range k {
				resp[i*k+j] = math.Exp(logp[j] - lse)
			}
		}
		m.LogLikelihood = total / float64(n)
		m.Trace = append(m.Trace, m.LogLikelihood)
		m.Iterations = it
		if m.LogLikelihood-prev < tol {
			m.Converged = true
			break
		}
		prev = m.LogLikelihood
	}
	m.Means = tensor.FromFloat64s(mu, k, d)
	return m, nil
}
