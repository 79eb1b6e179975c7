package inference

import "math"

// adapter tunes the step size by dual averaging (Hoffman and Gelman 2014,
// §3.2) and the diagonal inverse metric from the draws of Stan's slow
// windows.
type adapter struct {
	delta, gamma, t0, kappa float64
	mu, hbar, logEpsBar     float64
	m                       int // iterations since the last restart

	// Windows: [0, initEnd) fast; slow windows end at the entries of ends;
	// [lastEnd, warmup) fast again.
	initEnd int
	ends    []int
	next    int // index into ends
	winN    int
	mean    []float64
	m2      []float64
	dense   bool      // estimate the full covariance (comoment in cm)
	cm      []float64 // d×d comoments of the window's draws
}

func newAdapter(warmup int, delta, eps float64, dim int) *adapter {
	a := &adapter{delta: delta, gamma: 0.05, t0: 10, kappa: 0.75, mean: make([]float64, dim), m2: make([]float64, dim)}
	a.restart(eps)
	initBuf, termBuf, base := 75, 50, 25
	if warmup < 20 {
		return a // too short to estimate a metric: step size only
	}
	if initBuf+termBuf+base > warmup {
		initBuf, termBuf = int(0.15*float64(warmup)), int(0.1*float64(warmup))
		base = warmup - initBuf - termBuf
	}
	end := warmup - termBuf
	for start, size := initBuf, base; start < end; {
		stop := start + size
		if stop+2*size > end {
			stop = end // the last window takes the rest
		}
		a.ends = append(a.ends, stop)
		start, size = stop, 2*size
	}
	a.initEnd = initBuf
	return a
}

// restart begins a new dual-averaging run at ε, with μ = log 10ε.
func (a *adapter) restart(eps float64) {
	a.mu, a.hbar, a.logEpsBar, a.m = math.Log(10*eps), 0, 0, 0
}

// update takes iteration it's acceptance statistic and position. It
// returns the next step size, and at the end of a slow window the new
// inverse metric with reset true (the caller re-finds ε and restarts).
func (a *adapter) update(it int, accept float64, theta []float64) (float64, []float64, bool) {
	a.m++
	t := float64(a.m)
	w := 1 / (t + a.t0)
	a.hbar = (1-w)*a.hbar + w*(a.delta-accept)
	logEps := a.mu - math.Sqrt(t)/a.gamma*a.hbar
	k := math.Pow(t, -a.kappa)
	a.logEpsBar = k*logEps + (1-k)*a.logEpsBar
	if a.next < len(a.ends) && it >= a.initEnd {
		// Welford's running variance of this window's draws.
		a.winN++
		dim := len(theta)
		if a.dense && a.cm == nil {
			a.cm = make([]float64, dim*dim)
		}
		before := append([]float64(nil), a.mean...)
		for i, v := range theta {
			d := v - a.mean[i]
			a.mean[i] += d / float64(a.winN)
			a.m2[i] += d * (v - a.mean[i])
		}
		if a.dense {
			// Welford's comoment: C += (x − mean_old)(x − mean_new)ᵀ.
			for i := range dim {
				for j := range dim {
					a.cm[i*dim+j] += (theta[i] - before[i]) * (theta[j] - a.mean[j])
				}
			}
		}
		if it+1 == a.ends[a.next] {
			n := float64(a.winN)
			var inv []float64
			if a.dense {
				inv = make([]float64, dim*dim)
				for i := range inv {
					inv[i] = n / (n + 5) * (a.cm[i] / (n - 1))
				}
				for i := range dim {
					inv[i*dim+i] += 1e-3 * 5 / (n + 5)
				}
				clear(a.cm)
			} else {
				inv = make([]float64, dim)
				for i := range inv {
					// Stan's regularisation towards 1e-3 for short windows.
					inv[i] = n/(n+5)*(a.m2[i]/(n-1)) + 1e-3*5/(n+5)
				}
			}
			a.next++
			a.winN = 0
			clear(a.mean)
			clear(a.m2)
			return math.Exp(logEps), inv, true
		}
	}
	return math.Exp(logEps), nil, false
}

// final is the step size kept after warmup: the dual-averaged exp(log ε̄).
func (a *adapter) final() float64 { return math.Exp(a.logEpsBar) }
