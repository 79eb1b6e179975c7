package inference

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gradus-ml/gradus/tensor"
)

// The diagnostics of Vehtari, Gelman, Simpson, Carpenter and Bürkner
// (2021): chains are split in halves, draws replaced by normal scores of
// their ranks over all chains, and R̂ and the effective sample size computed
// on those; tail ESS uses the indicators of the 5 % and 95 % quantiles.

// Rhat returns the rank-normalised split R̂ of one quantity drawn by
// several chains (chains[c][i]): the larger of the bulk value and that of
// the folded draws |x − median|. Values near 1 (below 1.01) indicate the
// chains agree. It panics with a *tensor.Error unless there is at least
// one chain and every chain has the same length, at least 4 draws.
func Rhat(chains [][]float64) float64 {
	split := splitChains("inference.Rhat", chains)
	bulk := rhatClassic(rankNormal(split))
	med := median(flatten(split))
	folded := make([][]float64, len(split))
	for c, ch := range split {
		folded[c] = make([]float64, len(ch))
		for i, v := range ch {
			folded[c][i] = math.Abs(v - med)
		}
	}
	return math.Max(bulk, rhatClassic(rankNormal(folded)))
}

// BulkESS returns the bulk effective sample size of one quantity: the ESS
// of its rank-normalised split chains. It panics as Rhat does.
func BulkESS(chains [][]float64) float64 {
	return ess(rankNormal(splitChains("inference.BulkESS", chains)))
}

// TailESS returns the smaller of the effective sample sizes of the
// indicators x ≤ q₀.₀₅ and x ≤ q₀.₉₅: how well the tails are resolved.
// It panics as Rhat does.
func TailESS(chains [][]float64) float64 {
	split := splitChains("inference.TailESS", chains)
	all := flatten(split)
	out := math.Inf(1)
	for _, p := range []float64{0.05, 0.95} {
		q := quantile(all, p)
		ind := make([][]float64, len(split))
		for c, ch := range split {
			ind[c] = make([]float64, len(ch))
			for i, v := range ch {
				if v <= q {
					ind[c][i] = 1
				}
			}
		}
		out = math.Min(out, ess(ind))
	}
	return out
}

// rhatClassic is the potential scale reduction √(var⁺/W) of Gelman et al.
// (BDA3 §11.4) for chains of equal length N: var⁺ = (N−1)/N·W + B/N with W
// the mean within-chain variance and B = N·(variance of the chain means).
func rhatClassic(chains [][]float64) float64 {
	m, n := float64(len(chains)), float64(len(chains[0]))
	means := make([]float64, len(chains))
	w := 0.0
	for c, ch := range chains {
		means[c] = meanOf(ch)
		w += varianceOf(ch, means[c])
	}
	w /= m
	b := n * varianceOf(means, meanOf(means))
	if w == 0 {
		return math.NaN()
	}
	return math.Sqrt(((n-1)/n*w + b/n) / w)
}

// ess is the effective sample size M·N/τ of chains of equal length N, with
// τ = −1 + 2·Σ P_k from the combined autocorrelations ρ_t = 1 −
// (W − mean autocovariance at lag t)/var⁺, truncated at the first negative
// pair sum P_k = ρ_{2k} + ρ_{2k+1} and made monotone (Geyer's initial
// monotone sequence).
func ess(chains [][]float64) float64 {
	m, n := len(chains), len(chains[0])
	acov := make([][]float64, m)
	w := 0.0
	means := make([]float64, m)
	for c, ch := range chains {
		means[c] = meanOf(ch)
		acov[c] = autocovariance(ch, means[c])
		w += acov[c][0] * float64(n) / float64(n-1)
	}
	w /= float64(m)
	varPlus := float64(n-1) / float64(n) * w
	if m > 1 {
		varPlus += varianceOf(means, meanOf(means))
	}
	if varPlus == 0 {
		return math.NaN()
	}
	rho := func(t int) float64 {
		s := 0.0
		for c := range acov {
			s += acov[c][t]
		}
		return 1 - (w-s/float64(m))/varPlus
	}
	tau := -1.0
	prev := math.Inf(1)
	for k := 0; 2*k+1 < n; k++ {
		p := rho(2*k) + rho(2*k+1)
		if p < 0 {
			break
		}
		p = math.Min(p, prev)
		prev = p
		tau += 2 * p
	}
	tau = math.Max(tau, 1/math.Log10(float64(m*n))) // Stan's lower bound on τ
	return float64(m*n) / tau
}

// autocovariance returns the biased autocovariances (divisor n) at lags
// 0…n−1.
func autocovariance(x []float64, mean float64) []float64 {
	n := len(x)
	out := make([]float64, n)
	for t := range n {
		s := 0.0
		for i := 0; i+t < n; i++ {
			s += (x[i] - mean) * (x[i+t] - mean)
		}
		out[t] = s / float64(n)
	}
	return out
}

// splitChains halves every chain (dropping a middle draw of odd lengths).
// It panics with a *tensor.Error naming op for no chains, a chain shorter
// than 4 draws or chains of different lengths.
func splitChains(op string, chains [][]float64) [][]float64 {
	if len(chains) == 0 {
		tensor.Fail(op, "no chains")
	}
	if len(chains[0]) < 4 {
		tensor.Fail(op, "chain 0 has %d draws; the diagnostics need at least 4", len(chains[0]))
	}
	half := len(chains[0]) / 2
	var out [][]float64
	for c, ch := range chains {
		if len(ch) != len(chains[0]) {
			tensor.Fail(op, "chain %d has %d draws, chain 0 %d: chains must have equal lengths", c, len(ch), len(chains[0]))
		}
		out = append(out, ch[:half], ch[len(ch)-half:])
	}
	return out
}

// rankNormal replaces each draw by Φ⁻¹((r − 3/8)/(S + 1/4)), r its rank among
// all S draws (average ranks for ties).
func rankNormal(chains [][]float64) [][]float64 {
	type item struct {
		v    float64
		c, i int
	}
	var all []item
	for c, ch := range chains {
		for i, v := range ch {
			all = append(all, item{v, c, i})
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].v < all[b].v })
	s := float64(len(all))
	out := make([][]float64, len(chains))
	for c, ch := range chains {
		out[c] = make([]float64, len(ch))
	}
	for lo := 0; lo < len(all); {
		hi := lo
		for hi+1 < len(all) && all[hi+1].v == all[lo].v {
			hi++
		}
		r := float64(lo+hi)/2 + 1
		z := normalQuantile((r - 3.0/8) / (s + 1.0/4))
		for k := lo; k <= hi; k++ {
			out[all[k].c][all[k].i] = z
		}
		lo = hi + 1
	}
	return out
}

// normalQuantile is Φ⁻¹(p) = √2·erf⁻¹(2p − 1).
func normalQuantile(p float64) float64 {
	x := math.Sqrt2 * math.Erfinv(2*p-1)
	return x
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// varianceOf is the unbiased variance of x about mean.
func varianceOf(x []float64, mean float64) float64 {
	s := 0.0
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x)-1)
}

func flatten(chains [][]float64) []float64 {
	var out []float64
	for _, ch := range chains {
		out = append(out, ch...)
	}
	return out
}

func median(x []float64) float64 { return quantile(x, 0.5) }

// quantile is the p-quantile with linear interpolation (NumPy's default).
func quantile(x []float64, p float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Column returns the draws of the named quantity as chains[c][i].
func (r *Result) Column(name string) [][]float64 {
	j := slices.Index(r.Names, name)
	if j < 0 {
		return nil
	}
	out := make([][]float64, len(r.Draws))
	for c, ch := range r.Draws {
		out[c] = make([]float64, len(ch))
		for i, d := range ch {
			out[c][i] = d[j]
		}
	}
	return out
}

// Summary returns a table with, for every quantity, the posterior mean,
// standard deviation, 5 % and 95 % quantiles, the Monte Carlo standard
// error of the mean (sd/√bulk ESS), R̂, bulk and tail ESS; and the
// divergences.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %10s %10s %10s %10s %9s %7s %8s %8s\n", "", "mean", "sd", "5%", "95%", "mcse", "R̂", "ess_bulk", "ess_tail")
	for _, name := range r.Names {
		ch := r.Column(name)
		all := flatten(ch)
		mean := meanOf(all)
		sd := math.Sqrt(varianceOf(all, mean))
		bulk := BulkESS(ch)
		fmt.Fprintf(&b, "%-12s %10.4g %10.4g %10.4g %10.4g %9.2g %7.3f %8.0f %8.0f\n", name, mean, sd,
			quantile(all, 0.05), quantile(all, 0.95), sd/math.Sqrt(bulk), Rhat(ch), bulk, TailESS(ch))
	}
	div := 0
	for _, d := range r.Divergences {
		div += d
	}
	fmt.Fprintf(&b, "%d divergent transitions after warmup\n", div)
	return b.String()
}
