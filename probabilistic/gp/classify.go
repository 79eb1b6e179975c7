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

// Classifier is binary Gaussian-process classification with a logistic
// likelihood p(y = 1 | f) = σ(f), a zero-mean GP prior on the latent f and
// the Laplace approximation of the posterior (Rasmussen & Williams 2006,
// §3.4). It works in float64.
//
//	k := kernel.NewScale(kernel.NewRBF(1), 1)
//	c, err := gp.FitClassifier(ctx, x, labels, gp.ClassifierOptions{Kernel: k, Restarts: 2}) // labels 0/1
//	pred, err := c.Predict(xs) // pred.Prob = p(y = 1 | xs)
//
// The mode f̂ is found by Newton's method in the stable form of R&W
// Algorithm 3.1 (B = I + W^½ K W^½ and its Cholesky factor), which never
// inverts K, so duplicate inputs (a singular K) are fine.
type Classifier struct {
	kernel kernel.Kernel
	params []*kernel.Hyperparam
	x      *tensor.Tensor // (n, d) float64
	t      []float64      // targets in {0, 1}
	state  *laplaceState  // the mode at the current hyperparameters
	warm   []float64      // a of the last mode, to warm-start Newton
	fitted *FitResult

	maxNewton int
	tol       float64
}

// ClassifierOptions configures FitClassifier and NewClassifier: the model
// (Kernel to Tol) and the hyperparameter fit (Restarts and after, which
// NewClassifier ignores). The zero value, with a Kernel, means the
// defaults stated on each field.
type ClassifierOptions struct {
	// Kernel is the covariance function of the latent f; it is required.
	Kernel kernel.Kernel
	// MaxNewton bounds the Newton iterations of one mode search; zero
	// means 100.
	MaxNewton int
	// Tol stops Newton when the objective changes by less than
	// Tol·(1 + |Ψ|) and max |Δf| < √Tol; zero means 1e-12.
	Tol float64

	// Restarts is the number of extra L-BFGS starts from random
	// hyperparameters; zero means none.
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

// laplaceState is the Laplace approximation at one setting of the
// hyperparameters.
type laplaceState struct {
	raw   []float64      // the raw hyperparameter values it was computed at
	k     *tensor.Tensor // K (n, n)
	f     []float64      // the mode f̂ = K a
	a     []float64      // a = K⁻¹ f̂ = ∇log p(y | f̂) at convergence
	grad  []float64      // ∇log p(y | f̂)
	sw    []float64      // W^½ at f̂
	l     *tensor.Tensor // Cholesky factor of B = I + W^½ K W^½ at f̂
	lml   float64        // −½ aᵀf̂ + log p(y | f̂) − Σ log Lᵢᵢ
	iters int
	err   error // a *tensor.NotConvergedError when Newton ran out of iterations
}

// FitClassifier returns a GP classifier of labels (0 or 1, one per row)
// on the inputs x (n, d) whose hyperparameters maximise the Laplace
// approximation of the log marginal likelihood plus the log priors, by
// L-BFGS with gradients from LogMarginalLikelihoodNode (mode movement
// included; Rasmussen and Williams 2006, Algorithm 5.1), from the kernel's
// current hyperparameters and opts.Restarts random starts; it keeps the
// best. Bad data or options (see NewClassifier; both classes must occur)
// return an error and no model, as does a fit that fails from every start.
// If the kept start used all MaxIter L-BFGS iterations without meeting its
// tolerance, the model comes with a *tensor.NotConvergedError.
// If ctx is cancelled it returns promptly: the model at the best finished
// start (the initial hyperparameters if none finished) with the error
// wrapping ctx.Err().
func FitClassifier(ctx context.Context, x *tensor.Tensor, labels []int, opts ClassifierOptions) (*Classifier, error) {
	c, err := NewClassifier(x, labels, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitClassifier: %w", err)
	}
	seen := [2]bool{}
	for _, l := range labels {
		seen[l] = true
	}
	if !seen[0] || !seen[1] {
		return nil, fmt.Errorf("gp.FitClassifier: every label is %d; fitting needs both classes", labels[0])
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := c.fit(ctx, fitOptions{Restarts: opts.Restarts, Seed: opts.Seed, MaxIter: opts.MaxIter, Bounds: opts.Bounds, Progress: opts.Progress})
	c.fitted = res
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if err == nil {
		err = budgetSpent("gp.FitClassifier", res, opts.MaxIter)
	}
	return c, err
}

// FitResult returns the outcome of FitClassifier's fit, or nil for a
// classifier made by NewClassifier.
func (c *Classifier) FitResult() *FitResult { return c.fitted }

// NewClassifier returns a GP classifier of labels (0 or 1, one per row)
// on the inputs x (n, d) at the kernel's current hyperparameters, without
// fitting them (the fit fields of opts are ignored): for hyperparameters
// set by hand or found elsewhere, and for evaluating the approximate
// marginal likelihood at given values. FitClassifier is the usual entry
// point. The hyperparameters are converted to float64. It returns an
// error for a nil kernel, bad shapes, labels other than 0 and 1, or
// non-finite inputs.
func NewClassifier(x *tensor.Tensor, labels []int, opts ClassifierOptions) (c *Classifier, err error) {
	defer tensor.Recover(&err)
	k := opts.Kernel
	if k == nil || x == nil {
		return nil, errors.New("gp.NewClassifier: nil Kernel or x")
	}
	if opts.MaxNewton < 0 || opts.Tol < 0 || math.IsNaN(opts.Tol) {
		return nil, fmt.Errorf("gp.NewClassifier: negative MaxNewton %d or Tol %g", opts.MaxNewton, opts.Tol)
	}
	if x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("gp.NewClassifier: x must be a non-empty (n, d) matrix, got shape %v", x.Shape())
	}
	n := x.Shape()[0]
	if len(labels) != n {
		return nil, fmt.Errorf("gp.NewClassifier: x has %d rows but there are %d labels", n, len(labels))
	}
	xv := x.Values()
	if i := nonFiniteAt(xv); i >= 0 {
		return nil, fmt.Errorf("gp.NewClassifier: x holds a non-finite value at row %d", i/x.Shape()[1])
	}
	t := make([]float64, n)
	for i, l := range labels {
		if l != 0 && l != 1 {
			return nil, fmt.Errorf("gp.NewClassifier: label %d is %d; labels must be 0 or 1", i, l)
		}
		t[i] = float64(l)
	}
	c = &Classifier{kernel: k, params: kernel.UniqueHyperparams(k.Hyperparams()), x: tensor.FromFloat64s(xv, x.Shape()...), t: t, maxNewton: opts.MaxNewton, tol: opts.Tol}
	if c.maxNewton == 0 {
		c.maxNewton = 100
	}
	if c.tol == 0 {
		c.tol = 1e-12
	}
	for _, p := range c.params {
		p.SetDType(tensor.Float64)
	}
	return c, nil
}

// Kernel returns the classifier's kernel.
func (c *Classifier) Kernel() kernel.Kernel { return c.kernel }

// Params returns the kernel's hyperparameters.
func (c *Classifier) Hyperparams() []*kernel.Hyperparam { return c.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (c *Classifier) Hyperparam(name string) *kernel.Hyperparam { return kernel.Lookup(c.params, name) }

// rawValues returns every hyperparameter's raw values, to detect changes.
func (c *Classifier) rawValues() []float64 {
	var v []float64
	for _, p := range c.params {
		v = append(v, p.Raw().Values()...)
	}
	return v
}

// logLik returns log p(y | f) = −Σ softplus(−s f), s = 2t − 1, its
// gradient t − σ(f) and W^½ = √(σ(f)(1 − σ(f))).
func logLik(t, f []float64, grad, sw []float64) float64 {
	ll := 0.0
	for i, fi := range f {
		s := 2*t[i] - 1
		ll -= softplus(-s * fi)
		p := sigmoid(fi)
		if grad != nil {
			grad[i] = t[i] - p
		}
		if sw != nil {
			sw[i] = math.Sqrt(p * (1 - p))
		}
	}
	return ll
}

// nonFiniteAt returns the index of the first NaN or Inf in v, or −1.
func nonFiniteAt(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// matVec returns K v for a square float64 matrix k.
func matVec(k *tensor.Tensor, v []float64) []float64 {
	return tensor.MatMul(k, tensor.FromFloat64s(v, len(v), 1)).Values()
}

// factorB returns the Cholesky factor of B = I + W^½ K W^½. B's
// eigenvalues are at least 1, so it factors for any positive
// semi-definite K.
func factorB(k *tensor.Tensor, sw []float64) (*tensor.Tensor, error) {
	n := len(sw)
	kv := k.Values()
	b := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			b[i*n+j] = sw[i] * kv[i*n+j] * sw[j]
		}
		b[i*n+i]++
	}
	return tensor.Cholesky(tensor.FromFloat64s(b, n, n))
}

// Mode runs Newton's method (R&W Algorithm 3.1) at the current
// hyperparameters and returns a copy of the mode f̂ of p(f | X, y). The
// result is cached until the hyperparameters change. It returns an error if
// the kernel matrix holds non-finite values; when Newton runs out of
// iterations it returns its last iterate with a *tensor.NotConvergedError.
func (c *Classifier) Mode() ([]float64, error) {
	s, err := c.laplace()
	if s == nil {
		return nil, err
	}
	return append([]float64(nil), s.f...), err
}

// laplace returns the Laplace approximation at the current
// hyperparameters, computing it if they changed, with the state's
// NotConvergedError when Newton ran out of iterations (the state is then
// at its last iterate).
func (c *Classifier) laplace() (s *laplaceState, err error) {
	defer tensor.Recover(&err)
	raw := c.rawValues()
	if c.state != nil && equalFloats(raw, c.state.raw) {
		return c.state, c.state.err
	}
	k := kernelMatrix(c.kernel, c.x, nil)
	if i := nonFiniteAt(k.Values()); i >= 0 {
		return nil, fmt.Errorf("gp.Classifier: the kernel matrix holds a non-finite value (hyperparameters %v)", c.hyperString())
	}
	s, err = c.newton(k)
	if err != nil {
		return nil, err
	}
	s.raw = raw
	c.state = s
	c.warm = s.a
	return s, s.err
}

func (c *Classifier) hyperString() string {
	out := ""
	for i, p := range c.params {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s=%v", p.Name(), p.Get())
	}
	return out
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// psi is the Newton objective −½ aᵀf + log p(y | f) with f = K a.
func (c *Classifier) psi(a, f []float64) float64 {
	q := 0.0
	for i := range a {
		q += a[i] * f[i]
	}
	return -0.5*q + logLik(c.t, f, nil, nil)
}

// newton is R&W Algorithm 3.1 with a step-halving safeguard (as in GPML's
// infLaplace) and a warm start from the previous a when that is better
// than f = 0.
func (c *Classifier) newton(k *tensor.Tensor) (*laplaceState, error) {
	n := len(c.t)
	a := make([]float64, n)
	f := make([]float64, n)
	obj := c.psi(a, f)
	if c.warm != nil {
		fw := matVec(k, c.warm)
		if ow := c.psi(c.warm, fw); ow > obj {
			copy(a, c.warm)
			f, obj = fw, ow
		}
	}
	grad := make([]float64, n)
	sw := make([]float64, n)
	b := make([]float64, n)
	maxIter, tol := c.maxNewton, c.tol
	if maxIter <= 0 {
		maxIter = 100
	}
	if tol <= 0 {
		tol = 1e-12
	}
	converged := false
	it, change := 0, math.Inf(1)
	for ; it < maxIter && !converged; it++ {
		logLik(c.t, f, grad, sw)
		l, err := factorB(k, sw)
		if err != nil {
			return nil, fmt.Errorf("gp.Classifier: Newton step %d: %w", it, err)
		}
		for i := range b {
			b[i] = sw[i]*sw[i]*f[i] + grad[i] // W f + ∇log p
		}
		kb := matVec(k, b)
		for i := range kb {
			kb[i] *= sw[i]
		}
		v := tensor.TriSolve(l, tensor.FromFloat64s(kb, n, 1), true, false)
		u := tensor.TriSolve(l, v, true, true).Values() // B⁻¹ W^½ K b
		anew := make([]float64, n)
		for i := range anew {
			anew[i] = b[i] - sw[i]*u[i]
		}
		// Take the Newton step, halving it while the objective drops.
		var fnew []float64
		var onew float64
		for h := 0; ; h++ {
			fnew = matVec(k, anew)
			onew = c.psi(anew, fnew)
			if onew >= obj-1e-12*(1+math.Abs(obj)) || h == 30 {
				break
			}
			for i := range anew {
				anew[i] = a[i] + 0.5*(anew[i]-a[i])
			}
		}
		df := 0.0
		for i := range f {
			df = math.Max(df, math.Abs(fnew[i]-f[i]))
		}
		change = math.Abs(onew - obj)
		converged = change <= tol*(1+math.Abs(onew)) && df <= math.Sqrt(tol)
		a, f, obj = anew, fnew, onew
	}
	s := &laplaceState{k: k, f: f, a: a, grad: make([]float64, n), sw: make([]float64, n), iters: it}
	if !converged {
		s.err = &tensor.NotConvergedError{Op: "gp.Classifier (Newton)", Iterations: it, Change: change, Tol: tol * (1 + math.Abs(obj))}
	}
	ll := logLik(c.t, f, s.grad, s.sw)
	l, err := factorB(k, s.sw)
	if err != nil {
		return nil, fmt.Errorf("gp.Classifier: factoring B at the mode: %w", err)
	}
	s.l = l
	q := 0.0
	for i := range a {
		q += a[i] * f[i]
	}
	s.lml = -0.5*q + ll - 0.5*tensor.LogDetChol(l).Item()
	return s, nil
}

// LogMarginalLikelihood returns the Laplace approximation of the log
// marginal likelihood at the current hyperparameters (R&W Algorithm 3.1):
//
//	log q(y | X, θ) = −½ aᵀf̂ + log p(y | f̂) − Σᵢ log Lᵢᵢ.
func (c *Classifier) LogMarginalLikelihood() (float64, error) {
	s, err := c.laplace()
	if s == nil {
		return 0, err
	}
	return s.lml, err
}

// LaplaceObjective returns, as a scalar node,
//
//	Ψ(K, a, f) = −½ aᵀK a + log p(y | K a) − ½ log |I + W(f)^½ K W(f)^½|
//
// for the labels t (0 or 1) with the logistic likelihood, K (n, n), a and
// f (n). At a = â = ∇log p(y | f̂) and f = f̂ = K â (the Laplace mode) its
// value is the approximate log marginal likelihood of R&W Algorithm 3.1.
// Writing the quadratic term through a rather than K⁻¹f keeps K
// uninverted. It panics with a *tensor.Error on mismatched shapes.
func LaplaceObjective(k, a, f *graph.Node, t []float64) *graph.Node {
	if k.Dim() != 2 || a.Dim() != 1 || f.Dim() != 1 || k.Shape()[0] != len(t) || k.Shape()[1] != len(t) || a.Shape()[0] != len(t) || f.Shape()[0] != len(t) {
		tensor.Fail("gp.LaplaceObjective", "want K (n, n), a (n), f (n) with n = %d labels, got %v, %v, %v", len(t), k.Shape(), a.Shape(), f.Shape())
	}
	g, dt, n := k.Graph(), k.DType(), len(t)
	s := make([]float64, n)
	for i := range t {
		s[i] = 2*t[i] - 1
	}
	sc := g.Const(tensor.FromValues(dt, s, n))
	ka := graph.Reshape(graph.MatMul(k, graph.Reshape(a, n, 1)), n)
	quad := graph.MulScalar(graph.Sum(graph.Mul(a, ka), nil, false), -0.5)
	ll := graph.Neg(graph.Sum(graph.Softplus(graph.Neg(graph.Mul(sc, ka))), nil, false))
	return graph.Add(graph.Add(quad, ll), graph.MulScalar(logDetB(k, f), -0.5))
}

// logDetB returns log |I + W^½ K W^½| with W = σ(f)(1 − σ(f)) as a node.
func logDetB(k, f *graph.Node) *graph.Node {
	n := f.Shape()[0]
	p := graph.Sigmoid(f)
	sw := graph.Sqrt(graph.Mul(p, graph.AddScalar(graph.Neg(p), 1)))
	outer := graph.Mul(graph.Reshape(sw, n, 1), graph.Reshape(sw, 1, n))
	b := graph.AddDiag(graph.Mul(outer, k), f.Graph().Scalar(f.DType(), 1))
	return graph.LogDetChol(graph.Cholesky(b))
}

// LogMarginalLikelihoodNode returns the approximate log marginal
// likelihood as a scalar node of g whose gradient with respect to the
// hyperparameters' RawNode(g) is the total derivative, mode movement
// included (R&W eqs. 5.22–5.24). The mode is found numerically at the
// current hyperparameters (f̂, â constants); the graph then is
// LaplaceObjective(K(θ), â, f̂(θ)) with
//
//	f̂(θ) = f̂ + (I + K W)⁻¹ (K(θ) â − stop(K(θ) â)),
//
// a node whose value is f̂ and whose derivative is the implicit-function
// derivative df̂/dθ = (I + K W)⁻¹ (∂K/∂θ) ∇log p (eq. 5.24), computed
// stably as δ − K W^½ B⁻¹ W^½ δ. Only the log-determinant term depends on
// f; the first two terms, with a held at â, contribute the explicit
// derivative ½ âᵀ(∂K/∂θ)â since ∇log p(y | f̂) = â at the mode.
func (c *Classifier) LogMarginalLikelihoodNode(g *graph.Graph) (lml *graph.Node, err error) {
	s, err := c.laplace()
	if err != nil {
		return nil, err
	}
	defer tensor.Recover(&err)
	n := len(c.t)
	x := g.Const(c.x)
	k := c.kernel.K(x, x)
	a0 := g.Const(tensor.FromFloat64s(append([]float64(nil), s.a...), n))
	ka := graph.Reshape(graph.MatMul(k, graph.Reshape(a0, n, 1)), n)
	delta := graph.Sub(ka, graph.StopGradient(ka)) // value 0, derivative (∂K/∂θ) â
	sw := g.Const(tensor.FromFloat64s(append([]float64(nil), s.sw...), n))
	r := graph.Mul(sw, graph.CholeskySolve(g.Const(s.l), graph.Mul(sw, delta)))
	corr := graph.Sub(delta, graph.Reshape(graph.MatMul(g.Const(s.k), graph.Reshape(r, n, 1)), n))
	f := graph.Add(g.Const(tensor.FromFloat64s(append([]float64(nil), s.f...), n)), corr)
	return LaplaceObjective(k, a0, f, c.t), nil
}

// logPrior returns Σ log p(θ) over the hyperparameters with priors, or nil.
func logPrior(g *graph.Graph, ps []*kernel.Hyperparam) *graph.Node {
	var out *graph.Node
	for _, p := range ps {
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

// ClassPrediction holds predictions at test inputs.
type ClassPrediction struct {
	Mean []float64 // latent mean k*ᵀ∇log p(y | f̂)
	Var  []float64 // latent variance k** − vᵀv
	Prob []float64 // p(y = 1) by the probit approximation σ(κ μ), κ = (1 + πσ²/8)^(−½)
}

// Predict returns the latent mean and variance and the class-1
// probabilities at xs (m, d) by R&W Algorithm 3.2, averaging the logistic
// over the Gaussian latent with the probit approximation (MacKay 1992).
// Far from the data the latent mean returns to the prior's zero and the
// probability to ½. It returns an error when the Laplace mode at the
// current hyperparameters cannot be found (hyperparameters set after the
// fit whose kernel matrix is not finite): prediction that can fail on
// data. When Newton runs out of iterations (MaxNewton) the prediction is
// made at its last iterate and comes with a *tensor.NotConvergedError.
// Inputs that are not an (m, d) matrix with the
// training columns panic with a *tensor.Error.
func (c *Classifier) Predict(xs *tensor.Tensor) (pred *ClassPrediction, err error) {
	if xs == nil || xs.Dim() != 2 || xs.Shape()[1] != c.x.Shape()[1] {
		shape := []int(nil)
		if xs != nil {
			shape = xs.Shape()
		}
		tensor.Fail("gp.Classifier.Predict", "inputs must be an (m, %d) matrix, got shape %v", c.x.Shape()[1], shape)
	}
	defer tensor.Recover(&err)
	s, err := c.laplace()
	if s == nil {
		return nil, err
	}
	xs = tensor.FromFloat64s(xs.Values(), xs.Shape()...)
	n, m := len(c.t), xs.Shape()[0]
	ks := kernelMatrix(c.kernel, c.x, xs) // (n, m)
	kss := kernelDiag(c.kernel, xs).Values()
	mean := tensor.MatMulT(ks, tensor.FromFloat64s(s.grad, n, 1), true, false).Values()
	ksw := tensor.Mul(tensor.FromFloat64s(s.sw, n, 1), ks)
	v := tensor.TriSolve(s.l, ksw, true, false)
	vv := tensor.Sum(tensor.Square(v), []int{0}, false).Values()
	pred = &ClassPrediction{Mean: mean, Var: make([]float64, m), Prob: make([]float64, m)}
	for i := range pred.Var {
		pred.Var[i] = math.Max(kss[i]-vv[i], 0)
		kappa := 1 / math.Sqrt(1+math.Pi*pred.Var[i]/8)
		pred.Prob[i] = sigmoid(kappa * mean[i])
	}
	return pred, s.err
}
