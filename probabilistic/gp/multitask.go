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

// MultitaskOptions configures FitMultitask and NewMultitask: the model
// (Kernels to Dense) and the hyperparameter fit (Optimizer and the fields
// after it, which NewMultitask ignores). With one kernel, the zero value
// gives the intrinsic coregionalisation model with a rank-1 task factor,
// per-task noise variances starting at 0.1, a zero mean, the Kronecker
// path where it applies and 100 L-BFGS iterations.
type MultitaskOptions struct {
	// Kernels are the latent processes' covariance functions kq, one per
	// coregionalisation term; at least one is required. One kernel is the
	// intrinsic coregionalisation model (ICM), several the linear model of
	// coregionalisation (LCM). Leave their output scale to the task
	// covariances: a Scale kernel's variance duplicates Bq's.
	Kernels []kernel.Kernel
	// Tasks is the number of tasks T. With task indices it is required;
	// with a grid of targets (n, T) zero means y's column count.
	Tasks int
	// Rank is the rank R of every Wq (T, R); zero means 1.
	Rank int
	// Noise is the initial observation-noise variance of every task
	// ("noise", one value per task); zero means 0.1.
	Noise float64
	// NoiseFloor is the lower bound of each noise variance; zero means
	// 1e-6 (float64) or 1e-4 (float32).
	NoiseFloor float64
	// FixNoise keeps the noise variances at Noise during fitting.
	FixNoise bool
	// Mean is ZeroMean or ConstantMean (one learnable constant per task,
	// "mean").
	Mean MeanKind
	// Dense builds the full covariance and factors it by Cholesky even when
	// the Kronecker path applies (to check one against the other, or for
	// kernels whose K(x, x) is singular enough to upset an eigensolver).
	Dense bool
	// Seed seeds the initial values of the Wq (entries N(0, 1/R)), so that
	// the fit starts away from the saddle at W = 0, and the restarts.
	Seed uint64

	// Optimizer is "lbfgs" (the default) or "adam".
	Optimizer string
	// Restarts is the number of extra L-BFGS starts from random points
	// (log-uniform factors in [1/10, 10] of positive hyperparameters, a
	// standard normal added to the others), after the start from the
	// initial values; the best is kept. Adam ignores it.
	Restarts int
	// MaxIter is the number of L-BFGS iterations (zero means 100) or Adam
	// steps (zero means 300).
	MaxIter int
	// LR is Adam's learning rate on the unconstrained values; zero means
	// 0.05.
	LR float64
	// Progress, if set, receives every iteration of the fit.
	Progress func(FitEvent)
}

// Multitask is Gaussian-process regression of T correlated outputs by the
// linear model of coregionalisation (Bonilla, Chai and Williams 2008,
// Multi-task Gaussian process prediction; Álvarez, Rosasco and Lawrence
// 2012, Kernels for vector-valued functions: a review):
//
//	cov(f_t(x), f_s(x')) = Σ_q Bq[t, s] kq(x, x'),   Bq = Wq Wqᵀ + diag(κq),
//
// with independent Gaussian noise of variance σ²_t on task t. One term is
// the intrinsic coregionalisation model (ICM).
//
// Observations come in one of two forms. A grid, every task observed at
// every input (y shaped (n, T)), has covariance B ⊗ K(X, X) + diag(σ²) ⊗ I
// under the ICM, which the Kronecker path factors through the
// eigendecompositions of D^-½ B D^-½ (T×T) and K(X, X) (n×n), in
// O(n³ + T³) time instead of O(n³T³) (Stegle et al. 2011, Efficient
// inference in matrix-variate Gaussian models). Otherwise (the LCM on a
// grid, or task indices with y shaped (N)) the covariance is built densely,
// in the Hadamard form Σ_q Bq[tᵢ, tⱼ] kq(xᵢ, xⱼ), and factored by
// Cholesky. Both are differentiable, so the task covariances, the kernels'
// hyperparameters and the noises are fitted together by gradient.
//
// A model is not safe for concurrent use.
type Multitask struct {
	kernels []kernel.Kernel
	w       []*kernel.Hyperparam // (T·R) each, row-major (T, R)
	kappa   []*kernel.Hyperparam // (T) each
	noise   *kernel.Hyperparam   // (T)
	mean    *kernel.Hyperparam   // (T), nil for the zero mean
	params  []*kernel.Hyperparam
	x       *tensor.Tensor // (n, d): the grid's inputs or every observation's
	y       *tensor.Tensor // (N) residual targets: task-major on a grid
	tasks   []int          // per observation; nil on a grid
	t, r    int
	kron    bool
	fitted  *FitResult
}

// FitMultitask returns a multitask GP on the inputs x (n, d) whose
// hyperparameters (every kernel's, the task covariances' Wq and κq, the
// noises and the mean) maximise the log marginal likelihood, by L-BFGS or
// Adam from their initial values. With tasks nil, y is a grid (n, T) of
// every task at every input; otherwise y is (n) or (n, 1) and tasks[i] in
// [0, opts.Tasks) is observation i's task.
//
// Bad data or options (see NewMultitask) return an error and no model. A
// fit whose first evaluation fails returns the error and no model; one
// that stops on a later failure keeps the best point with that error. An
// L-BFGS run that used all MaxIter iterations returns the model with a
// *tensor.NotConvergedError (Adam runs a fixed number of steps). If ctx is
// cancelled it returns the model at the best point so far with the error
// wrapping ctx.Err().
func FitMultitask(ctx context.Context, x, y *tensor.Tensor, tasks []int, opts MultitaskOptions) (*Multitask, error) {
	m, err := NewMultitask(x, y, tasks, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitMultitask: %w", err)
	}
	fo := fitOptions{Optimizer: opts.Optimizer, Restarts: opts.Restarts, Seed: opts.Seed, MaxIter: opts.MaxIter, LR: opts.LR, Progress: opts.Progress}
	obj := func(g *graph.Graph) (*graph.Node, *graph.Node, error) {
		l, err := m.LogMarginalLikelihood(g)
		return l, l, err
	}
	res, err := hyperFit(ctx, "gp.FitMultitask", m.params, obj, fo)
	if res == nil {
		if ctx != nil && ctx.Err() != nil {
			return m, err // cancelled before a start finished: the initial values
		}
		return nil, err
	}
	m.fitted = res
	if err == nil && res.Restarts[0].Err != nil {
		err = fmt.Errorf("gp.FitMultitask: stopped early: %w", res.Restarts[0].Err)
	}
	if err == nil && opts.Optimizer != "adam" {
		err = budgetSpent("gp.FitMultitask", res, opts.MaxIter)
	}
	return m, err
}

// NewMultitask returns a multitask GP conditioned at the initial
// hyperparameters (the fit fields of opts are ignored); see FitMultitask
// for the forms of y and tasks. The kernels keep their hyperparameter
// objects, converted to x's dtype.
//
// It returns an error if there is no kernel, x is not a matrix with rows
// and columns, y's shape does not fit x and tasks, a task index lies
// outside [0, Tasks), Tasks disagrees with y's columns, the dtypes differ,
// x or y hold NaN or Inf, or a size or noise is invalid.
func NewMultitask(x, y *tensor.Tensor, tasks []int, opts MultitaskOptions) (m *Multitask, err error) {
	defer tensor.Recover(&err)
	const op = "gp.NewMultitask"
	if len(opts.Kernels) == 0 {
		return nil, errors.New(op + ": no kernels")
	}
	for q, k := range opts.Kernels {
		if k == nil {
			return nil, fmt.Errorf("%s: kernel %d is nil", op, q)
		}
	}
	if x == nil || y == nil {
		return nil, errors.New(op + ": nil x or y")
	}
	if x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("%s: x must be an (n, d) matrix with data, got shape %v", op, x.Shape())
	}
	if x.DType() != y.DType() {
		return nil, fmt.Errorf("%s: x is %v but y is %v", op, x.DType(), y.DType())
	}
	n := x.Shape()[0]
	t := opts.Tasks
	if opts.Rank < 0 || t < 0 {
		return nil, fmt.Errorf("%s: negative Rank %d or Tasks %d", op, opts.Rank, t)
	}
	var yv []float64
	if tasks == nil {
		if y.Dim() != 2 || y.Shape()[0] != n {
			return nil, fmt.Errorf("%s: without task indices y must be an (n, T) grid with n = %d, got shape %v", op, n, y.Shape())
		}
		if t == 0 {
			t = y.Shape()[1]
		}
		if y.Shape()[1] != t {
			return nil, fmt.Errorf("%s: y has %d task columns but Tasks is %d", op, y.Shape()[1], t)
		}
		yv = tensor.Transpose(y).Contiguous().Values() // task-major: B ⊗ K
	} else {
		if !(y.Dim() == 1 || (y.Dim() == 2 && y.Shape()[1] == 1)) || y.Shape()[0] != n {
			return nil, fmt.Errorf("%s: with task indices y must have shape (%d) or (%d, 1), got %v", op, n, n, y.Shape())
		}
		if len(tasks) != n {
			return nil, fmt.Errorf("%s: %d task indices for %d observations", op, len(tasks), n)
		}
		if t == 0 {
			return nil, errors.New(op + ": Tasks is required with task indices")
		}
		if err := checkTasks(op, tasks, t); err != nil {
			return nil, err
		}
		yv = y.Values()
	}
	if i := firstNonFinite(x.Values()); i >= 0 {
		return nil, fmt.Errorf("%s: x holds a non-finite value at row %d", op, i/x.Shape()[1])
	}
	if i := firstNonFinite(yv); i >= 0 {
		return nil, fmt.Errorf("%s: y holds a non-finite value %g", op, yv[i])
	}
	r := opts.Rank
	if r == 0 {
		r = 1
	}
	dt := x.DType()
	m = &Multitask{kernels: opts.Kernels, x: x.Clone(), y: tensor.FromValues(dt, yv, len(yv)), t: t, r: r}
	if tasks != nil {
		m.tasks = append([]int(nil), tasks...)
	}
	m.kron = tasks == nil && len(opts.Kernels) == 1 && !opts.Dense
	noise, floor, err := noiseStart(op, opts.Noise, opts.NoiseFloor, dt)
	if err != nil {
		return nil, err
	}
	m.noise = kernel.NewHyperparam("noise", repeat(noise, t)...)
	m.noise.SetFloor(floor).SetFixed(opts.FixNoise)
	rng := tensor.NewRNG(opts.Seed)
	var ps []*kernel.Hyperparam
	for _, k := range opts.Kernels {
		ps = append(ps, k.Hyperparams()...)
	}
	for range opts.Kernels {
		w := make([]float64, t*r)
		for i := range w {
			w[i] = rng.NormFloat64() / math.Sqrt(float64(r))
		}
		m.w = append(m.w, kernel.NewUnconstrainedHyperparam("task.W", w...))
		m.kappa = append(m.kappa, kernel.NewHyperparam("task.kappa", repeat(1, t)...))
	}
	for q := range opts.Kernels {
		ps = append(ps, m.w[q], m.kappa[q])
	}
	ps = append(ps, m.noise)
	if opts.Mean == ConstantMean {
		m.mean = kernel.NewUnconstrainedHyperparam("mean", repeat(0, t)...)
		ps = append(ps, m.mean)
	}
	m.params = kernel.UniqueHyperparams(ps)
	for _, p := range m.params {
		p.SetDType(dt)
	}
	return m, nil
}

// checkTasks reports the first task index outside [0, t).
func checkTasks(op string, tasks []int, t int) error {
	for i, k := range tasks {
		if k < 0 || k >= t {
			return fmt.Errorf("%s: task index %d at position %d is outside [0, %d)", op, k, i, t)
		}
	}
	return nil
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Hyperparams returns every hyperparameter: the kernels', then each
// term's "task.W" and "task.kappa" (suffixed "task_2", … for later terms),
// "noise" and, with a constant mean, "mean".
func (m *Multitask) Hyperparams() []*kernel.Hyperparam { return m.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (m *Multitask) Hyperparam(name string) *kernel.Hyperparam {
	return kernel.Lookup(m.params, name)
}

// Tasks returns the number of tasks T.
func (m *Multitask) Tasks() int { return m.t }

// Kronecker reports whether the model uses the Kronecker path.
func (m *Multitask) Kronecker() bool { return m.kron }

// FitResult returns the outcome of FitMultitask's fit, or nil for a model
// made by NewMultitask.
func (m *Multitask) FitResult() *FitResult { return m.fitted }

// TaskCovariance returns term q's task covariance Bq = WqWqᵀ + diag(κq),
// shaped (T, T). It panics with a *tensor.Error if q is out of range.
func (m *Multitask) TaskCovariance(q int) *tensor.Tensor {
	if q < 0 || q >= len(m.w) {
		tensor.Fail("gp.Multitask.TaskCovariance", "term %d is outside [0, %d)", q, len(m.w))
	}
	return m.taskCov(graph.New(), q).Value().Clone()
}

// taskCov returns Bq = WqWqᵀ + diag(κq) as a (T, T) node of g.
func (m *Multitask) taskCov(g *graph.Graph, q int) *graph.Node {
	w := graph.Reshape(m.w[q].Node(g), m.t, m.r)
	return graph.AddDiag(graph.MatMulT(w, w, false, true), graph.Reshape(m.kappa[q].Node(g), m.t))
}

// vecT returns a (T) hyperparameter as a (T) node (a single task's is
// stored as a scalar).
func vecT(p *kernel.Hyperparam, g *graph.Graph, t int) *graph.Node {
	return graph.Reshape(p.Node(g), t)
}

// residual returns the targets minus the mean, (N, 1), in the order of m.y.
func (m *Multitask) residual(g *graph.Graph) *graph.Node {
	y := graph.Reshape(g.Const(m.y), m.y.Size(), 1)
	if m.mean == nil {
		return y
	}
	return graph.Sub(y, graph.Reshape(m.perObs(vecT(m.mean, g, m.t)), m.y.Size(), 1))
}

// perObs spreads a per-task (T) node over the observations, (N).
func (m *Multitask) perObs(v *graph.Node) *graph.Node {
	if m.tasks != nil {
		return graph.IndexSelect(v, 0, m.tasks)
	}
	n := m.x.Shape()[0]
	return graph.Reshape(graph.BroadcastTo(graph.Reshape(v, m.t, 1), m.t, n), m.t*n)
}

// kron returns a ⊗ b for a (p, p') and b (r, r') as a (p·r, p'·r') node.
func kron(a, b *graph.Node) *graph.Node {
	p, p2 := a.Shape()[0], a.Shape()[1]
	r, r2 := b.Shape()[0], b.Shape()[1]
	return graph.Reshape(graph.Mul(graph.Reshape(a, p, 1, p2, 1), graph.Reshape(b, 1, r, 1, r2)), p*r, p2*r2)
}

// denseCov returns the training covariance with noise, (N, N).
func (m *Multitask) denseCov(g *graph.Graph) *graph.Node {
	x := g.Const(m.x)
	var k *graph.Node
	for q, kq := range m.kernels {
		b := m.taskCov(g, q)
		var term *graph.Node
		if m.tasks == nil {
			term = kron(b, kq.K(x, x))
		} else {
			term = graph.Mul(graph.IndexSelect(graph.IndexSelect(b, 0, m.tasks), 1, m.tasks), kq.K(x, x))
		}
		if k == nil {
			k = term
		} else {
			k = graph.Add(k, term)
		}
	}
	return graph.AddDiag(k, m.perObs(vecT(m.noise, g, m.t)))
}

// kronFactors holds the Kronecker path's factorisation of
// B ⊗ K + D ⊗ I = (D^½ U ⊗ V) diag(λ ⊗ s + 1) (D^½ U ⊗ V)ᵀ.
type kronFactors struct {
	s      *graph.Node // (T) D^-½
	lam, u *graph.Node // eigenpairs of D^-½ B D^-½
	ev, v  *graph.Node // eigenpairs of K(X, X)
	den    *graph.Node // (T, n) λ_t s_j + 1
}

func (m *Multitask) kronFactor(g *graph.Graph) (f kronFactors, err error) {
	defer tensor.Recover(&err)
	x := g.Const(m.x)
	noise := vecT(m.noise, g, m.t)
	f.s = graph.Reciprocal(graph.Sqrt(noise))
	bt := graph.Mul(m.taskCov(g, 0), graph.Outer(f.s, f.s))
	f.lam, f.u = graph.Eigh(bt)
	f.ev, f.v = graph.Eigh(m.kernels[0].K(x, x))
	f.den = graph.AddScalar(graph.Mul(graph.Unsqueeze(f.lam, 1), graph.Unsqueeze(f.ev, 0)), 1)
	if mn := graph.Min(f.den, nil, false).Item(); !(mn > 0) {
		return f, fmt.Errorf("gp.Multitask: the Kronecker covariance is not positive definite (smallest eigenvalue factor %g); try Dense", mn)
	}
	return f, nil
}

// solve returns (B ⊗ K + D ⊗ I)⁻¹ rhs for rhs (N, c), N = T·n.
func (f kronFactors) solve(rhs *graph.Node) *graph.Node {
	t, n := f.den.Shape()[0], f.den.Shape()[1]
	c := rhs.Shape()[1]
	w := graph.Mul(graph.Reshape(rhs, t, n*c), graph.Unsqueeze(f.s, 1))
	w = graph.Reshape(graph.MatMulT(f.u, w, true, false), t, n, c)
	w = graph.MatMulT(f.v, w, true, false)
	w = graph.Div(w, graph.Unsqueeze(f.den, 2))
	w = graph.Reshape(graph.MatMul(f.v, w), t, n*c)
	w = graph.Mul(graph.MatMul(f.u, w), graph.Unsqueeze(f.s, 1))
	return graph.Reshape(w, t*n, c)
}

// LogMarginalLikelihood returns log p(y | X, tasks, θ) as a scalar node of
// g, differentiable with respect to every hyperparameter's RawNode(g): on
// the Kronecker path
//
//	−½ Σ Z²/(λ ⊗ s + 1) − ½ Σ log(λ ⊗ s + 1) − (n/2) Σ_t log σ²_t − (nT/2) log 2π,
//
// with Z = Uᵀ D^-½ (Y − μ)ᵀ V, and otherwise through the Cholesky factor of
// the dense covariance (with jitter escalation as in Exact). It returns an
// error when the covariance is not positive definite.
func (m *Multitask) LogMarginalLikelihood(g *graph.Graph) (lml *graph.Node, err error) {
	defer tensor.Recover(&err)
	nobs := float64(m.y.Size())
	r := m.residual(g)
	if m.kron {
		f, err := m.kronFactor(g)
		if err != nil {
			return nil, err
		}
		n := m.x.Shape()[0]
		yt := graph.Mul(graph.Reshape(r, m.t, n), graph.Unsqueeze(f.s, 1))
		z := graph.MatMul(graph.MatMulT(f.u, yt, true, false), f.v)
		quad := graph.Sum(graph.Div(graph.Square(z), f.den), nil, false)
		logdet := graph.Add(graph.Sum(graph.Log(f.den), nil, false),
			graph.MulScalar(graph.Sum(graph.Log(vecT(m.noise, g, m.t)), nil, false), float64(n)))
		return graph.AddScalar(graph.MulScalar(graph.Add(quad, logdet), -0.5), -0.5*nobs*math.Log(2*math.Pi)), nil
	}
	l, err := choleskyJitter(m.denseCov(g), nil)
	if err != nil {
		return nil, err
	}
	v := graph.TriSolve(l, r, true, false)
	quad := graph.Sum(graph.Square(v), nil, false)
	lml = graph.Neg(graph.MulScalar(graph.Add(quad, graph.LogDetChol(l)), 0.5)) // LogDetChol is log det = 2 Σ log Lᵢᵢ
	return graph.AddScalar(lml, -0.5*nobs*math.Log(2*math.Pi)), nil
}
