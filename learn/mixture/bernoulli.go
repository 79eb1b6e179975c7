package mixture

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// BernoulliMixture is Σₖ πₖ Πⱼ μₖⱼ^{xⱼ}(1 − μₖⱼ)^{1−xⱼ} over binary vectors
// (Bishop 2006, Pattern Recognition and Machine Learning, §9.3.3), such as
// binarised digits.
type BernoulliMixture struct {
	Weights       []float64      // πₖ
	Means         *tensor.Tensor // (K, d), each in [ε, 1 − ε]
	LogLikelihood float64        // mean log p(x) per row
	Trace         []float64      // after each iteration; never decreasing
	Iterations    int
}

// BernoulliMixtureOptions configures FitBernoulliMixture. Zero fields take
// the defaults given.
type BernoulliMixtureOptions struct {
	K       int     // number of components (required, 1 ≤ K ≤ n)
	MaxIter int     // EM iterations (default 200)
	Tol     float64 // stop when the mean log-likelihood per row rises by less (default 1e-6)
	Seed    uint64  // seed of the random starting responsibilities (default 0)
}

// FitBernoulliMixture fits opts.K components to the rows of x (n, d),
// values in [0, 1] (fractions act as soft counts), by EM from
// responsibilities drawn at random (seeded): the E-step's
// log p(x | k) = Σⱼ xⱼ log μₖⱼ + (1 − xⱼ) log(1 − μₖⱼ), the M-step's
// μₖ = Σᵢ rᵢₖxᵢ / Σᵢ rᵢₖ clamped to [1e-6, 1 − 1e-6] so no log is infinite.
// It stops when the mean log-likelihood gains less than Tol.
//
// It returns an error naming the fit for bad data (not a matrix, zero
// columns, a value outside [0, 1] or NaN, fewer rows than components) or
// negative options. After MaxIter iterations without meeting Tol the
// mixture comes back with a *tensor.NotConvergedError; when ctx is
// cancelled, the fit stops after the current iteration (the first always
// runs) and the mixture so far comes back with an error wrapping
// ctx.Err().
func FitBernoulliMixture(ctx context.Context, x *tensor.Tensor, opts BernoulliMixtureOptions) (*BernoulliMixture, error) {
	const op = "mixture.FitBernoulliMixture"
	x, err := checkData(op, x)
	if err != nil {
		return nil, err
	}
	n, d := x.Shape()[0], x.Shape()[1]
	k := opts.K
	if k < 1 || k > n {
		return nil, fmt.Errorf("%s: K = %d components for %d rows", op, k, n)
	}
	if opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("%s: MaxIter = %d and Tol = %v must not be negative", op, opts.MaxIter, opts.Tol)
	}
	maxIter, tol := opts.MaxIter, opts.Tol
	if maxIter == 0 {
		maxIter = 200
	}
	if tol == 0 {
		tol = 1e-6
	}
	xv := x.Float64s()
	for i, v := range xv {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("%s: row %d, column %d is %v, not in [0, 1]", op, i/d, i%d, v)
		}
	}
	rng := tensor.NewRNG(opts.Seed)
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
	logMu, log1m := make([]float64, k*d), make([]float64, k*d)
	logp := make([]float64, k)
	prev := math.Inf(-1)
	converged, change := false, math.Inf(1)
	const eps = 1e-6
	for it := 1; it <= maxIter; it++ {
		if it > 1 && ctx.Err() != nil {
			break
		}
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
		// E-step and log-likelihood, with the K·d logarithms taken once.
		for e, p := range mu {
			logMu[e], log1m[e] = math.Log(p), math.Log(1-p)
		}
		total := 0.0
		for i := range n {
			top := math.Inf(-1)
			for j := range k {
				l := math.Log(math.Max(m.Weights[j], 1e-300))
				for f := range d {
					v := xv[i*d+f]
					l += v*logMu[j*d+f] + (1-v)*log1m[j*d+f]
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
		change = m.LogLikelihood - prev
		if change < tol {
			converged = true
			break
		}
		prev = m.LogLikelihood
	}
	m.Means = tensor.FromFloat64s(mu, k, d)
	switch {
	case ctx.Err() != nil:
		return m, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	case !converged:
		return m, &tensor.NotConvergedError{Op: op, Iterations: m.Iterations, Change: change, Tol: tol}
	}
	return m, nil
}

// jointLogProb returns log πₖ + log p(xᵢ | k) as an (n, K) matrix for the
// rows of x, checked for op.
func (m *BernoulliMixture) jointLogProb(op string, x *tensor.Tensor) *tensor.Tensor {
	k, d := m.Means.Shape()[0], m.Means.Shape()[1]
	if x == nil {
		tensor.Fail(op, "nil data")
	}
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want an (m, %d) matrix, got shape %s", d, tensor.FormatShape(x.Shape()))
	}
	n := x.Shape()[0]
	xv, mu := x.Cast(tensor.Float64).Contiguous().Float64s(), m.Means.Float64s()
	logMu, log1m := make([]float64, k*d), make([]float64, k*d)
	for e, p := range mu {
		logMu[e], log1m[e] = math.Log(p), math.Log(1-p)
	}
	out := make([]float64, n*k)
	for i := range n {
		for j := range k {
			l := math.Log(math.Max(m.Weights[j], 1e-300))
			for f := range d {
				v := xv[i*d+f]
				l += v*logMu[j*d+f] + (1-v)*log1m[j*d+f]
			}
			out[i*k+j] = l
		}
	}
	return tensor.FromFloat64s(out, n, k)
}

// LogProb returns log p(xᵢ) under the mixture for the rows of x (m, d) as
// an (m) tensor. It panics with a *tensor.Error when x is not an (m, d)
// matrix.
func (m *BernoulliMixture) LogProb(x *tensor.Tensor) *tensor.Tensor {
	return tensor.LogSumExp(m.jointLogProb("mixture.BernoulliMixture.LogProb", x), []int{1}, false)
}

// PredictProba returns the responsibilities p(k | xᵢ), an (m, K) matrix
// whose rows sum to 1. It panics as LogProb does.
func (m *BernoulliMixture) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Softmax(m.jointLogProb("mixture.BernoulliMixture.PredictProba", x), 1)
}

// Predict returns the most probable component of each row of x. It panics
// as LogProb does.
func (m *BernoulliMixture) Predict(x *tensor.Tensor) []int {
	return tensor.ArgMax(m.jointLogProb("mixture.BernoulliMixture.Predict", x), 1)
}
