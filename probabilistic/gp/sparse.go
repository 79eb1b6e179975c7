package gp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// SparseOptions configures FitSparse and NewSparse: the model (Kernel to
// Jitter) and the fit (Restarts and after, which NewSparse ignores). The
// zero value, with a Kernel, gives a learnable noise variance starting at
// 0.1, learnable inducing inputs starting at up to 20 evenly spaced rows
// of x, a jitter of 1e-6 on K(z, z) and one L-BFGS run of 100 iterations.
type SparseOptions struct {
	// Kernel is the covariance function; it is required.
	Kernel kernel.Kernel
	// Inducing holds the starting inducing inputs z (m, d) (copied); nil
	// means min(n, 20) evenly spaced rows of x.
	Inducing *tensor.Tensor
	// Noise is the initial noise variance σ² ("noise"); zero means 0.1.
	Noise float64
	// NoiseFloor is the lower bound of σ²; zero means 1e-6.
	NoiseFloor float64
	// FixNoise keeps σ² at Noise during fitting.
	FixNoise bool
	// FixInducing keeps the inducing inputs where they are during fitting.
	FixInducing bool
	// Jitter is added to the diagonal of K(z, z) (inducing inputs may
	// coincide, making it singular); zero means 1e-6.
	Jitter float64

	// Restarts is the number of extra L-BFGS starts from random
	// hyperparameters (the inducing inputs start where they were); zero
	// means none.
	Restarts int
	// Seed seeds the restarts' starting points.
	Seed uint64
	// MaxIter is the number of L-BFGS iterations per start; zero means 100.
	MaxIter int
	// Bounds limits hyperparameters by name, as in ExactOptions.
	Bounds map[string][2]float64
	// Progress, if set, receives every iteration.
	Progress func(FitEvent)
}

// Sparse is sparse GP regression with m inducing inputs z and Titsias'
// (2009) collapsed variational bound, O(nm²) instead of O(n³). The
// inducing inputs are graph variables, so fitting moves them along with
// the hyperparameters. It works in float64 with a zero prior mean.
type Sparse struct {
	kernel kernel.Kernel
	x, y   *tensor.Tensor // (n, d), (n, 1) float64
	z      *nn.Param      // (m, d) inducing inputs
	noise  *kernel.Hyperparam
	params []*kernel.Hyperparam
	jitter float64
	fixZ   bool
	fitted *FitResult
}

// FitSparse returns a sparse GP regression model of y (n) or (n, 1) on x
// (n, d) whose hyperparameters and (unless FixInducing) inducing inputs
// maximise Titsias' bound plus the log priors, by L-BFGS from the kernel's
// current hyperparameters and opts.Restarts random starts (restarts draw
// new hyperparameters and start the inducing inputs from opts.Inducing).
// Bad data or options return an error and no model, as does a fit that
// fails from every start. If the kept start used all MaxIter L-BFGS
// iterations without meeting its tolerance, the model comes with a
// *tensor.NotConvergedError. If ctx is cancelled it returns promptly: the
// model at the best finished start (the initial values if none finished)
// with the error wrapping ctx.Err().
func FitSparse(ctx context.Context, x, y *tensor.Tensor, opts SparseOptions) (*Sparse, error) {
	s, err := NewSparse(x, y, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitSparse: %w", err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := s.fit(ctx, fitOptions{Restarts: opts.Restarts, Seed: opts.Seed, MaxIter: opts.MaxIter, Bounds: opts.Bounds, Progress: opts.Progress})
	s.fitted = res
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if err == nil {
		err = budgetSpent("gp.FitSparse", res, opts.MaxIter)
	}
	return s, err
}

// FitResult returns the outcome of FitSparse's fit, or nil for a model made
// by NewSparse.
func (s *Sparse) FitResult() *FitResult { return s.fitted }

// NewSparse returns a sparse GP regression model of y (n) or (n, 1) on x
// (n, d) at the kernel's current hyperparameters and the given inducing
// inputs, without fitting (the fit fields of opts are ignored): for
// evaluating the bound at given values, or for hyperparameters found
// elsewhere. FitSparse is the usual entry point. It returns an error for a
// nil kernel, bad shapes or non-finite data.
func NewSparse(x, y *tensor.Tensor, opts SparseOptions) (s *Sparse, err error) {
	defer tensor.Recover(&err)
	o := opts
	k := o.Kernel
	if k == nil || x == nil || y == nil {
		return nil, errors.New("gp.NewSparse: nil Kernel, x or y")
	}
	if x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("gp.NewSparse: x must be a non-empty (n, d) matrix, got shape %v", x.Shape())
	}
	n, d := x.Shape()[0], x.Shape()[1]
	z := o.Inducing
	if z == nil {
		m := min(n, 20)
		rows := make([]float64, 0, m*d)
		xv := x.Values()
		for i := 0; i < m; i++ {
			r := i * n / m
			rows = append(rows, xv[r*d:(r+1)*d]...)
		}
		z = tensor.FromFloat64s(rows, m, d)
	}
	if !(y.Dim() == 1 || (y.Dim() == 2 && y.Shape()[1] == 1)) || y.Shape()[0] != n {
		return nil, fmt.Errorf("gp.NewSparse: y must have shape (%d) or (%d, 1), got %v", n, n, y.Shape())
	}
	if z.Dim() != 2 || z.Shape()[0] == 0 || z.Shape()[1] != d {
		return nil, fmt.Errorf("gp.NewSparse: z must be a non-empty (m, %d) matrix, got shape %v", d, z.Shape())
	}
	for i, t := range []*tensor.Tensor{x, y, z} { // in order: a NaN in x reaches the default z
		if nonFiniteAt(t.Values()) >= 0 {
			return nil, fmt.Errorf("gp.NewSparse: %s holds a non-finite value", [...]string{"x", "y", "z"}[i])
		}
	}
	noise, floor := o.Noise, o.NoiseFloor
	if noise == 0 {
		noise = 0.1
	}
	if floor == 0 {
		floor = 1e-6
	}
	if !(noise > floor) {
		return nil, fmt.Errorf("gp.NewSparse: noise %g must exceed its floor %g", noise, floor)
	}
	s = &Sparse{
		kernel: k,
		x:      tensor.FromFloat64s(x.Values(), n, d),
		y:      tensor.FromFloat64s(y.Values(), n, 1),
		z:      nn.NewParam(tensor.FromFloat64s(z.Values(), z.Shape()...)),
		jitter: o.Jitter,
		fixZ:   o.FixInducing,
	}
	if s.jitter == 0 {
		s.jitter = 1e-6
	}
	s.noise = kernel.NewHyperparam("noise", noise).SetFloor(floor)
	if err := s.noise.Set(noise); err != nil {
		return nil, err
	}
	s.noise.SetFixed(o.FixNoise)
	s.params = kernel.UniqueHyperparams(append(append([]*kernel.Hyperparam(nil), k.Hyperparams()...), s.noise))
	for _, p := range s.params {
		p.SetDType(tensor.Float64)
	}
	return s, nil
}

// Params returns the kernel's hyperparameters followed by "noise".
func (s *Sparse) Hyperparams() []*kernel.Hyperparam { return s.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (s *Sparse) Hyperparam(name string) *kernel.Hyperparam { return kernel.Lookup(s.params, name) }

// Noise returns the noise-variance hyperparameter.
func (s *Sparse) Noise() *kernel.Hyperparam { return s.noise }

// Inducing returns the inducing inputs (m, d); fitting updates them in
// place.
func (s *Sparse) Inducing() *tensor.Tensor { return s.z.Value }

// InducingNode returns the graph variable bound to the inducing inputs in
// g, to differentiate with respect to.
func (s *Sparse) InducingNode(g *graph.Graph) *graph.Node { return s.z.Node(g) }

// ELBO returns Titsias' collapsed bound on the log marginal likelihood as
// a scalar node of g, differentiable with respect to the hyperparameters'
// RawNode(g) and InducingNode(g) (see TitsiasBound).
func (s *Sparse) ELBO(g *graph.Graph) (elbo *graph.Node, err error) {
	defer tensor.Recover(&err)
	return TitsiasBound(s.kernel, g.Const(s.x), g.Const(s.y), s.z.Node(g), s.noise.Node(g), s.jitter), nil
}

// TitsiasBound returns the collapsed variational lower bound of Titsias
// (2009) on log p(y) for inputs x (n, d), targets y (n, 1), inducing
// inputs z (m, d) and noise variance noise (a scalar node):
//
//	ELBO = log N(y | 0, Qnn + σ²I) − tr(Knn − Qnn)/(2σ²),  Qnn = Knm Kmm⁻¹ Kmn,
//
// computed as GPflow's SGPR does, with Cholesky factors only of m×m
// matrices: L = chol(Kmm + jitter·I), A = L⁻¹Kmn/σ, LB = chol(I + AAᵀ),
// c = LB⁻¹Ay/σ, and
//
//	ELBO = −(n/2) log 2πσ² − Σ log LBᵢᵢ − yᵀy/(2σ²) + cᵀc/2 − tr Knn/(2σ²) + tr(AAᵀ)/2.
//
// It panics with a *tensor.Error on mismatched shapes, and with a
// *graph.DataError if Kmm + jitter·I is not positive definite.
func TitsiasBound(k kernel.Kernel, x, y, z, noise *graph.Node, jitter float64) *graph.Node {
	g, dt := x.Graph(), x.DType()
	n := x.Shape()[0]
	if y.Dim() != 2 || y.Shape()[0] != n || y.Shape()[1] != 1 || noise.Size() != 1 {
		tensor.Fail("gp.TitsiasBound", "want y (%d, 1) and a scalar noise, got %v and %v", n, y.Shape(), noise.Shape())
	}
	noise = graph.Reshape(noise)
	sigma := graph.Sqrt(noise)
	kmm := k.K(z, z)
	if jitter > 0 {
		kmm = graph.AddDiag(kmm, g.Scalar(dt, jitter))
	}
	l := graph.Cholesky(kmm)
	a := graph.Div(graph.TriSolve(l, k.K(z, x), true, false), sigma) // (m, n)
	aat := graph.MatMulT(a, a, false, true)
	lb := graph.Cholesky(graph.AddDiag(aat, g.Scalar(dt, 1)))
	c := graph.Div(graph.TriSolve(lb, graph.MatMul(a, y), true, false), sigma) // (m, 1)
	sumSq := func(v *graph.Node) *graph.Node { return graph.Sum(graph.Square(v), nil, false) }
	half := func(v *graph.Node) *graph.Node { return graph.MulScalar(v, 0.5) }
	bound := graph.MulScalar(graph.Log(noise), -0.5*float64(n))
	bound = graph.AddScalar(bound, -0.5*float64(n)*math.Log(2*math.Pi))
	bound = graph.Sub(bound, half(graph.LogDetChol(lb)))
	bound = graph.Sub(bound, half(graph.Div(sumSq(y), noise)))
	bound = graph.Add(bound, half(sumSq(c)))
	bound = graph.Sub(bound, half(graph.Div(graph.Sum(k.Diag(x), nil, false), noise)))
	return graph.Add(bound, half(sumSq(a))) // tr(AAᵀ) = ‖A‖²_F
}

// fit maximises the bound plus the log priors over the free
// hyperparameters and (unless FixInducing) the inducing inputs (see
// FitSparse).
func (s *Sparse) fit(ctx context.Context, opts fitOptions) (*FitResult, error) {
	var slots []fitSlot
	for _, p := range s.params {
		if !p.Fixed() {
			slots = append(slots, paramSlot(p))
		}
	}
	if !s.fixZ {
		slots = append(slots, fitSlot{value: s.z.Value, node: s.z.Node})
	}
	build := func(g *graph.Graph) (*graph.Node, float64, error) {
		elbo, err := s.ELBO(g)
		if err != nil {
			return nil, 0, err
		}
		obj := elbo
		if lp := logPrior(g, s.params); lp != nil {
			obj = graph.Add(obj, lp)
		}
		return obj, elbo.Item(), nil
	}
	return fitApprox(ctx, "gp.FitSparse", s.params, slots, build, opts)
}

// Predict returns the approximate posterior predictive mean and variances
// at xs (m, d) (Titsias 2009; GPflow's SGPR.predict_f):
//
//	mean = tmp2ᵀc,  var = diag Kss − Σ tmp1² + Σ tmp2²,
//	tmp1 = L⁻¹Kzs, tmp2 = LB⁻¹tmp1.
//
// It returns an error for inputs of the wrong shape, or if a
// factorisation fails.
func (s *Sparse) Predict(xs *tensor.Tensor) (pred *Prediction, err error) {
	defer tensor.Recover(&err)
	d := s.x.Shape()[1]
	if xs == nil || xs.Dim() != 2 || xs.Shape()[1] != d {
		return nil, fmt.Errorf("gp.Sparse.Predict: inputs must be an (m, %d) matrix", d)
	}
	g := graph.New()
	x, y, z := g.Const(s.x), g.Const(s.y), g.Const(s.z.Value)
	xt := g.Const(tensor.FromFloat64s(xs.Values(), xs.Shape()...))
	noise := s.noise.Node(g)
	sigma := graph.Sqrt(noise)
	kmm := graph.AddDiag(s.kernel.K(z, z), g.Scalar(tensor.Float64, s.jitter))
	l := graph.Cholesky(kmm)
	a := graph.Div(graph.TriSolve(l, s.kernel.K(z, x), true, false), sigma)
	lb := graph.Cholesky(graph.AddDiag(graph.MatMulT(a, a, false, true), g.Scalar(tensor.Float64, 1)))
	c := graph.Div(graph.TriSolve(lb, graph.MatMul(a, y), true, false), sigma)
	tmp1 := graph.TriSolve(l, s.kernel.K(z, xt), true, false)
	tmp2 := graph.TriSolve(lb, tmp1, true, false)
	ms := xs.Shape()[0]
	mean := graph.Reshape(graph.MatMulT(tmp2, c, true, false), ms)
	v := graph.Add(graph.Sub(s.kernel.Diag(xt), graph.Sum(graph.Square(tmp1), []int{0}, false)), graph.Sum(graph.Square(tmp2), []int{0}, false))
	v = graph.Clamp(v, 0, math.Inf(1))
	pred = &Prediction{Mean: mean.Value().Clone(), Var: v.Value().Clone()}
	pred.NoisyVar = tensor.AddScalar(pred.Var, s.noise.Value())
	return pred, nil
}
