package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Thompson is Thompson sampling (Thompson 1933; for GPs, Hernández-Lobato,
// Hoffman and Ghahramani 2014, "Predictive Entropy Search for Efficient
// Global Optimization of Black-box Functions"): each Ask draws one function
// from the posterior and proposes its maximiser. The draw is an analytic
// function, so L-BFGS maximises it, by pathwise conditioning (Wilson et
// al. 2020, "Efficiently Sampling Functions from Gaussian Process
// Posteriors"): a prior draw on Features random Fourier features of the
// fitted kernel (Rahimi and Recht 2007, "Random Features for Large-Scale
// Kernel Machines"), g(x) = φ(x)ᵀw with w ~ N(0, I), plus the exact
// kernel's update towards the data,
//
//	f(x) = g(x) + k(x, X)(K + σ²I)⁻¹(y − g(X) − ε),   ε ~ N(0, σ²I),
//
// which keeps the posterior's variance where there are no data (a draw
// from the weights' posterior alone underestimates it). The kernel must
// be an RBF or Matérn kernel, optionally scaled (as BayesOpt's default
// is). Within a batch each member gets its own draw.
type Thompson struct {
	// Features is the number of random features; zero means 1000.
	Features int
}

// Name returns "thompson".
func (Thompson) Name() string { return "thompson" }

// Prepare draws the function sample.
func (a Thompson) Prepare(s Surrogate, rng *tensor.RNG) (sc Score, err error) {
	defer tensor.Recover(&err)
	m := s.GP()
	if m == nil {
		return nil, fmt.Errorf("gp.Thompson: the surrogate has no exact GP")
	}
	if m.inference == CG {
		return nil, fmt.Errorf("gp.Thompson: not available with CG inference")
	}
	nf := a.Features
	if nf == 0 {
		nf = 1000
	}
	if nf < 0 {
		return nil, fmt.Errorf("gp.Thompson: %d features", nf)
	}
	r, err := NewRFF(m.Kernel(), s.Dim(), nf, rng)
	if err != nil {
		return nil, fmt.Errorf("gp.Thompson: %w", err)
	}
	g := graph.New()
	k, x := m.trainCov(g)
	l, _, err := m.cholesky(k, true)
	if err != nil {
		return nil, err
	}
	n := m.N()
	w := rng.Normal(tensor.Float64, 0, 1, nf, 1)
	noise := 0.0
	if m.noise != nil {
		noise = m.noise.Value()
	}
	eps := rng.Normal(tensor.Float64, 0, math.Sqrt(noise), n, 1)
	prior := tensor.MatMul(r.Features(m.X()), w) // g(X) (n, 1)
	resid := tensor.Sub(tensor.Sub(m.residual(g).Value(), prior), eps)
	v := tensor.CholeskySolve(l.Value(), resid) // (K + σ²I)⁻¹(y − g(X) − ε)
	xv := x.Value()
	offset := m.yMean
	if m.mean != nil {
		offset += m.mean.Value() * m.yStd
	}
	scale := m.yStd
	return func(u *graph.Node) (*graph.Node, error) {
		gu := u.Graph()
		f := graph.Add(graph.MatMul(r.FeaturesNode(u), gu.Const(w)), graph.MatMulT(m.kernel.K(u, gu.Const(xv)), gu.Const(v), false, false))
		return graph.AddScalar(graph.MulScalar(graph.Reshape(f, u.Shape()[0]), scale), offset), nil
	}, nil
}

// PrepareBatch draws a fresh function for each batch member; pending is
// not used.
func (a Thompson) PrepareBatch(s Surrogate, _ *tensor.Tensor, rng *tensor.RNG) (Score, error) {
	return a.Prepare(s, rng)
}

// MES is max-value entropy search (Wang and Jegelka 2017, "Max-value
// Entropy Search for Efficient Bayesian Optimization"): the expected
// reduction of the entropy of the maximum value y* from observing f(x),
//
//	α(x) = (1/K) Σₖ [γₖ φ(γₖ) / (2Φ(γₖ)) − log Φ(γₖ)],   γₖ = (y*ₖ − μ(x))/σ(x),
//
// averaged over K samples y*ₖ of the maximum. The samples come from the
// paper's Gumbel approximation: P(y* < z) ≈ Πᵢ Φ((z − μᵢ)/σᵢ) over
// Candidates random points and the observed ones, fitted by a Gumbel
// distribution through its quartiles; samples are kept above the
// incumbent.
type MES struct {
	// Samples is K, the number of max-value samples; zero means 10.
	Samples int
	// Candidates is the number of random points (per dimension) of the
	// Gumbel fit; zero means 500.
	Candidates int
}

// Name returns "mes".
func (MES) Name() string { return "mes" }

// Prepare draws the max-value samples.
func (a MES) Prepare(s Surrogate, rng *tensor.RNG) (Score, error) {
	k, c := a.Samples, a.Candidates
	if k == 0 {
		k = 10
	}
	if c == 0 {
		c = 500
	}
	if k < 0 || c < 0 {
		return nil, fmt.Errorf("gp.MES: negative Samples %d or Candidates %d", k, c)
	}
	d := s.Dim()
	obs := s.Observed()
	cand := tensor.Concat(0, rng.Uniform(tensor.Float64, 0, 1, c*d, d), tensor.FromFloat64s(obs.Values(), obs.Shape()...))
	g := graph.New()
	mn, vn, err := s.Posterior(g.Const(cand))
	if err != nil {
		return nil, err
	}
	ystar := gumbelMaxSamples(mn.Value().Values(), vn.Value().Values(), k, rng)
	best := s.Incumbent()
	for i := range ystar {
		ystar[i] = math.Max(ystar[i], best+1e-6*math.Max(1, math.Abs(best)))
	}
	return mesScore(s, ystar), nil
}

// mesScore is MES's average over the max-value samples ystar.
func mesScore(s Surrogate, ystar []float64) Score {
	k := len(ystar)
	return func(u *graph.Node) (*graph.Node, error) {
		mean, variance, err := s.Posterior(u)
		if err != nil {
			return nil, err
		}
		m := u.Shape()[0]
		sd := graph.Sqrt(graph.Clamp(variance, minStd*minStd, math.Inf(1)))
		ys := u.Graph().Const(tensor.FromFloat64s(ystar, 1, k))
		gamma := graph.Div(graph.Sub(ys, graph.Reshape(mean, m, 1)), graph.Reshape(sd, m, 1)) // (m, K)
		logPhi := logNormCDF(gamma)
		logDens := graph.AddScalar(graph.MulScalar(graph.Square(gamma), -0.5), -0.5*math.Log(2*math.Pi))
		ratio := graph.Exp(graph.Sub(logDens, logPhi)) // φ/Φ, stable in the lower tail
		term := graph.Sub(graph.MulScalar(graph.Mul(gamma, ratio), 0.5), logPhi)
		return graph.Mean(term, []int{1}, false), nil
	}
}

// gumbelMaxSamples draws k samples of max f from the Gumbel distribution
// whose quartiles match those of Πᵢ Φ((z − μᵢ)/σᵢ) (Wang and Jegelka 2017).
func gumbelMaxSamples(mean, variance []float64, k int, rng *tensor.RNG) []float64 {
	sd := make([]float64, len(variance))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range variance {
		sd[i] = math.Sqrt(math.Max(v, 1e-18))
		lo = math.Min(lo, mean[i])
		hi = math.Max(hi, mean[i]+6*sd[i])
	}
	logCDF := func(z float64) float64 {
		s := 0.0
		for i := range mean {
			s += math.Log(0.5 * math.Erfc(-(z-mean[i])/(sd[i]*math.Sqrt2)))
		}
		return s
	}
	quantile := func(p float64) float64 {
		a, b := lo-1, hi
		for a > -1e300 && logCDF(a) > math.Log(p) {
			a -= 2 * (b - a)
		}
		for it := 0; it < 100 && b-a > 1e-12*(1+math.Abs(b)); it++ {
			mid := (a + b) / 2
			if logCDF(mid) < math.Log(p) {
				a = mid
			} else {
				b = mid
			}
		}
		return (a + b) / 2
	}
	q1, q2, q3 := quantile(0.25), quantile(0.5), quantile(0.75)
	// Gumbel: P(y* < z) = exp(−e^{−(z − a)/b}), quantile a − b log(−log p).
	b := (q3 - q1) / (math.Log(-math.Log(0.25)) - math.Log(-math.Log(0.75)))
	a := q2 + b*math.Log(-math.Log(0.5))
	out := make([]float64, k)
	for i := range out {
		if !(b > 1e-12) {
			out[i] = q2
			continue
		}
		u := math.Max(rng.Float64(), 1e-300)
		out[i] = a - b*math.Log(-math.Log(u))
	}
	return out
}

// QEI is the expected improvement of a batch of points, q-EI =
// E[max(max_j f(x_j) − best, 0)] under the joint posterior (Ginsbourger,
// Le Riche and Carraro 2010, "Kriging Is Well-Suited to Parallelize
// Optimization"), by Monte Carlo with the reparameterisation of Wilson,
// Hutter and Deisenroth (2018): fixed base samples ε, f = μ + Lε, so the
// estimate is a smooth function of the points for L-BFGS. BayesOpt.AskBatch
// builds a batch one point at a time: for a candidate x joining pending
// points P (with Cholesky factor L_P of their covariance), the last row
// of the joint factor is l = L_P⁻¹Σ(P, x) and d = √(σ²(x) − ‖l‖²), so
// every candidate is scored at once. With no pending points it is a Monte
// Carlo estimate of EI.
type QEI struct {
	// Samples is the number of Monte Carlo samples; zero means 512.
	Samples int
}

// Name returns "qei".
func (QEI) Name() string { return "qei" }

// Prepare returns the Monte Carlo EI of a single point.
func (a QEI) Prepare(s Surrogate, rng *tensor.RNG) (Score, error) { return a.PrepareBatch(s, nil, rng) }

// PrepareBatch returns the q-EI of pending ∪ {x} as a function of x.
func (a QEI) PrepareBatch(s Surrogate, pending *tensor.Tensor, rng *tensor.RNG) (sc Score, err error) {
	defer tensor.Recover(&err)
	ns := a.Samples
	if ns == 0 {
		ns = 512
	}
	if ns < 0 {
		return nil, fmt.Errorf("gp.QEI: %d samples", ns)
	}
	best := s.Incumbent()
	epsNew := rng.Normal(tensor.Float64, 0, 1, 1, ns)
	k := 0
	if pending != nil {
		k = pending.Shape()[0]
	}
	if k == 0 {
		return func(u *graph.Node) (*graph.Node, error) {
			mean, variance, err := s.Posterior(u)
			if err != nil {
				return nil, err
			}
			m := u.Shape()[0]
			sd := graph.Reshape(graph.Sqrt(graph.Clamp(variance, minStd*minStd, math.Inf(1))), m, 1)
			f := graph.Add(graph.Reshape(mean, m, 1), graph.Mul(sd, u.Graph().Const(epsNew))) // (m, S)
			return graph.Mean(graph.Relu(graph.AddScalar(f, -best)), []int{1}, false), nil
		}, nil
	}
	// The pending points' joint samples and factor, fixed for this batch step.
	g := graph.New()
	p := g.Const(pending)
	pm, _, err := s.Posterior(p)
	if err != nil {
		return nil, err
	}
	pc, err := s.Covariance(p, p)
	if err != nil {
		return nil, err
	}
	cov := tensor.MulScalar(tensor.Add(pc.Value(), tensor.Transpose(pc.Value())), 0.5)
	scale := 1e-12
	for i := 0; i < k; i++ {
		scale = math.Max(scale, cov.At(i, i))
	}
	var lp *tensor.Tensor
	for jitter := 1e-10; ; jitter *= 10 {
		if lp, err = tensor.Cholesky(tensor.Add(cov, tensor.MulScalar(tensor.Eye(tensor.Float64, k), jitter*scale))); err == nil {
			break
		}
		if jitter > 1e-2 {
			return nil, fmt.Errorf("gp.QEI: the pending points' covariance: %w", err)
		}
	}
	epsP := rng.Normal(tensor.Float64, 0, 1, k, ns)
	fp := tensor.Add(tensor.FromFloat64s(pm.Value().Values(), k, 1), tensor.MatMul(lp, epsP)) // (k, S)
	maxP := tensor.Max(fp, []int{0}, true)                                                    // (1, S)
	return func(u *graph.Node) (*graph.Node, error) {
		gu := u.Graph()
		mean, variance, err := s.Posterior(u)
		if err != nil {
			return nil, err
		}
		c, err := s.Covariance(gu.Const(pending), u) // (k, m)
		if err != nil {
			return nil, err
		}
		m := u.Shape()[0]
		l := graph.TriSolve(gu.Const(lp), c, true, false) // (k, m)
		d2 := graph.Sub(variance, graph.Sum(graph.Square(l), []int{0}, false))
		d := graph.Reshape(graph.Sqrt(graph.Clamp(d2, minStd*minStd, math.Inf(1))), m, 1)
		f := graph.Add(graph.Reshape(mean, m, 1), graph.MatMulT(l, gu.Const(epsP), true, false)) // (m, S)
		f = graph.Add(f, graph.Mul(d, gu.Const(epsNew)))
		top := graph.Maximum(f, gu.Const(maxP))
		return graph.Mean(graph.Relu(graph.AddScalar(top, -best)), []int{1}, false), nil
	}, nil
}
