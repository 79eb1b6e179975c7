package inference

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// NUTSOptions configures NUTS. Zero fields take Stan's defaults.
type NUTSOptions struct {
	Chains       int     // independent chains, run in parallel (default 4)
	Warmup       int     // adaptation iterations per chain, discarded (default 1000)
	Draws        int     // kept iterations per chain (default 1000)
	TargetAccept float64 // dual averaging's target acceptance statistic δ (default 0.8)
	MaxDepth     int     // the trajectory has at most 2^MaxDepth leapfrog steps (default 10)
	// Steps > 0 runs static HMC instead of NUTS: every transition takes
	// Steps leapfrog steps and a Metropolis accept/reject, with the same
	// step-size and metric adaptation (set TargetAccept to 0.65, HMC's
	// usual optimum).
	Steps int
	Seed  uint64 // chain c uses the stream seeded by Seed + c
	// DenseMetric adapts a full inverse metric (the covariance of the
	// window's draws, regularised as Stan does) instead of its diagonal:
	// better for strongly correlated posteriors, O(d²) per leapfrog step.
	DenseMetric bool
}

// Result holds the draws of every chain and what the sampler saw.
type Result struct {
	Names []string // one per constrained scalar, e.g. "beta[2]"
	// Draws[c][i] is the i-th kept draw of chain c, constrained, in the
	// order of Names.
	Draws         [][][]float64
	StepSize      []float64   // adapted ε per chain
	InvMass       [][]float64 // the adapted inverse metric's diagonal, per chain
	DenseInvMass  [][]float64 // with DenseMetric, the full inverse metric (d×d, row-major), per chain
	Divergences   []int       // divergent transitions per chain after warmup
	MeanTreeDepth []float64
	// Warnings says what in the run calls for a look before the draws are
	// trusted: divergent transitions after warm-up, a step size adapted
	// down to almost nothing, a chain that hit the maximum tree depth on
	// most transitions.
	Warnings []string
}

// NUTS samples the model's posterior with the No-U-Turn sampler
// (Hoffman and Gelman 2014) in the multinomial form of Stan (Betancourt
// 2017): trajectories grow by doubling in a random direction until the
// momentum sum points back against either end (the generalised no-U-turn
// criterion with the inverse metric), and the draw is taken from the whole
// trajectory in proportion to exp(−H), biased towards the newer half.
// During warmup the step size follows dual averaging (δ, γ = 0.05, t₀ =
// 10, κ = 0.75) and the diagonal inverse metric is re-estimated at the end
// of Stan's doubling windows (75-iteration initial buffer, 25-iteration
// first window, 50-iteration final buffer, scaled down for short warmups).
// A transition whose energy error exceeds 1000 is divergent: it ends the
// trajectory and is counted. Chains run on their own goroutines with their
// own seeded streams, so results are the same on every run.
//
// NUTS checks ctx before every transition of every chain: when ctx is
// cancelled it returns promptly with the draws kept so far (Draws may then
// be short, or empty during warm-up, and chains may differ in length)
// together with ctx.Err() wrapped. Other failures (a model that does not
// evaluate, bad options) return a nil Result and an error naming NUTS.
func NUTS(ctx context.Context, m Model, opts NUTSOptions) (*Result, error) {
	if opts.Chains <= 0 {
		opts.Chains = 4
	}
	if opts.Warmup < 0 || opts.Draws < 0 {
		return nil, fmt.Errorf("inference.NUTS: negative warmup or draws")
	}
	if opts.Warmup == 0 {
		opts.Warmup = 1000
	}
	if opts.Draws == 0 {
		opts.Draws = 1000
	}
	if opts.TargetAccept == 0 {
		opts.TargetAccept = 0.8
	}
	if !(opts.TargetAccept > 0 && opts.TargetAccept < 1) {
		return nil, fmt.Errorf("inference.NUTS: TargetAccept %v is not in (0, 1)", opts.TargetAccept)
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = 10
	}
	probe, err := newEvaluator(m)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Draws: make([][][]float64, opts.Chains), StepSize: make([]float64, opts.Chains),
		InvMass: make([][]float64, opts.Chains), DenseInvMass: make([][]float64, opts.Chains), Divergences: make([]int, opts.Chains),
		MeanTreeDepth: make([]float64, opts.Chains),
	}
	errs := make([]error, opts.Chains)
	var wg sync.WaitGroup
	for c := range opts.Chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[c] = runChain(ctx, m, opts, uint64(c), res)
		}()
	}
	wg.Wait()
	res.Names = probe.names(make([]float64, probe.dim))
	for c, err := range errs {
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("inference.NUTS: chain %d: %w", c, err)
		}
	}
	if err := ctx.Err(); err != nil {
		kept := 0
		for _, d := range res.Draws {
			kept += len(d)
		}
		return res, fmt.Errorf("inference.NUTS: stopped with %d draws kept over %d chains: %w", kept, opts.Chains, err)
	}
	for c := range opts.Chains {
		if n := res.Divergences[c]; n > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("chain %d: %d divergent transitions after warm-up (of %d): the posterior has regions the step size cannot follow; reparameterise (e.g. non-centred) or raise TargetAccept", c, n, opts.Draws))
		}
		if res.StepSize[c] < 1e-8 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("chain %d: the adapted step size is %.3g: the sampler is barely moving", c, res.StepSize[c]))
		}
		if opts.Steps == 0 && res.MeanTreeDepth[c] > float64(opts.MaxDepth)-0.5 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("chain %d: mean tree depth %.1f of at most %d: trajectories are cut short; raise MaxDepth", c, res.MeanTreeDepth[c], opts.MaxDepth))
		}
	}
	return res, nil
}

func runChain(ctx context.Context, m Model, opts NUTSOptions, c uint64, res *Result) (err error) {
	defer tensor.Recover(&err)
	if err := ctx.Err(); err != nil {
		return err
	}
	ev, err := newEvaluator(m)
	if err != nil {
		return err
	}
	s := &chain{ev: ev, rng: tensor.NewRNG(opts.Seed + c), maxDepth: opts.MaxDepth, dim: ev.dim}
	if err := s.init(); err != nil {
		return err
	}
	s.invMass = ones(s.dim)
	s.eps = s.findStepSize()
	ad := newAdapter(opts.Warmup, opts.TargetAccept, s.eps, s.dim)
	ad.dense = opts.DenseMetric
	depthSum := 0
	// On cancellation, too, the chain reports what it has: the kept draws,
	// the current step size and metric.
	defer func() {
		res.StepSize[c], res.InvMass[c], res.DenseInvMass[c] = s.eps, s.invMass, s.dense
		if n := len(res.Draws[c]); n > 0 {
			res.MeanTreeDepth[c] = float64(depthSum) / float64(n)
		}
	}()
	for it := range opts.Warmup + opts.Draws {
		if err := ctx.Err(); err != nil {
			return err
		}
		var st stats
		if opts.Steps > 0 {
			st = s.hmcTransition(opts.Steps)
		} else {
			st = s.transition()
		}
		if it < opts.Warmup {
			if newEps, invMass, reset := ad.update(it, st.acceptStat, s.theta); reset {
				s.setMetric(invMass)
				s.eps = s.findStepSize()
				ad.restart(s.eps)
			} else {
				s.eps = newEps
			}
			if it == opts.Warmup-1 {
				s.eps = ad.final()
			}
			continue
		}
		if st.divergent {
			res.Divergences[c]++
		}
		depthSum += st.depth
		res.Draws[c] = append(res.Draws[c], ev.constrain(s.theta))
	}
	return nil
}

// chain is one Markov chain's state.
type chain struct {
	ev       *evaluator
	rng      *tensor.RNG
	dim      int
	maxDepth int
	eps      float64
	invMass  []float64
	dense    []float64 // the full inverse metric (d×d), or nil for the diagonal one
	chol     []float64 // its lower Cholesky factor
	theta    []float64
	grad     []float64
	lp       float64
}

func (s *chain) init() error {
	s.theta, s.grad = make([]float64, s.dim), make([]float64, s.dim)
	for try := 0; try < 100; try++ {
		off := 0
		for i, p := range s.ev.m.Params {
			for k := range s.ev.sizes[i] {
				if p.Init != nil {
					s.theta[off+k] = p.Init[k]
				} else {
					s.theta[off+k] = 4*s.rng.Float64() - 2
				}
			}
			off += s.ev.sizes[i]
		}
		if s.lp = s.ev.logp(s.theta, s.grad); !math.IsInf(s.lp, -1) {
			return nil
		}
	}
	return fmt.Errorf("no initial point with a finite log density and gradient in 100 tries")
}

// point is a position on a trajectory with its momentum.
type point struct {
	theta, p, grad []float64
	lp             float64
}

func (s *chain) clonePoint(q point) point {
	return point{theta: append([]float64(nil), q.theta...), p: append([]float64(nil), q.p...),
		grad: append([]float64(nil), q.grad...), lp: q.lp}
}

// leapfrog advances q by one step of size eps (negative: backwards).
func (s *chain) leapfrog(q *point, eps float64) {
	for i := range q.p {
		q.p[i] += eps / 2 * q.grad[i]
	}
	v := s.sharp(q.p)
	for i := range q.theta {
		q.theta[i] += eps * v[i]
	}
	q.lp = s.ev.logp(q.theta, q.grad)
	if math.IsInf(q.lp, -1) {
		return
	}
	for i := range q.p {
		q.p[i] += eps / 2 * q.grad[i]
	}
}

// hamiltonian is −log p(θ) + ½ pᵀM⁻¹p.
func (s *chain) hamiltonian(q point) float64 {
	return -q.lp + dot(q.p, s.sharp(q.p))/2
}

func (s *chain) momentum() []float64 {
	p := make([]float64, s.dim)
	if s.dense != nil {
		// p = L⁻ᵀz with M⁻¹ = LLᵀ has covariance (LLᵀ)⁻¹ = M.
		d := s.dim
		for i := range p {
			p[i] = s.rng.NormFloat64()
		}
		for i := d - 1; i >= 0; i-- {
			v := p[i]
			for k := i + 1; k < d; k++ {
				v -= s.chol[k*d+i] * p[k]
			}
			p[i] = v / s.chol[i*d+i]
		}
		return p
	}
	for i := range p {
		p[i] = s.rng.NormFloat64() / math.Sqrt(s.invMass[i])
	}
	return p
}

// findStepSize is Stan's heuristic: double or halve ε from the current
// value until one leapfrog step's acceptance probability crosses ½.
func (s *chain) findStepSize() float64 {
	eps := s.eps
	if eps == 0 {
		eps = 1
	}
	q0 := point{theta: s.theta, p: s.momentum(), grad: s.grad, lp: s.lp}
	h0 := s.hamiltonian(q0)
	dir := 0.0
	for range 100 {
		q := s.clonePoint(q0)
		s.leapfrog(&q, eps)
		delta := h0 - s.hamiltonian(q)
		if math.IsNaN(delta) {
			delta = math.Inf(-1)
		}
		d := -1.0
		if delta > math.Log(0.8) {
			d = 1
		}
		if dir == 0 {
			dir = d
		}
		if d != dir {
			break
		}
		if dir > 0 {
			eps *= 2
		} else {
			eps /= 2
		}
		if eps > 1e7 || eps < 1e-10 {
			break
		}
	}
	return eps
}
