package inference

import (
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// ELPD is an estimate of a model's expected log pointwise predictive
// density for new data, from WAIC or from Pareto-smoothed importance
// sampling leave-one-out cross-validation (Vehtari, Gelman and Gabry 2017,
// "Practical Bayesian model evaluation using leave-one-out
// cross-validation and WAIC"). Higher is better; −2·Estimate is the
// information criterion on the deviance scale.
type ELPD struct {
	Estimate  float64   // Σᵢ elpdᵢ
	SE        float64   // standard error of Estimate, √(N·Var(elpdᵢ))
	P         float64   // effective number of parameters (p_waic or p_loo)
	Pointwise []float64 // elpdᵢ for each observation
	// ParetoK holds PSIS-LOO's Pareto shape estimate k̂ᵢ per observation
	// (nil for WAIC): below KThreshold the importance sampling estimate of
	// observation i is reliable; above 0.7 it is not, and that
	// observation's elpdᵢ should be computed by refitting without it.
	ParetoK    []float64
	KThreshold float64 // min(1 − 1/log₁₀ S, 0.7) for S draws
}

// BadK returns the observations whose Pareto k̂ exceeds KThreshold.
func (e *ELPD) BadK() []int {
	var out []int
	for i, k := range e.ParetoK {
		if !(k <= e.KThreshold) {
			out = append(out, i)
		}
	}
	return out
}

// checkLogLik validates an (S draws, N observations) log-likelihood matrix
// and returns its columns: a wrong shape is misuse (panic), a non-finite
// entry bad data (error).
func checkLogLik(op string, logLik *tensor.Tensor) ([][]float64, error) {
	if logLik == nil || logLik.Dim() != 2 || logLik.Shape()[0] < 2 || logLik.Shape()[1] < 1 {
		tensor.Fail(op, "log-likelihood %v: want an (S draws, N observations) matrix with S ≥ 2, N ≥ 1", shapeOf(logLik))
	}
	s, n := logLik.Shape()[0], logLik.Shape()[1]
	v := logLik.Values()
	cols := make([][]float64, n)
	for i := range cols {
		cols[i] = make([]float64, s)
		for d := 0; d < s; d++ {
			x := v[d*n+i]
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s: log-likelihood of draw %d, observation %d is %g", op, d, i, x)
			}
			cols[i][d] = x
		}
	}
	return cols, nil
}

func shapeOf(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	return tensor.FormatShape(t.Shape())
}

func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// finish fills the estimate and its standard error from the pointwise
// values.
func finish(e *ELPD) *ELPD {
	for _, v := range e.Pointwise {
		e.Estimate += v
	}
	n := float64(len(e.Pointwise))
	if len(e.Pointwise) > 1 {
		e.SE = math.Sqrt(n * varianceOf(e.Pointwise, e.Estimate/n))
	}
	return e
}

// WAIC returns the widely applicable information criterion's estimate of
// the expected log predictive density (Watanabe 2010, "Asymptotic
// equivalence of Bayes cross validation and widely applicable information
// criterion in singular learning theory"), from logLik[s][i] = log p(yᵢ |
// θₛ) for S posterior draws θₛ: elpdᵢ = log (1/S)Σₛ p(yᵢ | θₛ) − Varₛ log
// p(yᵢ | θₛ). It panics with a *tensor.Error unless logLik is (S, N) with
// S ≥ 2, and returns an error for a non-finite entry.
func WAIC(logLik *tensor.Tensor) (*ELPD, error) {
	cols, err := checkLogLik("inference.WAIC", logLik)
	if err != nil {
		return nil, err
	}
	e := &ELPD{Pointwise: make([]float64, len(cols))}
	for i, c := range cols {
		lppd := logSumExp(c) - math.Log(float64(len(c)))
		p := varianceOf(c, meanOf(c))
		e.P += p
		e.Pointwise[i] = lppd - p
	}
	return finish(e), nil
}

// PSISLOO returns the leave-one-out estimate of the expected log predictive
// density by Pareto-smoothed importance sampling (Vehtari, Gelman and Gabry
// 2017; Vehtari, Simpson, Gelman, Yao and Gabry 2024, "Pareto smoothed
// importance sampling"), from logLik[s][i] = log p(yᵢ | θₛ) for S posterior
// draws: the importance ratios 1/p(yᵢ | θₛ) of each observation are smoothed
// by PSIS, and elpdᵢ = log Σₛ wₛ p(yᵢ | θₛ) / Σₛ wₛ. ParetoK reports each
// observation's k̂. The draws are treated as independent (relative
// efficiency 1); thin autocorrelated chains first. It panics and errs as
// WAIC does.
func PSISLOO(logLik *tensor.Tensor) (*ELPD, error) {
	cols, err := checkLogLik("inference.PSISLOO", logLik)
	if err != nil {
		return nil, err
	}
	s := len(cols[0])
	e := &ELPD{Pointwise: make([]float64, len(cols)), ParetoK: make([]float64, len(cols)),
		KThreshold: math.Min(1-1/math.Log10(float64(s)), 0.7)}
	lr := make([]float64, s)
	terms := make([]float64, s)
	for i, c := range cols {
		for d, v := range c {
			lr[d] = -v
		}
		lw, k := PSIS(lr)
		for d := range terms {
			terms[d] = lw[d] + c[d]
		}
		e.Pointwise[i] = logSumExp(terms) - logSumExp(lw)
		e.ParetoK[i] = k
		e.P += logSumExp(c) - math.Log(float64(s)) - e.Pointwise[i]
	}
	return finish(e), nil
}

// PSIS smooths importance log-ratios (Vehtari et al. 2024): the M =
// ⌈min(S/5, 3√S)⌉ largest ratios are replaced by the expected order
// statistics of a generalized Pareto distribution fitted to them (Zhang and
// Stephens 2009, "A new and efficient estimation method for the generalized
// Pareto distribution", with the weakly informative prior of Vehtari et
// al.), and every weight is truncated at the largest raw one. It returns
// the smoothed (unnormalised) log-weights and the Pareto shape k̂ (+Inf
// when the tail has fewer than 5 draws or is flat, in which case the
// weights are only truncated). It panics if logRatios has fewer than 2
// entries.
func PSIS(logRatios []float64) (logWeights []float64, k float64) {
	s := len(logRatios)
	if s < 2 {
		tensor.Fail("inference.PSIS", "%d log-ratios: want at least 2", s)
	}
	maxLR := math.Inf(-1)
	for _, v := range logRatios {
		maxLR = math.Max(maxLR, v)
	}
	lw := make([]float64, s)
	for i, v := range logRatios {
		lw[i] = v - maxLR
	}
	k = math.Inf(1)
	m := int(math.Ceil(math.Min(0.2*float64(s), 3*math.Sqrt(float64(s)))))
	if m >= 5 && m < s {
		idx := make([]int, s)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return lw[idx[a]] < lw[idx[b]] })
		tail := idx[s-m:]
		lo, hi := lw[tail[0]], lw[tail[m-1]]
		if math.Abs(hi-lo) >= 2.220446049250313e-16/100 {
			cutoff := lw[idx[s-m-1]]
			ec := math.Exp(cutoff)
			x := make([]float64, m)
			for j, t := range tail {
				x[j] = math.Exp(lw[t]) - ec
			}
			var sigma float64
			k, sigma = gpdFit(x)
			if !math.IsInf(k, 0) && !math.IsNaN(k) {
				for j, t := range tail {
					p := (float64(j) + 0.5) / float64(m)
					lw[t] = math.Log(gpdQuantile(p, k, sigma) + ec)
				}
			}
		}
	}
	for i, v := range lw {
		lw[i] = math.Min(v, 0) + maxLR
	}
	return lw, k
}

// gpdFit estimates the generalized Pareto shape k and scale σ of the
// sorted exceedances x by Zhang and Stephens's (2009) profile-likelihood
// weighted estimate, then shrinks k towards ½ as (n·k + 10·½)/(n + 10).
func gpdFit(x []float64) (k, sigma float64) {
	n := len(x)
	const prior = 3.0
	m := 30 + int(math.Floor(math.Sqrt(float64(n))))
	xstar := x[int(math.Floor(float64(n)/4+0.5))-1] // first quartile
	theta := make([]float64, m)
	lTheta := make([]float64, m)
	for j := range theta {
		theta[j] = 1/x[n-1] + (1-math.Sqrt(float64(m)/(float64(j+1)-0.5)))/prior/xstar
		// Profile log-likelihood: n(log(−θ/k) − k − 1) with
		// k = mean log1p(−θx) in Zhang and Stephens's sign convention.
		kk := 0.0
		for _, v := range x {
			kk += math.Log1p(-theta[j] * v)
		}
		kk /= float64(n)
		lTheta[j] = float64(n) * (math.Log(-theta[j]/kk) - kk - 1)
	}
	lse := logSumExp(lTheta)
	thetaHat := 0.0
	for j := range theta {
		thetaHat += theta[j] * math.Exp(lTheta[j]-lse)
	}
	for _, v := range x {
		k += math.Log1p(-thetaHat * v)
	}
	k /= float64(n)
	sigma = -k / thetaHat
	k = (float64(n)*k + 10*0.5) / (float64(n) + 10)
	return k, sigma
}

// gpdQuantile is the p-quantile σ(e^{−k log(1−p)} − 1)/k of the generalized
// Pareto distribution with shape k and scale σ.
func gpdQuantile(p, k, sigma float64) float64 {
	if !(sigma > 0) {
		return math.NaN()
	}
	if k == 0 {
		return -sigma * math.Log1p(-p)
	}
	return sigma * math.Expm1(-k*math.Log1p(-p)) / k
}
