package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// BayesOptOptions configures NewBayesOpt. The zero value maximises with
// expected improvement, three random initial points, a Matérn 5⁄2 kernel
// and seed 0.
type BayesOptOptions struct {
	// Acquisition scores candidates; nil means EI{Xi: 0.01}.
	Acquisition Acquisition
	// InitialPoints is the number of uniformly random points Ask returns
	// before it starts modelling [3].
	InitialPoints int
	// Kernel returns the GP kernel for inputs scaled to [0, 1]^d (the
	// optimiser works in the unit cube); nil means a scaled Matérn 5⁄2
	// with one lengthscale per dimension starting at 0.2.
	Kernel func(d int) kernel.Kernel
	// Candidates is the number of random points (per dimension) scored to
	// pick the starts of the acquisition optimiser [256]; in 1-D a grid of
	// 101 points is scored too.
	Candidates int
	// Restarts is the number of L-BFGS starts for the acquisition [5].
	Restarts int
	// FitRestarts is the number of extra random starts of the GP fit [2].
	FitRestarts int
	// Seed seeds the initial points, the candidates and the fit restarts.
	Seed uint64
}

// BayesOpt is Bayesian optimisation with an ask/tell interface: it
// maximises an expensive (possibly noisy) function over a box by fitting
// an exact GP (normalised targets, learnable noise) to the observations
// and asking next where an acquisition function, maximised by L-BFGS with
// gradients from autodiff, is largest.
//
//	bo := gp.NewBayesOpt([][2]float64{{-5, 5}}, gp.BayesOptOptions{Seed: 1})
//	for i := 0; i < 20; i++ {
//		x := bo.Ask(ctx)
//		bo.Tell(x, f(x))
//	}
//	x, y := bo.Best()
type BayesOpt struct {
	bounds [][2]float64
	opts   BayesOptOptions
	rng    *tensor.RNG
	xs     [][]float64 // observed points, in the unit cube
	ys     []float64
	kernel kernel.Kernel
	model  *Exact // fitted to the first fitted observations
	fitted int
	err    error
}

// NewBayesOpt returns an optimiser over the box bounds (one [lo, hi] per
// dimension). It panics with a *tensor.Error if there are no bounds, an
// interval is empty or not finite, or an option is negative.
func NewBayesOpt(bounds [][2]float64, opts BayesOptOptions) *BayesOpt {
	if len(bounds) == 0 {
		tensor.Fail("gp.NewBayesOpt", "no bounds")
	}
	for i, b := range bounds {
		if !(b[0] < b[1]) || math.IsInf(b[0], 0) || math.IsInf(b[1], 0) {
			tensor.Fail("gp.NewBayesOpt", "bounds[%d] = %v is not a finite interval", i, b)
		}
	}
	if opts.InitialPoints < 0 || opts.Candidates < 0 || opts.Restarts < 0 || opts.FitRestarts < 0 {
		tensor.Fail("gp.NewBayesOpt", "negative option in %+v", opts)
	}
	if opts.Acquisition == nil {
		opts.Acquisition = EI{Xi: 0.01}
	}
	if opts.InitialPoints == 0 {
		opts.InitialPoints = 3
	}
	if opts.Candidates == 0 {
		opts.Candidates = 256
	}
	if opts.Restarts == 0 {
		opts.Restarts = 5
	}
	if opts.FitRestarts == 0 {
		opts.FitRestarts = 2
	}
	d := len(bounds)
	if opts.Kernel == nil {
		opts.Kernel = func(d int) kernel.Kernel {
			ls := make([]float64, d)
			for i := range ls {
				ls[i] = 0.2
			}
			return kernel.NewScale(kernel.NewMatern52(ls...), 1)
		}
	}
	return &BayesOpt{
		bounds: append([][2]float64(nil), bounds...),
		opts:   opts,
		rng:    tensor.NewRNG(opts.Seed),
		kernel: opts.Kernel(d),
	}
}

// toUnit maps a point of the box to the unit cube; fromUnit inverts it.
func (b *BayesOpt) toUnit(x []float64) []float64 {
	u := make([]float64, len(x))
	for i, v := range x {
		u[i] = (v - b.bounds[i][0]) / (b.bounds[i][1] - b.bounds[i][0])
	}
	return u
}

func (b *BayesOpt) fromUnit(u []float64) []float64 {
	x := make([]float64, len(u))
	for i, v := range u {
		v = math.Min(math.Max(v, 0), 1)
		x[i] = b.bounds[i][0] + v*(b.bounds[i][1]-b.bounds[i][0])
	}
	return x
}

// Tell records the observation y = f(x). It returns an error, and
// records nothing, if x has the wrong length or lies outside the box, or
// y is not finite.
func (b *BayesOpt) Tell(x []float64, y float64) error {
	if len(x) != len(b.bounds) {
		return fmt.Errorf("gp.BayesOpt.Tell: x has %d coordinates, the box %d", len(x), len(b.bounds))
	}
	for i, v := range x {
		if !(v >= b.bounds[i][0] && v <= b.bounds[i][1]) {
			return fmt.Errorf("gp.BayesOpt.Tell: x[%d] = %g lies outside %v", i, v, b.bounds[i])
		}
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("gp.BayesOpt.Tell: y = %g is not finite", y)
	}
	b.xs = append(b.xs, b.toUnit(x))
	b.ys = append(b.ys, y)
	return nil
}

// Len returns the number of observations.
func (b *BayesOpt) Len() int { return len(b.ys) }

// Best returns the observed point with the largest y, and y; nil and −Inf
// before the first observation.
func (b *BayesOpt) Best() (x []float64, y float64) {
	y = math.Inf(-1)
	for i, v := range b.ys {
		if v > y {
			x, y = b.fromUnit(b.xs[i]), v
		}
	}
	return x, y
}

// Model returns the GP fitted to all observations so far (fitting it,
// under ctx, if needed), on inputs scaled to the unit cube.
func (b *BayesOpt) Model(ctx context.Context) (*Exact, error) { return b.fit(ctx) }

// Err returns the error of the last Ask that had to fall back to a random
// point (the GP could not be fitted or the acquisition not maximised), or
// nil.
func (b *BayesOpt) Err() error { return b.err }

// Ask returns the next point to evaluate: a uniformly random point while
// there are fewer than InitialPoints observations, and afterwards the
// maximiser of the acquisition function under the GP fitted to all
// observations that is not an observed point. If fitting or the
// maximisation fails, or ctx is cancelled during the fit, it returns a
// random point instead and Err reports why (wrapping ctx.Err()).
func (b *BayesOpt) Ask(ctx context.Context) []float64 {
	b.err = nil
	if len(b.ys) < b.opts.InitialPoints {
		return b.fromUnit(b.randomUnit())
	}
	u, err := b.maximise(ctx, nil)
	if err != nil {
		b.err = err
		return b.fromUnit(b.randomUnit())
	}
	return b.fromUnit(u)
}

// AskBatch returns q points to evaluate together (in parallel, say): q
// uniformly random points while there are fewer than InitialPoints
// observations, and afterwards q points chosen one at a time, each
// maximising the acquisition given the ones before it as pending
// (BatchAcquisition.PrepareBatch): for QEI, the expected improvement of
// the batch so far with the new point; for Thompson, a fresh function
// sample each. A member that cannot be chosen (the fit or the
// maximisation fails, or ctx is cancelled) is a random point and Err
// reports why. It panics with a *tensor.Error if q < 1, or if q > 1 and
// the acquisition is not a BatchAcquisition.
func (b *BayesOpt) AskBatch(ctx context.Context, q int) [][]float64 {
	if q < 1 {
		tensor.Fail("gp.BayesOpt.AskBatch", "batch size %d; want at least 1", q)
	}
	if _, ok := b.opts.Acquisition.(BatchAcquisition); !ok && q > 1 {
		tensor.Fail("gp.BayesOpt.AskBatch", "the %s acquisition does not score batches (use QEI or Thompson)", b.opts.Acquisition.Name())
	}
	b.err = nil
	out := make([][]float64, 0, q)
	if len(b.ys) < b.opts.InitialPoints {
		for range q {
			out = append(out, b.fromUnit(b.randomUnit()))
		}
		return out
	}
	var pending []float64
	for k := 0; k < q; k++ {
		var u []float64
		var err error
		if k == 0 {
			u, err = b.maximise(ctx, nil)
		} else {
			u, err = b.maximise(ctx, pending)
		}
		if err != nil {
			b.err = err
			u = b.randomUnit()
		}
		pending = append(pending, u...)
		out = append(out, b.fromUnit(u))
	}
	return out
}

// isNew reports whether u is not (within 1e-6 in the unit cube) an
// observed point: Ask never repeats one, since a noise-free objective
// would gain nothing from it.
func (b *BayesOpt) isNew(u []float64) bool {
	for _, p := range b.xs {
		if dist(p, u) < 1e-6 {
			return false
		}
	}
	return true
}

func dist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

func (b *BayesOpt) randomUnit() []float64 {
	u := make([]float64, len(b.bounds))
	for i := range u {
		u[i] = b.rng.Float64()
	}
	return u
}

// fit fits the GP to all observations unless that is done already.
func (b *BayesOpt) fit(ctx context.Context) (*Exact, error) {
	if len(b.ys) == 0 {
		return nil, errors.New("gp.BayesOpt: no observations")
	}
	if b.model != nil && b.fitted == len(b.ys) {
		return b.model, nil
	}
	n, d := len(b.ys), len(b.bounds)
	flat := make([]float64, 0, n*d)
	for _, p := range b.xs {
		flat = append(flat, p...)
	}
	x := tensor.FromFloat64s(flat, n, d)
	y := tensor.FromFloat64s(append([]float64(nil), b.ys...), n)
	// Keep hyperparameters in a sensible range for the unit cube and
	// standardised targets; restarts sample within these bounds.
	bounds := map[string][2]float64{"noise": {1e-6, 1}}
	for _, p := range kernel.UniqueHyperparams(b.kernel.Hyperparams()) {
		switch name := p.Name(); {
		case strings.HasSuffix(name, ".lengthscale"):
			bounds[name] = [2]float64{0.01, 10}
		case strings.HasSuffix(name, ".variance"):
			bounds[name] = [2]float64{0.01, 100}
		}
	}
	m, err := FitExact(ctx, x, y, ExactOptions{Kernel: b.kernel, Noise: 1e-2, NoiseFloor: 1e-6, Normalize: true,
		Restarts: b.opts.FitRestarts, Seed: b.opts.Seed + uint64(n), Bounds: bounds})
	if err != nil && !errors.Is(err, tensor.ErrNotConverged) { // the best hyperparameters found serve the acquisition
		return nil, err
	}
	b.model, b.fitted = m, n
	return m, nil
}

// score fits the GP if needed and prepares the acquisition on it, for a
// batch member joining pending when pending is not nil.
func (b *BayesOpt) score(ctx context.Context, pending *tensor.Tensor) (Score, error) {
	m, err := b.fit(ctx)
	if err != nil {
		return nil, err
	}
	s, err := newSurrogate(m)
	if err != nil {
		return nil, err
	}
	if pending != nil {
		return b.opts.Acquisition.(BatchAcquisition).PrepareBatch(s, pending, b.rng)
	}
	return b.opts.Acquisition.Prepare(s, b.rng)
}

// maximise returns the unit-cube maximiser of the acquisition that is
// neither observed nor among the pending points (k·d values).
func (b *BayesOpt) maximise(ctx context.Context, pending []float64) (u []float64, err error) {
	defer tensor.Recover(&err)
	var pend *tensor.Tensor
	d := len(b.bounds)
	if len(pending) > 0 {
		pend = tensor.FromFloat64s(pending, len(pending)/d, d)
	}
	score, err := b.score(ctx, pend)
	if err != nil {
		return nil, err
	}
	accept := func(u []float64) bool {
		for i := 0; i < len(pending); i += d {
			if dist(pending[i:i+d], u) < 1e-6 {
				return false
			}
		}
		return b.isNew(u)
	}
	u, _, err = b.maximiseScore(score, accept)
	return u, err
}

// maximiseScore maximises score over the unit cube: the best of
// Candidates·d random points (and a 101-point grid in 1-D) start Restarts
// bounded L-BFGS runs with gradients from autodiff, and the best end point
// (or candidate) that accept takes (nil accepts all) wins. It returns the
// point and its score, or an error if accept takes none.
func (b *BayesOpt) maximiseScore(score func(x *graph.Node) (*graph.Node, error), accept func([]float64) bool) (u []float64, value float64, err error) {
	defer tensor.Recover(&err)
	d := len(b.bounds)
	var cands [][]float64
	if d == 1 {
		for i := 0; i <= 100; i++ {
			cands = append(cands, []float64{float64(i) / 100})
		}
	}
	for i := 0; i < b.opts.Candidates*d; i++ {
		cands = append(cands, b.randomUnit())
	}
	flat := make([]float64, 0, len(cands)*d)
	for _, c := range cands {
		flat = append(flat, c...)
	}
	g := graph.New()
	sc, err := score(g.Const(tensor.FromFloat64s(flat, len(cands), d)))
	if err != nil {
		return nil, 0, err
	}
	scores := sc.Value().Values()
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return scores[order[i]] > scores[order[j]] })

	if accept == nil {
		accept = func([]float64) bool { return true }
	}
	var best []float64
	bestScore := math.Inf(-1)
	for _, i := range order {
		if accept(cands[i]) {
			best, bestScore = cands[i], scores[i]
			break
		}
	}
	lower := []*tensor.Tensor{tensor.Zeros(tensor.Float64, 1, d)}
	upper := []*tensor.Tensor{tensor.Ones(tensor.Float64, 1, d)}
	// Scale the objective by the best candidate's score so that L-BFGS's
	// absolute gradient tolerance means the same for tiny acquisition
	// values (EI far below the incumbent is often 1e-100).
	scale := math.Abs(scores[order[0]])
	if !(scale > 0) || math.IsInf(scale, 0) {
		scale = 1
	}
	objective := func(xs, grad []*tensor.Tensor) (v float64, err error) {
		defer tensor.Recover(&err)
		g.Reset()
		xn := g.Var(xs[0])
		a, err := score(xn)
		if err != nil {
			return 0, err
		}
		tensor.CopyInto(grad[0], tensor.MulScalar(autodiff.Grad(a, xn)[0].Value(), -1/scale))
		return -a.Item() / scale, nil
	}
	for r := 0; r < b.opts.Restarts && r < len(order); r++ {
		x := []*tensor.Tensor{tensor.FromFloat64s(append([]float64(nil), cands[order[r]]...), 1, d)}
		res, err := optim.Minimize(objective, x, optim.LBFGSOptions{MaxIter: 50, Lower: lower, Upper: upper})
		if err != nil {
			continue // the candidate's own score stands
		}
		if v := -res.F * scale; v > bestScore && accept(x[0].Values()) {
			best, bestScore = x[0].Values(), v
		}
	}
	if best == nil {
		return nil, 0, errors.New("gp.BayesOpt: every maximiser found repeats an observation")
	}
	return best, bestScore, nil
}

// Recommend returns the maximiser of the GP posterior mean over the box
// and the mean there: the estimate of the optimum, which for noisy
// observations is more reliable than the best observed point (Best).
func (b *BayesOpt) Recommend(ctx context.Context) (x []float64, mean float64, err error) {
	m, err := b.fit(ctx)
	if err != nil {
		return nil, 0, err
	}
	u, mean, err := b.maximiseScore(func(x *graph.Node) (*graph.Node, error) {
		mn, _, err := m.Posterior(x)
		return mn, err
	}, nil)
	if err != nil {
		return nil, 0, err
	}
	return b.fromUnit(u), mean, nil
}

// Predict returns the posterior mean and standard deviation of the latent
// function at the points xs (each in the box's coordinates) under the GP
// fitted to all observations so far (fitting it if needed).
func (b *BayesOpt) Predict(ctx context.Context, xs [][]float64) (mean, std []float64, err error) {
	defer tensor.Recover(&err)
	m, err := b.fit(ctx)
	if err != nil {
		return nil, nil, err
	}
	g := graph.New()
	mn, vn, err := m.Posterior(g.Const(b.unitMatrix(xs)))
	if err != nil {
		return nil, nil, err
	}
	mean = mn.Value().Values()
	std = vn.Value().Values()
	for i, v := range std {
		std[i] = math.Sqrt(math.Max(v, 0))
	}
	return mean, std, nil
}

// AcquisitionAt returns the acquisition values at the points xs (each in
// the box's coordinates) under the GP fitted to all observations so far.
// An acquisition that draws at random (Thompson, MES, QEI) draws afresh
// on each call, from the optimiser's stream.
func (b *BayesOpt) AcquisitionAt(ctx context.Context, xs [][]float64) (v []float64, err error) {
	defer tensor.Recover(&err)
	m, err := b.fit(ctx)
	if err != nil {
		return nil, err
	}
	s, err := newSurrogate(m)
	if err != nil {
		return nil, err
	}
	score, err := b.opts.Acquisition.Prepare(s, b.rng)
	if err != nil {
		return nil, err
	}
	g := graph.New()
	a, err := score(g.Const(b.unitMatrix(xs)))
	if err != nil {
		return nil, err
	}
	return a.Value().Values(), nil
}

func (b *BayesOpt) unitMatrix(xs [][]float64) *tensor.Tensor {
	d := len(b.bounds)
	flat := make([]float64, 0, len(xs)*d)
	for i, x := range xs {
		if len(x) != d {
			tensor.Fail("gp.BayesOpt", "point %d has %d coordinates, the box %d", i, len(x), d)
		}
		flat = append(flat, b.toUnit(x)...)
	}
	return tensor.FromFloat64s(flat, len(xs), d)
}
