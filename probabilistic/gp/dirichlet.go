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

// DirichletOptions configures FitDirichletClassifier and
// NewDirichletClassifier: the model (Kernel to Noise) and the fit
// (Optimizer and the fields after it, which NewDirichletClassifier
// ignores). The zero value, with a Kernel, gives αε = 0.01, a learnable
// noise starting at 0.1, 256 Monte Carlo draws per prediction and 100 Adam
// steps at rate 0.01.
type DirichletOptions struct {
	// Kernel is the covariance function shared by the classes' latent
	// functions; it is required. A kernel.Deep makes the model deep kernel
	// learning, its network trained with the rest.
	Kernel kernel.Kernel
	// AlphaEpsilon is the Dirichlet concentration αε given to the classes
	// a point does not belong to (Milios et al. 2018); zero means 0.01.
	// Smaller values make the transformed targets, and so the predicted
	// probabilities, more confident.
	AlphaEpsilon float64
	// Noise is the initial variance of the learnable observation noise
	// ("noise") shared by all points and classes; zero means 0.1.
	Noise float64
	// Samples is the number of Monte Carlo draws of the latent functions
	// per test point in PredictProba; zero means 256.
	Samples int
	// Seed seeds PredictProba's draws and the restarts.
	Seed uint64

	// Optimizer is "adam" (the default here, for the many parameters of a
	// deep kernel) or "lbfgs".
	Optimizer string
	// Restarts is the number of extra L-BFGS starts from random points
	// (log-uniform factors in [1/10, 10] of positive hyperparameters, a
	// standard normal added to the others), after the start from the
	// initial values; the best is kept. Adam ignores it.
	Restarts int
	// MaxIter is the number of Adam steps (zero means 100) or L-BFGS
	// iterations (zero means 100).
	MaxIter int
	// LR is Adam's learning rate; zero means 0.01.
	LR float64
	// Progress, if set, receives every iteration of the fit.
	Progress func(FitEvent)
}

// DirichletClassifier is Gaussian-process classification by regression on
// Dirichlet-transformed labels (Milios, Camoriano, Michiardi, Rosasco and
// Filippone 2018, Dirichlet-based Gaussian processes for large-scale
// calibrated classification): a label c becomes, for every class j, the
// target ỹⱼ = log αⱼ − σ̃²ⱼ/2 with αⱼ = αε + [j = c] and σ̃²ⱼ = log(1/αⱼ + 1),
// the moments of the log of a Gamma(αⱼ) variable, so that exp of the
// latent functions behaves like the Dirichlet posterior's concentrations.
// One GP per class is fitted by exact regression with a constant mean per
// class ("mean") and one shared kernel, and the class probabilities are
// the Monte Carlo average of softmax(f) over the latent posterior.
//
// It departs from the paper in one place, to keep one Cholesky factor per
// evaluation instead of one per class: the noise is a learnable variance
// shared by all points and classes instead of the fixed σ̃²ⱼ. This is the
// form of GP regression on (transformed) one-hot targets that deep kernel
// learning uses for classification with exact inference; it keeps the
// transformation's log scale, which gives the softmax calibrated
// confidences.
//
// A model is not safe for concurrent use.
type DirichletClassifier struct {
	kernel  kernel.Kernel
	x       *tensor.Tensor // (n, d)
	y       *tensor.Tensor // (n, C) transformed targets
	classes int
	noise   *kernel.Hyperparam
	mean    *kernel.Hyperparam // (C)
	params  []*kernel.Hyperparam
	samples int
	seed    uint64
	fitted  *FitResult
}

// FitDirichletClassifier returns a Dirichlet GP classifier of labels (in
// 0 … C−1, C = the largest label + 1) on the inputs x (n, d) whose
// hyperparameters (the kernel's, including a deep kernel's network, the
// noise and the per-class means) maximise the log marginal likelihood of
// the transformed targets, by Adam (or L-BFGS) from their initial values.
//
// Bad data or options (see NewDirichletClassifier) return an error and no
// model. A fit whose first evaluation fails returns that error and no
// model; one that stops on a later failure keeps the best point and
// returns it with the error. An L-BFGS run that used all its iterations
// returns the model with a *tensor.NotConvergedError; Adam runs a fixed
// number of steps. If ctx is cancelled it returns the model at the best
// point so far with the error wrapping ctx.Err().
func FitDirichletClassifier(ctx context.Context, x *tensor.Tensor, labels []int, opts DirichletOptions) (*DirichletClassifier, error) {
	m, err := NewDirichletClassifier(x, labels, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitDirichletClassifier: %w", err)
	}
	if opts.Optimizer == "" {
		opts.Optimizer = "adam"
	}
	if opts.LR == 0 {
		opts.LR = 0.01
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 100
	}
	fo := fitOptions{Optimizer: opts.Optimizer, Restarts: opts.Restarts, Seed: opts.Seed, MaxIter: opts.MaxIter, LR: opts.LR, Progress: opts.Progress}
	obj := func(g *graph.Graph) (*graph.Node, *graph.Node, error) {
		l, err := m.LogMarginalLikelihood(g)
		return l, l, err
	}
	res, err := hyperFit(ctx, "gp.FitDirichletClassifier", m.params, obj, fo)
	if res == nil {
		if ctx != nil && ctx.Err() != nil {
			return m, err // cancelled before a start finished: the initial values
		}
		return nil, err
	}
	m.fitted = res
	if err == nil && res.Restarts[0].Err != nil {
		err = fmt.Errorf("gp.FitDirichletClassifier: stopped early: %w", res.Restarts[0].Err)
	}
	if err == nil && opts.Optimizer == "lbfgs" {
		err = budgetSpent("gp.FitDirichletClassifier", res, opts.MaxIter)
	}
	return m, err
}

// NewDirichletClassifier returns a Dirichlet GP classifier conditioned at
// the kernel's current hyperparameters, without fitting them. The
// hyperparameters (a deep kernel's network included) are converted to x's
// dtype.
//
// It returns an error if the kernel is nil, x is not a matrix with rows
// and columns, labels do not match x's rows, a label is negative, there
// are fewer than two classes, x holds NaN or Inf, or an option is out of
// range.
func NewDirichletClassifier(x *tensor.Tensor, labels []int, opts DirichletOptions) (m *DirichletClassifier, err error) {
	defer tensor.Recover(&err)
	const op = "gp.NewDirichletClassifier"
	if opts.Kernel == nil {
		return nil, errors.New(op + ": nil kernel")
	}
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("%s: x must be an (n, d) matrix with data", op)
	}
	n := x.Shape()[0]
	if len(labels) != n {
		return nil, fmt.Errorf("%s: x has %d rows but there are %d labels", op, n, len(labels))
	}
	classes := 0
	for i, l := range labels {
		if l < 0 {
			return nil, fmt.Errorf("%s: label %d at position %d is negative", op, l, i)
		}
		classes = max(classes, l+1)
	}
	if classes < 2 {
		return nil, fmt.Errorf("%s: a single class", op)
	}
	if i := firstNonFinite(x.Values()); i >= 0 {
		return nil, fmt.Errorf("%s: x holds a non-finite value at row %d", op, i/x.Shape()[1])
	}
	ae, noise, samples := opts.AlphaEpsilon, opts.Noise, opts.Samples
	if ae == 0 {
		ae = 0.01
	}
	if noise == 0 {
		noise = 0.1
	}
	if samples == 0 {
		samples = 256
	}
	if !(ae > 0) || !(noise > 0) || samples < 1 {
		return nil, fmt.Errorf("%s: AlphaEpsilon %g, Noise %g and Samples %d must be positive", op, ae, noise, samples)
	}
	dt := x.DType()
	yv := make([]float64, n*classes)
	mean := make([]float64, classes)
	for i, l := range labels {
		for j := range classes {
			a := ae
			if j == l {
				a += 1
			}
			s2 := math.Log(1/a + 1)
			yv[i*classes+j] = math.Log(a) - s2/2
			mean[j] += yv[i*classes+j] / float64(n)
		}
	}
	m = &DirichletClassifier{kernel: opts.Kernel, x: x.Clone(), y: tensor.FromValues(dt, yv, n, classes), classes: classes, samples: samples, seed: opts.Seed}
	floor := 1e-6
	if dt == tensor.Float32 {
		floor = 1e-4
	}
	m.noise = kernel.NewHyperparam("noise", math.Max(noise, 2*floor)).SetFloor(floor)
	m.mean = kernel.NewUnconstrainedHyperparam("mean", mean...)
	m.params = kernel.UniqueHyperparams(append(append([]*kernel.Hyperparam(nil), opts.Kernel.Hyperparams()...), m.noise, m.mean))
	for _, p := range m.params {
		p.SetDType(dt)
	}
	return m, nil
}

// Classes returns the number of classes C.
func (m *DirichletClassifier) Classes() int { return m.classes }

// Hyperparams returns every hyperparameter: the kernel's, "noise" and
// "mean".
func (m *DirichletClassifier) Hyperparams() []*kernel.Hyperparam { return m.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (m *DirichletClassifier) Hyperparam(name string) *kernel.Hyperparam {
	return kernel.Lookup(m.params, name)
}

// FitResult returns the outcome of the fit, or nil for a model made by
// NewDirichletClassifier.
func (m *DirichletClassifier) FitResult() *FitResult { return m.fitted }

// Targets returns the transformed targets (n, C).
func (m *DirichletClassifier) Targets() *tensor.Tensor { return m.y }

// factor returns the Cholesky factor of K + σ²I, the constant of X and
// the residual targets Ỹ − μ (n, C).
func (m *DirichletClassifier) factor(g *graph.Graph) (l, x, r *graph.Node, err error) {
	x = g.Const(m.x)
	k := graph.AddDiag(m.kernel.K(x, x), m.noise.Node(g))
	l, err = choleskyJitter(k, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	r = graph.Sub(g.Const(m.y), graph.Reshape(m.mean.Node(g), 1, m.classes))
	return l, x, r, nil
}

// LogMarginalLikelihood returns the sum over classes of the log marginal
// likelihoods of the transformed targets, a scalar node of g
// differentiable with respect to every hyperparameter's RawNode(g). It
// returns an error when K + σ²I cannot be factored even with jitter.
func (m *DirichletClassifier) LogMarginalLikelihood(g *graph.Graph) (lml *graph.Node, err error) {
	defer tensor.Recover(&err)
	l, _, r, err := m.factor(g)
	if err != nil {
		return nil, err
	}
	v := graph.TriSolve(l, r, true, false)
	quad := graph.Sum(graph.Square(v), nil, false)
	c, n := float64(m.classes), float64(m.x.Shape()[0])
	lml = graph.Neg(graph.MulScalar(graph.Add(quad, graph.MulScalar(graph.LogDetChol(l), c)), 0.5))
	return graph.AddScalar(lml, -0.5*n*c*math.Log(2*math.Pi)), nil
}

// Latent returns the posterior mean (m, C) and the latent variance (m),
// the same for every class, of the latent functions at xs (m, d). It
// returns an error for inputs of the wrong shape or dtype, or when the
// training covariance cannot be factored.
func (m *DirichletClassifier) Latent(xs *tensor.Tensor) (mean, variance *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	d := m.x.Shape()[1]
	if xs == nil || xs.Dim() != 2 || xs.Shape()[1] != d {
		return nil, nil, fmt.Errorf("gp.DirichletClassifier: test inputs must be an (m, %d) matrix", d)
	}
	if xs.DType() != m.x.DType() {
		return nil, nil, fmt.Errorf("gp.DirichletClassifier: test inputs are %v but the training inputs are %v", xs.DType(), m.x.DType())
	}
	g := graph.New()
	l, x, r, err := m.factor(g)
	if err != nil {
		return nil, nil, err
	}
	xn := g.Const(xs)
	a := graph.TriSolve(l, r, true, false)                 // L⁻¹(Ỹ − μ)  (n, C)
	v := graph.TriSolve(l, m.kernel.K(x, xn), true, false) // L⁻¹k(X, xs) (n, m)
	mn := graph.Add(graph.MatMulT(v, a, true, false), graph.Reshape(m.mean.Node(g), 1, m.classes))
	vr := graph.Clamp(graph.Sub(m.kernel.Diag(xn), graph.Sum(graph.Square(v), []int{0}, false)), 0, math.Inf(1))
	return mn.Value().Clone(), vr.Value().Clone(), nil
}

// PredictProba returns the class probabilities (m, C) at xs (m, d): the
// average of softmax(f) over Samples draws of the latent functions from
// their posterior (independent across classes), from a stream seeded by
// Seed, so the same inputs give the same numbers. It returns the errors of
// Latent.
func (m *DirichletClassifier) PredictProba(xs *tensor.Tensor) (*tensor.Tensor, error) {
	mean, variance, err := m.Latent(xs)
	if err != nil {
		return nil, err
	}
	rng := tensor.NewRNG(m.seed)
	ms, c := mean.Shape()[0], m.classes
	mv, vv := mean.Values(), variance.Values()
	out := make([]float64, ms*c)
	f := make([]float64, c)
	for i := range ms {
		sd := math.Sqrt(vv[i])
		row := mv[i*c : (i+1)*c]
		for range m.samples {
			mx := math.Inf(-1)
			for j := range c {
				f[j] = row[j] + sd*rng.NormFloat64()
				mx = math.Max(mx, f[j])
			}
			z := 0.0
			for j := range c {
				f[j] = math.Exp(f[j] - mx)
				z += f[j]
			}
			for j := range c {
				out[i*c+j] += f[j] / z / float64(m.samples)
			}
		}
	}
	return tensor.FromValues(xs.DType(), out, ms, c), nil
}

// Predict returns the most probable class of each row of xs (m, d) under
// PredictProba. It returns PredictProba's errors.
func (m *DirichletClassifier) Predict(xs *tensor.Tensor) ([]int, error) {
	p, err := m.PredictProba(xs)
	if err != nil {
		return nil, err
	}
	return tensor.ArgMax(p, 1), nil
}
