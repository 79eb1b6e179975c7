package gp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// MeanKind selects the prior mean function of an Exact model.
type MeanKind int

const (
	// ZeroMean is the zero prior mean (after normalisation, if any).
	ZeroMean MeanKind = iota
	// ConstantMean is a learnable constant prior mean ("mean").
	ConstantMean
)

// ExactOptions configures FitExact and NewExact: the model (Kernel and the
// fields after it) and the hyperparameter fit (Optimizer and the fields
// after it, which NewExact ignores). The zero value, with a Kernel, gives
// a learnable noise variance starting at 0.1, a zero mean, no
// normalisation, Cholesky inference and one L-BFGS run of 100 iterations
// from the kernel's current hyperparameters.
type ExactOptions struct {
	// Kernel is the covariance function; it is required. The model keeps
	// its hyperparameter objects, so fitting updates them in place.
	Kernel kernel.Kernel
	// Noise is the initial observation-noise variance σ² ("noise"); zero
	// means 0.1.
	Noise float64
	// NoiseFloor is the lower bound of σ² (noise = floor + softplus(raw)),
	// which keeps K + σ²I well conditioned; zero means 1e-6 (float64) or
	// 1e-4 (float32).
	NoiseFloor float64
	// FixNoise keeps σ² at Noise during fitting.
	FixNoise bool
	// NoiseFree drops the noise term altogether (K = Kθ, plus jitter when
	// the factorisation needs it): for interpolation, or when the kernel
	// models the noise itself with a White term.
	NoiseFree bool
	// Mean selects the prior mean function (zero by default).
	Mean MeanKind
	// MeanFunc, if set, is the prior mean function (a LinearMean, a
	// ModuleMean or your own), fitted with the kernel; Mean must then be
	// ZeroMean. It needs Cholesky inference.
	MeanFunc MeanFunc
	// Normalize standardises y by its mean and (population) standard
	// deviation before modelling it; predictions and samples are mapped
	// back, and the log marginal likelihood is that of the standardised y.
	Normalize bool
	// Log, if set, receives a line for every jitter escalation outside the
	// fit (the fit reports them through Progress).
	Log func(msg string)
	// Inference selects Cholesky (the default) or CG inference for the
	// marginal likelihood, the fit and Predict.
	Inference Inference
	// CG configures CG inference; its zero value means its defaults.
	CG CGOptions

	// Optimizer is "lbfgs" (the default: L-BFGS with a strong Wolfe line
	// search, optim.Minimize) or "adam" (optim.NewAdam).
	Optimizer string
	// Restarts is the number of extra starts from random points, after the
	// start from the kernel's hyperparameters; the best result is kept.
	// Zero means none.
	Restarts int
	// Seed seeds the sampler of the restarts' starting points.
	Seed uint64
	// MaxIter is the number of iterations per start: L-BFGS iterations
	// (zero means 100) or Adam steps (zero means 300).
	MaxIter int
	// LR is Adam's learning rate on the unconstrained values; zero means
	// 0.05.
	LR float64
	// Bounds limits hyperparameters, by name, to [lo, hi] in the
	// constrained space (either side may be infinite). Restarts sample
	// bounded hyperparameters log-uniformly (uniformly if lo ≤ 0) between
	// finite bounds. Nil means unbounded.
	Bounds map[string][2]float64
	// Progress, if set, receives every iteration and every jitter
	// escalation of the fit.
	Progress func(FitEvent)
}

// fit returns the fit's knobs.
func (o ExactOptions) fit() fitOptions {
	return fitOptions{Optimizer: o.Optimizer, Restarts: o.Restarts, Seed: o.Seed, MaxIter: o.MaxIter, LR: o.LR, Bounds: o.Bounds, Progress: o.Progress}
}

// Exact is Gaussian-process regression with a Gaussian likelihood, whose
// posterior and marginal likelihood are computed exactly through the
// Cholesky factor of K + σ²I (O(n³)). A model is not safe for concurrent
// use: fitting and predicting read and write its hyperparameters.
type Exact struct {
	kernel kernel.Kernel
	x      *tensor.Tensor // (n, d)
	y      *tensor.Tensor // (n, 1), normalised if asked
	yMean  float64
	yStd   float64
	noise  *kernel.Hyperparam // nil when noise-free
	mean   *kernel.Hyperparam // nil for the zero mean
	meanFn MeanFunc           // nil unless ExactOptions.MeanFunc is set
	params []*kernel.Hyperparam
	log    func(string)
	// hook, set by Fit, receives jitter escalations instead of log.
	hook func(jitter float64, cause error)
	// inference and cg select and configure CG inference; cgStats
	// describes its last evaluation.
	inference Inference
	cg        CGOptions
	cgStats   CGStats
	// fitted is the outcome of FitExact's hyperparameter fit.
	fitted *FitResult
}

// FitExact returns an exact GP regression model of y (n) or (n, 1) on the
// inputs x (n, d) whose hyperparameters maximise the log marginal
// likelihood plus the log priors (type-II maximum likelihood or MAP;
// Rasmussen and Williams 2006, Gaussian Processes for Machine Learning,
// §5.4), by L-BFGS or Adam with gradients from autodiff, from the kernel's
// current hyperparameters and opts.Restarts random starts; it keeps the
// best, and FitResult reports every start. Covariances that are not
// positive definite are retried with jitter (each escalation reported
// through opts.Progress); a start where even that fails is recorded in its
// RestartResult and skipped.
//
// Bad data or options (see NewExact, and bounds that are not intervals in
// a hyperparameter's domain) return an error and no model. If every start
// fails, FitExact returns the error and no model. If the kept start's
// L-BFGS run used all MaxIter iterations without meeting its tolerance,
// the model comes with a *tensor.NotConvergedError. If ctx is cancelled it
// returns promptly: the model at the best hyperparameters found so far
// (the initial ones if no start finished) with the error wrapping
// ctx.Err().
func FitExact(ctx context.Context, x, y *tensor.Tensor, opts ExactOptions) (*Exact, error) {
	m, err := NewExact(x, y, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitExact: %w", err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := m.fit(ctx, opts.fit())
	m.fitted = res
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if err == nil && opts.Optimizer != "adam" { // Adam runs a fixed number of steps
		err = budgetSpent("gp.FitExact", res, opts.MaxIter)
	}
	return m, err
}

// FitResult returns the outcome of FitExact's hyperparameter fit, or nil
// for a model made by NewExact.
func (m *Exact) FitResult() *FitResult { return m.fitted }

// NewExact returns an exact GP regression model of y (n) or (n, 1) on the
// inputs x (n, d) conditioned at the kernel's current hyperparameters,
// without fitting them (the fit fields of opts are ignored). It exists for
// hyperparameters that are set by hand, fixed by a prior study or fitted
// elsewhere (a BayesOpt loop, a distributed fit), and for evaluating the
// log marginal likelihood and its gradient at given values; FitExact is
// the usual entry point. The hyperparameters are converted to x's dtype;
// the kernel keeps its hyperparameter objects, so they can be read and set
// on either.
//
// It returns an error if opts.Kernel is nil, x is not a matrix or has no
// rows or columns, y's length differs from x's rows, the dtypes differ, or
// x or y hold NaN or Inf.
func NewExact(x, y *tensor.Tensor, opts ExactOptions) (m *Exact, err error) {
	defer tensor.Recover(&err)
	o := opts
	kern := o.Kernel
	if kern == nil {
		return nil, errors.New("gp.NewExact: nil kernel")
	}
	if x == nil || y == nil {
		return nil, errors.New("gp.NewExact: nil x or y")
	}
	if x.Dim() != 2 {
		return nil, fmt.Errorf("gp.NewExact: x must be an (n, d) matrix, got shape %v", x.Shape())
	}
	n := x.Shape()[0]
	if n == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("gp.NewExact: x has shape %v: no data", x.Shape())
	}
	if !(y.Dim() == 1 || (y.Dim() == 2 && y.Shape()[1] == 1)) {
		return nil, fmt.Errorf("gp.NewExact: y must have shape (n) or (n, 1), got %v", y.Shape())
	}
	if y.Shape()[0] != n {
		return nil, fmt.Errorf("gp.NewExact: x has %d rows but y has %d values", n, y.Shape()[0])
	}
	if x.DType() != y.DType() {
		return nil, fmt.Errorf("gp.NewExact: x is %v but y is %v", x.DType(), y.DType())
	}
	if i := firstNonFinite(x.Values()); i >= 0 {
		return nil, fmt.Errorf("gp.NewExact: x holds a non-finite value at row %d", i/x.Shape()[1])
	}
	yv := y.Values()
	if i := firstNonFinite(yv); i >= 0 {
		return nil, fmt.Errorf("gp.NewExact: y[%d] = %g is not finite", i, yv[i])
	}
	dt := x.DType()
	if o.MeanFunc != nil && (o.Mean != ZeroMean || o.Inference != Cholesky) {
		return nil, errors.New("gp.NewExact: MeanFunc needs Mean = ZeroMean and Cholesky inference")
	}
	switch o.Inference {
	case Cholesky:
	case CG:
		if err := o.CG.check(); err != nil {
			return nil, err
		}
		if o.NoiseFree {
			return nil, errors.New("gp.NewExact: CG inference needs observation noise; NoiseFree is set")
		}
		k, err := newKernelOp("gp.NewExact", kern, nil, 0, x.Shape()[1], nil, o.CG.BlockRows)
		if err != nil {
			return nil, err
		}
		if o.CG.Float32 {
			if err := k.useFloat32("gp.NewExact"); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("gp.NewExact: unknown inference %d", o.Inference)
	}
	m = &Exact{kernel: kern, x: x.Clone(), yMean: 0, yStd: 1, log: o.Log, inference: o.Inference, cg: o.CG.withDefaults(), meanFn: o.MeanFunc}
	if o.Normalize {
		m.yMean, m.yStd = meanStd(yv)
		if m.yStd == 0 {
			m.yStd = 1
		}
		for i := range yv {
			yv[i] = (yv[i] - m.yMean) / m.yStd
		}
	}
	m.y = tensor.FromValues(dt, yv, n, 1)
	if !o.NoiseFree {
		noise, floor, err := noiseStart("gp.NewExact", o.Noise, o.NoiseFloor, dt)
		if err != nil {
			return nil, err
		}
		m.noise = kernel.NewHyperparam("noise", noise)
		m.noise.SetFloor(floor)
		m.noise.SetFixed(o.FixNoise)
	}
	if o.Mean == ConstantMean {
		m.mean = kernel.NewUnconstrainedHyperparam("mean", 0)
	}
	ps := append([]*kernel.Hyperparam(nil), kern.Hyperparams()...)
	if m.noise != nil {
		ps = append(ps, m.noise)
	}
	if m.mean != nil {
		ps = append(ps, m.mean)
	}
	if m.meanFn != nil {
		ps = append(ps, m.meanFn.Hyperparams()...)
	}
	m.params = kernel.UniqueHyperparams(ps)
	for _, p := range m.params {
		p.SetDType(dt)
	}
	return m, nil
}

func firstNonFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

// Kernel returns the model's kernel.
func (m *Exact) Kernel() kernel.Kernel { return m.kernel }

// Hyperparams returns every hyperparameter: the kernel's, then "noise"
// (unless noise-free), "mean" (with a constant mean) and the MeanFunc's.
func (m *Exact) Hyperparams() []*kernel.Hyperparam { return m.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (m *Exact) Hyperparam(name string) *kernel.Hyperparam { return kernel.Lookup(m.params, name) }

// Hyperparameters returns the constrained values of every hyperparameter
// by name.
func (m *Exact) Hyperparameters() map[string][]float64 {
	out := make(map[string][]float64, len(m.params))
	for _, p := range m.params {
		out[p.Name()] = p.Get()
	}
	return out
}

// Noise returns the noise-variance hyperparameter (nil when noise-free).
func (m *Exact) Noise() *kernel.Hyperparam { return m.noise }

// N returns the number of training points.
func (m *Exact) N() int { return m.x.Shape()[0] }

// X returns the training inputs.
func (m *Exact) X() *tensor.Tensor { return m.x }

// YScale returns the mean and standard deviation used to normalise y (0
// and 1 without normalisation).
func (m *Exact) YScale() (mean, std float64) { return m.yMean, m.yStd }

// initialJitter is the first jitter tried when a factorisation fails.
func initialJitter(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return 1e-5
	}
	return 1e-8
}

// jitterTries is the number of jitters tried (×10 each) after a failure.
const jitterTries = 5

// CholeskyError reports a covariance matrix that stayed not positive
// definite after jitter escalation. errors.As finds the last factorisation's
// *tensor.NotPositiveDefiniteError, and errors.Is(err,
// tensor.ErrNotPositiveDefinite) holds.
type CholeskyError struct {
	N      int     // size of the matrix
	Tries  int     // jitters tried after the first failure
	Jitter float64 // the largest jitter tried
	Err    *tensor.NotPositiveDefiniteError
}

// Error names the failing pivot of the last try.
func (e *CholeskyError) Error() string {
	return fmt.Sprintf("gp: %d×%d covariance is not positive definite after %d jitter tries up to %g: pivot %d is %g",
		e.N, e.N, e.Tries, e.Jitter, e.Err.Pivot, e.Err.Value)
}

// Unwrap returns the factorisation's error.
func (e *CholeskyError) Unwrap() error { return e.Err }

// tryCholesky factors a, turning a not-positive-definite panic into an
// error.
func tryCholesky(a *graph.Node) (l *graph.Node, err error) {
	defer tensor.Recover(&err)
	return graph.Cholesky(a), nil
}

// cholesky factors a + jitter·I, escalating the jitter on failure: first
// without jitter when zeroFirst is set, then 1e-8 (1e-5 in float32), ×10 per
// try, jitterTries values in all. Each escalation is reported before it is
// tried.
func (m *Exact) cholesky(a *graph.Node, zeroFirst bool) (l *graph.Node, jitter float64, err error) {
	g, dt, n := a.Graph(), a.DType(), a.Shape()[0]
	var jitters []float64
	if zeroFirst {
		jitters = append(jitters, 0)
	}
	for i, j := 0, initialJitter(dt); i < jitterTries; i, j = i+1, j*10 {
		jitters = append(jitters, j)
	}
	for i, jitter := range jitters {
		ak := a
		if jitter > 0 {
			ak = graph.AddDiag(a, g.Scalar(dt, jitter))
		}
		l, err = tryCholesky(ak)
		if err == nil {
			return l, jitter, nil
		}
		var npd *tensor.NotPositiveDefiniteError
		if !errors.As(err, &npd) {
			return nil, jitter, err
		}
		// NaN does not go away with jitter.
		if math.IsNaN(npd.Value) || i == len(jitters)-1 {
			tries := i
			if !zeroFirst {
				tries++
			}
			return nil, jitter, &CholeskyError{N: n, Tries: tries, Jitter: jitter, Err: npd}
		}
		m.report(jitters[i+1], npd)
	}
	panic("unreachable")
}

// report passes a jitter escalation to Fit's hook or the Log option.
func (m *Exact) report(jitter float64, cause error) {
	if m.hook != nil {
		m.hook(jitter, cause)
		return
	}
	if m.log != nil {
		m.log(fmt.Sprintf("gp: Cholesky failed (%v); retrying with jitter %g", cause, jitter))
	}
}

// trainCov returns the training covariance Kθ(X, X) + σ²I and the
// constant node of X.
func (m *Exact) trainCov(g *graph.Graph) (k, x *graph.Node) {
	x = g.Const(m.x)
	k = m.kernel.K(x, x)
	if m.noise != nil {
		k = graph.AddDiag(k, m.noise.Node(g))
	}
	return k, x
}

// residual returns y − μ as an (n, 1) node.
func (m *Exact) residual(g *graph.Graph) *graph.Node {
	y := g.Const(m.y)
	if m.meanFn != nil {
		return graph.Sub(y, graph.Reshape(m.meanFn.Mean(g.Const(m.x)), m.N(), 1))
	}
	if m.mean == nil {
		return y
	}
	return graph.Sub(y, m.mean.Node(g))
}

// LogMarginalLikelihood returns log p(y | X, θ) as a scalar node of g,
//
//	−½ yᵀK⁻¹y − Σᵢ log Lᵢᵢ − (n/2) log 2π,   K = Kθ + σ²I = LLᵀ,
//
// of the (normalised) targets, differentiable with respect to every
// hyperparameter's RawNode(g). The quadratic form is ‖L⁻¹y‖² by a
// triangular solve: no inverse is formed. If K is not positive definite,
// jitter is added (see CholeskyError); the error is returned when that
// fails.
//
// With CG inference the node holds the stochastic estimate, and its
// gradient the stochastic gradient estimate (see CG and CGOptions); an
// error reports a solve that did not converge, with its residual.
func (m *Exact) LogMarginalLikelihood(g *graph.Graph) (lml *graph.Node, err error) {
	defer tensor.Recover(&err)
	if m.inference == CG {
		return m.cgLogMarginalLikelihood(g)
	}
	k, _ := m.trainCov(g)
	l, _, err := m.cholesky(k, true)
	if err != nil {
		return nil, err
	}
	v := graph.TriSolve(l, m.residual(g), true, false) // L⁻¹(y − μ)
	quad := graph.Sum(graph.Square(v), nil, false)
	half := graph.MulScalar(graph.LogDetChol(l), 0.5) // Σ log Lᵢᵢ
	n := float64(m.N())
	lml = graph.AddScalar(graph.Neg(graph.Add(graph.MulScalar(quad, 0.5), half)), -0.5*n*math.Log(2*math.Pi))
	return lml, nil
}

// LogPrior returns Σ log p(θ) over the hyperparameters with priors as a
// scalar node of g, or nil when none has a prior.
func (m *Exact) LogPrior(g *graph.Graph) *graph.Node {
	var out *graph.Node
	for _, p := range m.params {
		lp := p.LogPrior(g)
		if lp == nil {
			continue
		}
		if out == nil {
			out = lp
		} else {
			out = graph.Add(out, lp)
		}
	}
	return out
}

// noiseStart returns the initial noise variance (default 0.1) and its
// floor (default 1e-6, 1e-4 in float32, where smaller noise leaves the
// Cholesky factor too little room), or an error naming op when the noise
// does not exceed the floor.
func noiseStart(op string, noise, floor float64, dt tensor.DType) (float64, float64, error) {
	if noise == 0 {
		noise = 0.1
	}
	if floor == 0 {
		floor = 1e-6
		if dt == tensor.Float32 {
			floor = 1e-4
		}
	}
	if !(noise > floor) {
		return 0, 0, fmt.Errorf("%s: noise %g must exceed its floor %g", op, noise, floor)
	}
	return noise, floor, nil
}
