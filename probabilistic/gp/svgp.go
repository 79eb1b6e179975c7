package gp

import (
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// SVGPOptions configures FitSVGP, FitSVGPClassifier and NewSVGP: the model
// (Kernel to Jitter) and the stochastic fit (BatchSize and after, which
// NewSVGP ignores). The zero value, with a Kernel, means the defaults
// stated on each field.
type SVGPOptions struct {
	// Kernel is the covariance function of the latent f (of every latent
	// function when the likelihood reads several); it is required unless
	// LatentKernels is set. The model keeps its hyperparameter objects and
	// fits them in place.
	Kernel kernel.Kernel
	// LatentKernels, if set, gives each latent function its own kernel
	// (one per Likelihood.Latents(), in order; the same kernel may appear
	// twice to share it), and Kernel is ignored: the heteroscedastic
	// likelihood's noise, say, is usually smoother than its mean. The
	// latents still share the inducing inputs.
	LatentKernels []kernel.Kernel
	// Likelihood is the observation model; nil means a Gaussian with noise
	// variance 0.1 (FitSVGP, NewSVGP) or a logit Bernoulli with 20
	// Gauss–Hermite points (FitSVGPClassifier).
	Likelihood Likelihood
	// Inducing holds the starting inducing inputs z (m, d) (copied); nil
	// means NumInducing rows of x drawn without replacement with Seed.
	Inducing *tensor.Tensor
	// NumInducing is the number of inducing inputs drawn when Inducing is
	// nil; zero means min(n, 100).
	NumInducing int
	// FixInducing keeps the inducing inputs where they start.
	FixInducing bool
	// Unwhitened parameterises q(u) = N(m, S) directly, with the prior
	// N(0, Kzz); by default q is on the whitened v = L⁻¹u (Kzz = LLᵀ)
	// with the prior N(0, I), which conditions the optimisation better
	// (Hensman et al. 2015).
	Unwhitened bool
	// Jitter is added to the diagonal of Kzz; zero means 1e-6.
	Jitter float64

	// BatchSize is the minibatch size; zero means 256, and a size above n
	// means n. Batches are drawn by shuffling the rows each epoch.
	BatchSize int
	// Steps is the number of optimiser steps; zero means 1000.
	Steps int
	// LR is Adam's learning rate on the unconstrained hyperparameters, the
	// inducing inputs and (without natural gradients) q's parameters; zero
	// means 0.01.
	LR float64
	// NaturalGradient, when positive, is the step size γ of natural-gradient
	// updates of q(u) (Salimbeni, Eleftheriadis and Hensman 2018, "Natural
	// Gradients in Practice"), taken before each Adam step on the rest;
	// zero means q is fitted by Adam with everything else. With a Gaussian
	// likelihood, γ = 1 and the full batch, one step reaches the optimal q.
	NaturalGradient float64
	// Seed seeds the inducing inputs' draw and the minibatches.
	Seed uint64
	// Progress, if set, receives every step.
	Progress func(SVGPEvent)
}

// SVGPEvent reports one step of an SVGP fit.
type SVGPEvent struct {
	Step int     // from 1
	ELBO float64 // the minibatch estimate of the ELBO before the step
}

// String formats the event as one log line.
func (e SVGPEvent) String() string { return fmt.Sprintf("step %d: elbo %.4f", e.Step, e.ELBO) }

// SVGP is the stochastic variational Gaussian process of Hensman, Fusi and
// Lawrence (2013), "Gaussian Processes for Big Data": m inducing inputs z
// with values u = f(z), a Gaussian q(u) = N(m, S) with S = LLᵀ (or the
// same over the whitened v = Lz⁻¹u), and the evidence lower bound
//
//	ELBO = Σᵢ E_{q(fᵢ)} log p(yᵢ | fᵢ) − KL(q(u) ‖ p(u)),
//
// whose sum is estimated on minibatches scaled by n/b, so one step costs
// O(bm² + m³) whatever n is. Any Likelihood fits (Hensman, Matthews and
// Ghahramani 2015 for classification). A likelihood that reads L > 1
// latent functions per point (heteroscedastic noise, softmax classes)
// gets L independent GPs sharing the kernel and the inducing inputs, each
// with its own q(u_l), as in the chained GPs of Saul et al. (2016),
// "Chained Gaussian Processes"; the KL term sums over them. Everything is
// a graph in float64: the gradients of the kernel's and the likelihood's
// hyperparameters, of z and of q come from autodiff. A model is not safe
// for concurrent use.
type SVGP struct {
	kernels []kernel.Kernel // one per latent function
	shared  bool            // every latent has kernels[0]
	lik     Likelihood
	x       *tensor.Tensor // (n, d) float64
	y       []float64
	z       *nn.Param   // (m, d)
	qMu     *nn.Param   // (m, L): one column per latent function
	qSqrt   []*nn.Param // L factors (m, m); the lower triangle of each is its L
	whiten  bool
	fixZ    bool
	jitter  float64
	params  []*kernel.Hyperparam
	trace   []float64
}

// NewSVGP returns an SVGP of y (n) or (n, 1) on x (n, d) at the kernel's
// and likelihood's current hyperparameters, with each q(u_l) at the prior
// (m = 0 and S = I whitened, S = Kzz unwhitened), without fitting (the fit
// fields of opts are ignored). FitSVGP is the usual entry point. It
// returns an error for a nil kernel, bad shapes, inducing inputs whose
// width differs from x's, non-finite data, targets the likelihood does not
// model (labels other than 0 and 1 for a Bernoulli likelihood, negative or
// fractional counts for a Poisson one) or invalid sizes.
func NewSVGP(x, y *tensor.Tensor, opts SVGPOptions) (m *SVGP, err error) {
	defer tensor.Recover(&err)
	if y == nil {
		return nil, errors.New("gp.NewSVGP: nil y")
	}
	if !(y.Dim() == 1 || (y.Dim() == 2 && y.Shape()[1] == 1)) {
		return nil, fmt.Errorf("gp.NewSVGP: y must have shape (n) or (n, 1), got %v", y.Shape())
	}
	if opts.Likelihood == nil {
		opts.Likelihood = NewGaussianLikelihood(0)
	}
	m, err = newSVGP("gp.NewSVGP", x, y.Values(), opts)
	return m, err
}

func newSVGP(op string, x *tensor.Tensor, y []float64, o SVGPOptions) (*SVGP, error) {
	if (o.Kernel == nil && o.LatentKernels == nil) || x == nil {
		return nil, fmt.Errorf("%s: nil Kernel or x", op)
	}
	if x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[1] == 0 {
		return nil, fmt.Errorf("%s: x must be a non-empty (n, d) matrix, got shape %v", op, x.Shape())
	}
	n, d := x.Shape()[0], x.Shape()[1]
	if len(y) != n {
		return nil, fmt.Errorf("%s: x has %d rows but there are %d targets", op, n, len(y))
	}
	if i := firstNonFinite(x.Values()); i >= 0 {
		return nil, fmt.Errorf("%s: x holds a non-finite value at row %d", op, i/d)
	}
	if err := o.Likelihood.CheckTargets(y); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if o.NumInducing < 0 || o.BatchSize < 0 || o.Steps < 0 || o.LR < 0 || o.Jitter < 0 || o.NaturalGradient < 0 ||
		math.IsNaN(o.LR+o.Jitter+o.NaturalGradient) {
		return nil, fmt.Errorf("%s: negative NumInducing %d, BatchSize %d, Steps %d, LR %g, Jitter %g or NaturalGradient %g",
			op, o.NumInducing, o.BatchSize, o.Steps, o.LR, o.Jitter, o.NaturalGradient)
	}
	if o.NaturalGradient > 1 {
		return nil, fmt.Errorf("%s: NaturalGradient step %g above 1", op, o.NaturalGradient)
	}
	z := o.Inducing
	if z == nil {
		k := o.NumInducing
		if k == 0 {
			k = min(n, 100)
		}
		if k > n {
			return nil, fmt.Errorf("%s: NumInducing %d exceeds the %d rows of x", op, k, n)
		}
		z = pickRows(x, tensor.NewRNG(o.Seed).Perm(n)[:k])
	}
	if z.Dim() != 2 || z.Shape()[0] == 0 || z.Shape()[1] != d {
		return nil, fmt.Errorf("%s: inducing inputs must be a non-empty (m, %d) matrix like x's rows, got shape %v", op, d, z.Shape())
	}
	if i := firstNonFinite(z.Values()); i >= 0 {
		return nil, fmt.Errorf("%s: inducing inputs hold a non-finite value at row %d", op, i/d)
	}
	mz, nl := z.Shape()[0], o.Likelihood.Latents()
	if nl < 1 {
		return nil, fmt.Errorf("%s: the %s likelihood reads %d latent functions; want at least 1", op, o.Likelihood.Name(), nl)
	}
	kernels := o.LatentKernels
	if kernels == nil {
		kernels = make([]kernel.Kernel, nl)
		for i := range kernels {
			kernels[i] = o.Kernel
		}
	}
	if len(kernels) != nl {
		return nil, fmt.Errorf("%s: %d LatentKernels for the %d latent functions of the %s likelihood", op, len(kernels), nl, o.Likelihood.Name())
	}
	var hps []*kernel.Hyperparam
	shared := true
	for i, k := range kernels {
		if k == nil {
			return nil, fmt.Errorf("%s: LatentKernels[%d] is nil", op, i)
		}
		shared = shared && k == kernels[0]
		hps = append(hps, k.Hyperparams()...)
	}
	s := &SVGP{
		kernels: append([]kernel.Kernel(nil), kernels...), shared: shared, lik: o.Likelihood,
		x:      tensor.FromFloat64s(x.Values(), n, d),
		y:      append([]float64(nil), y...),
		z:      nn.NewParam(tensor.FromFloat64s(z.Values(), mz, d)),
		qMu:    nn.NewParam(tensor.Zeros(tensor.Float64, mz, nl)),
		whiten: !o.Unwhitened, fixZ: o.FixInducing, jitter: o.Jitter,
	}
	for range nl {
		s.qSqrt = append(s.qSqrt, nn.NewParam(tensor.Eye(tensor.Float64, mz)))
	}
	if s.jitter == 0 {
		s.jitter = 1e-6
	}
	s.params = kernel.UniqueHyperparams(append(hps, o.Likelihood.Hyperparams()...))
	for _, p := range s.params {
		p.SetDType(tensor.Float64)
	}
	if !s.whiten { // start at the prior: L = chol(Kzz)
		g := graph.New()
		lzs, err := s.kzzChols(g, g.Const(s.z.Value))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		for i, q := range s.qSqrt {
			tensor.CopyInto(q.Value, lzs[i].Value())
		}
	}
	return s, nil
}

// pickRows returns the rows idx of the (n, d) matrix x, in float64.
func pickRows(x *tensor.Tensor, idx []int) *tensor.Tensor {
	return tensor.IndexSelect(x, 0, idx).Cast(tensor.Float64)
}

// Kernel returns the model's kernel (the first latent function's).
func (s *SVGP) Kernel() kernel.Kernel { return s.kernels[0] }

// LatentKernels returns the kernel of each latent function.
func (s *SVGP) LatentKernels() []kernel.Kernel { return append([]kernel.Kernel(nil), s.kernels...) }

// Likelihood returns the model's likelihood.
func (s *SVGP) Likelihood() Likelihood { return s.lik }

// Hyperparams returns the kernel's hyperparameters followed by the
// likelihood's.
func (s *SVGP) Hyperparams() []*kernel.Hyperparam { return s.params }

// Hyperparam returns the hyperparameter with the given name, or nil.
func (s *SVGP) Hyperparam(name string) *kernel.Hyperparam { return kernel.Lookup(s.params, name) }

// N returns the number of training points.
func (s *SVGP) N() int { return s.x.Shape()[0] }

// Whitened reports whether q is over the whitened inducing values.
func (s *SVGP) Whitened() bool { return s.whiten }

// Latents returns the number L of latent functions (the likelihood's
// Latents).
func (s *SVGP) Latents() int { return len(s.qSqrt) }

// Inducing returns the inducing inputs z (m, d); fitting updates them in
// place.
func (s *SVGP) Inducing() *tensor.Tensor { return s.z.Value }

// Variational returns q's mean m (m, L), one column per latent function,
// and the lower-triangular factors of the covariances S_l = L_l L_lᵀ (over
// the whitened values unless the model is unwhitened): (m, m) when L = 1,
// (L, m, m) otherwise. They are copies.
func (s *SVGP) Variational() (mean, sqrt *tensor.Tensor) {
	mz, nl := s.qMu.Value.Shape()[0], len(s.qSqrt)
	if nl == 1 {
		return s.qMu.Value.Clone(), lowerOf(s.qSqrt[0].Value)
	}
	flat := make([]float64, 0, nl*mz*mz)
	for _, q := range s.qSqrt {
		flat = append(flat, lowerOf(q.Value).Values()...)
	}
	return s.qMu.Value.Clone(), tensor.FromFloat64s(flat, nl, mz, mz)
}

// SetVariational sets q's mean (m·L values, read as (m, L); (m) or (m, 1)
// when L = 1) and covariance factors, (m, m) when L = 1 and (L, m, m)
// otherwise, of which only the lower triangles are read. It returns an
// error when the shapes do not match the inducing inputs and latents or
// a value is not finite, and then leaves q unchanged.
func (s *SVGP) SetVariational(mean, sqrt *tensor.Tensor) error {
	mz, nl := s.z.Value.Shape()[0], len(s.qSqrt)
	okSqrt := sqrt != nil && sqrt.Size() == nl*mz*mz && ((nl == 1 && sqrt.Dim() == 2) || (nl > 1 && sqrt.Dim() == 3)) &&
		sqrt.Shape()[sqrt.Dim()-1] == mz && sqrt.Shape()[sqrt.Dim()-2] == mz
	if mean == nil || mean.Size() != mz*nl || mean.Dim() > 2 || !okSqrt {
		return fmt.Errorf("gp.SVGP.SetVariational: want a mean of %d×%d values and %d (%d, %d) factors", mz, nl, nl, mz, mz)
	}
	if firstNonFinite(mean.Values()) >= 0 || firstNonFinite(sqrt.Values()) >= 0 {
		return errors.New("gp.SVGP.SetVariational: non-finite value")
	}
	tensor.CopyInto(s.qMu.Value, tensor.FromFloat64s(mean.Values(), mz, nl))
	sv := sqrt.Values()
	for l, q := range s.qSqrt {
		tensor.CopyInto(q.Value, lowerOf(tensor.FromFloat64s(sv[l*mz*mz:(l+1)*mz*mz], mz, mz)))
	}
	return nil
}

// lowerOf returns a copy of the lower triangle of the square matrix a.
func lowerOf(a *tensor.Tensor) *tensor.Tensor {
	n, v := a.Shape()[0], a.Values()
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v[i*n+j] = 0
		}
	}
	return tensor.FromFloat64s(v, n, n)
}

// kzzChols returns each latent's Cholesky factor of K(z, z) + jitter·I
// (one node per distinct kernel), or a data error.
func (s *SVGP) kzzChols(g *graph.Graph, z *graph.Node) ([]*graph.Node, error) {
	out := make([]*graph.Node, len(s.kernels))
	for i, k := range s.kernels {
		for j := 0; j < i && out[i] == nil; j++ {
			if s.kernels[j] == k {
				out[i] = out[j]
			}
		}
		if out[i] != nil {
			continue
		}
		kzz := graph.AddDiag(k.K(z, z), g.Scalar(tensor.Float64, s.jitter))
		l, err := tryCholesky(kzz)
		if err != nil {
			return nil, fmt.Errorf("inducing covariance K(z, z) + %g·I: %w", s.jitter, err)
		}
		out[i] = l
	}
	return out, nil
}

// variables returns the nodes of z, q's mean (m, L) and q's factors L_l
// (the lower triangles of the raw parameters) in g.
func (s *SVGP) variables(g *graph.Graph) (z, mu *graph.Node, ls []*graph.Node) {
	for _, q := range s.qSqrt {
		ls = append(ls, graph.Tril(q.Node(g)))
	}
	return s.z.Node(g), s.qMu.Node(g), ls
}

// marginals returns the means and variances (b, L) of q(f_l) at the
// inputs xb (b, d):
//
//	whitened:   A = Lz⁻¹Kzb,            μ = Aᵀm, v = diag Kbb − ‖A‖²ᵢ + ‖LᵀA‖²ᵢ
//	unwhitened: W = Lz⁻¹Kzb, A = Lz⁻ᵀW, μ = Aᵀm, v = diag Kbb − ‖W‖²ᵢ + ‖LᵀA‖²ᵢ
//
// with ‖·‖²ᵢ the squared norm of column i, L the factor of each latent and
// Lz that of its kernel's Kzz.
func (s *SVGP) marginals(lzs []*graph.Node, z, mu *graph.Node, ls []*graph.Node, xb *graph.Node) (mean, variance *graph.Node) {
	if s.shared {
		return s.marginalsOf(s.kernels[0], lzs[0], z, mu, ls, xb)
	}
	means, vars := make([]*graph.Node, len(ls)), make([]*graph.Node, len(ls))
	for i := range ls {
		means[i], vars[i] = s.marginalsOf(s.kernels[i], lzs[i], z, graph.Slice(mu, 1, i, i+1, 1), ls[i:i+1], xb)
	}
	return graph.Concat(1, means...), graph.Concat(1, vars...)
}

// marginalsOf returns the marginals of the latents whose q(u) are mu's
// columns and ls, all with kernel k (Kzz = LzLzᵀ).
func (s *SVGP) marginalsOf(k kernel.Kernel, lz, z, mu *graph.Node, ls []*graph.Node, xb *graph.Node) (mean, variance *graph.Node) {
	b := xb.Shape()[0]
	w := graph.TriSolve(lz, k.K(z, xb), true, false)
	a := w
	if !s.whiten {
		a = graph.TriSolve(lz, w, true, true)
	}
	colSq := func(v *graph.Node) *graph.Node { return graph.Sum(graph.Square(v), []int{0}, false) }
	mean = graph.MatMulT(a, mu, true, false)
	base := graph.Sub(k.Diag(xb), colSq(w))
	if len(ls) == 1 {
		return graph.Reshape(mean, b, 1), graph.Reshape(graph.Add(base, colSq(graph.MatMulT(ls[0], a, true, false))), b, 1)
	}
	per := make([]*graph.Node, len(ls))
	for i, l := range ls {
		per[i] = colSq(graph.MatMulT(l, a, true, false))
	}
	return mean, graph.Add(graph.Reshape(base, b, 1), graph.Stack(1, per...))
}

// kl returns Σ_l KL(q(u_l) ‖ p(u_l)) over the latents.
func (s *SVGP) kl(lzs []*graph.Node, mu *graph.Node, ls []*graph.Node) *graph.Node {
	if len(ls) == 1 {
		return s.klOne(lzs[0], mu, ls[0])
	}
	var sum *graph.Node
	for i, l := range ls {
		k := s.klOne(lzs[i], graph.Slice(mu, 1, i, i+1, 1), l)
		if sum == nil {
			sum = k
		} else {
			sum = graph.Add(sum, k)
		}
	}
	return sum
}

// klOne returns KL(q ‖ p) for one latent's q = N(m, LLᵀ):
//
//	whitened:   ½ (‖L‖²_F + ‖m‖² − M − log|S|)
//	unwhitened: ½ (‖Lz⁻¹L‖²_F + ‖Lz⁻¹m‖² − M + log|Kzz| − log|S|)
//
// with log|S| = Σ log Lᵢᵢ².
func (s *SVGP) klOne(lz, mu, l *graph.Node) *graph.Node {
	sumSq := func(v *graph.Node) *graph.Node { return graph.Sum(graph.Square(v), nil, false) }
	logDetS := graph.Sum(graph.Log(graph.Square(graph.Diagonal(l))), nil, false)
	var tr, quad *graph.Node
	if s.whiten {
		tr, quad = sumSq(l), sumSq(mu)
	} else {
		tr = sumSq(graph.TriSolve(lz, l, true, false))
		quad = sumSq(graph.TriSolve(lz, mu, true, false))
		logDetS = graph.Sub(logDetS, graph.LogDetChol(lz))
	}
	m := float64(mu.Shape()[0])
	return graph.MulScalar(graph.AddScalar(graph.Sub(graph.Add(tr, quad), logDetS), -m), 0.5)
}

// ELBO returns the evidence lower bound as a scalar node of g, estimated
// on the training rows given (nil means all of them, the exact ELBO):
// (n/b) Σ_rows E log p(yᵢ | fᵢ) − KL. It is differentiable with respect
// to the hyperparameters' RawNode(g), InducingNode(g) and the variational
// parameters' nodes (VariationalNodes). It returns an error for a row out
// of range or when Kzz + jitter·I is not positive definite.
func (s *SVGP) ELBO(g *graph.Graph, rows []int) (elbo *graph.Node, err error) {
	defer tensor.Recover(&err)
	n := s.N()
	if rows == nil {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("gp.SVGP.ELBO: no rows")
	}
	yb := make([]float64, len(rows))
	for i, r := range rows {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("gp.SVGP.ELBO: row %d out of range [0, %d)", r, n)
		}
		yb[i] = s.y[r]
	}
	z, mu, ls := s.variables(g)
	return s.elbo(g, z, mu, ls, pickRows(s.x, rows), yb)
}

func (s *SVGP) elbo(g *graph.Graph, z, mu *graph.Node, ls []*graph.Node, xb *tensor.Tensor, yb []float64) (*graph.Node, error) {
	lzs, err := s.kzzChols(g, z)
	if err != nil {
		return nil, err
	}
	fm, fv := s.marginals(lzs, z, mu, ls, g.Const(xb))
	ell := graph.Sum(s.lik.ExpectedLogLik(fm, fv, g.Const(tensor.FromFloat64s(yb, len(yb)))), nil, false)
	scale := float64(s.N()) / float64(len(yb))
	return graph.Sub(graph.MulScalar(ell, scale), s.kl(lzs, mu, ls)), nil
}

// InducingNode returns the graph variable bound to the inducing inputs in g.
func (s *SVGP) InducingNode(g *graph.Graph) *graph.Node { return s.z.Node(g) }

// VariationalNodes returns the graph variables bound to q's mean (m, L)
// and the latents' raw factors (m, m; their upper triangles are ignored)
// in g.
func (s *SVGP) VariationalNodes(g *graph.Graph) (mean *graph.Node, sqrt []*graph.Node) {
	for _, q := range s.qSqrt {
		sqrt = append(sqrt, q.Node(g))
	}
	return s.qMu.Node(g), sqrt
}

// Predict returns the marginals of the approximate posterior q(f) at xs
// (k, d): Mean and Var of the latent f ((k) for one latent function,
// (k, L) for L), and in NoisyVar (k) the variance of a new observation
// under the likelihood (v + σ² for a Gaussian, p(1 − p) for a Bernoulli).
// It returns an error if Kzz + jitter·I cannot be
// factored: prediction that can fail on data. Inputs that are not a
// matrix with the training columns panic with a *tensor.Error.
func (s *SVGP) Predict(xs *tensor.Tensor) (pred *Prediction, err error) {
	mean, v, err := s.latent("gp.SVGP.Predict", xs)
	if err != nil {
		return nil, err
	}
	_, noisy := s.lik.PredictY(mean, v)
	k, shape := len(noisy), []int{len(noisy)}
	if nl := len(s.qSqrt); nl > 1 {
		shape = []int{k, nl}
	}
	return &Prediction{Mean: tensor.FromFloat64s(mean, shape...), Var: tensor.FromFloat64s(v, shape...), NoisyVar: tensor.FromFloat64s(noisy, k)}, nil
}

// LogPredictiveDensity returns log p(yᵢ | xsᵢ) = log ∫ p(yᵢ | f) q(f) df
// for each test point; its negative mean is the NLPD. y must fit the
// likelihood. It returns an error like Predict, or for targets of the
// wrong length or outside the likelihood's support.
func (s *SVGP) LogPredictiveDensity(xs *tensor.Tensor, y []float64) ([]float64, error) {
	mean, v, err := s.latent("gp.SVGP.LogPredictiveDensity", xs)
	if err != nil {
		return nil, err
	}
	if k := len(mean) / len(s.qSqrt); len(y) != k {
		return nil, fmt.Errorf("gp.SVGP.LogPredictiveDensity: %d inputs but %d targets", k, len(y))
	}
	if err := s.lik.CheckTargets(y); err != nil {
		return nil, fmt.Errorf("gp.SVGP.LogPredictiveDensity: %w", err)
	}
	return s.lik.LogPredictive(mean, v, y), nil
}

// latent computes q(f)'s marginal means and variances at xs, k·L values
// each in row-major (k, L) order.
func (s *SVGP) latent(op string, xs *tensor.Tensor) (mean, v []float64, err error) {
	d := s.x.Shape()[1]
	if xs == nil || xs.Dim() != 2 || xs.Shape()[1] != d {
		var shape []int
		if xs != nil {
			shape = xs.Shape()
		}
		tensor.Fail(op, "inputs must be a (k, %d) matrix, got shape %v", d, shape)
	}
	defer tensor.Recover(&err)
	g := graph.New()
	z := g.Const(s.z.Value)
	lzs, err := s.kzzChols(g, z)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	ls := make([]*graph.Node, len(s.qSqrt))
	for i, q := range s.qSqrt {
		ls[i] = graph.Tril(g.Const(q.Value))
	}
	fm, fv := s.marginals(lzs, z, g.Const(s.qMu.Value), ls, g.Const(tensor.FromFloat64s(xs.Values(), xs.Shape()...)))
	fv = graph.Clamp(fv, 0, math.Inf(1))
	return fm.Value().Values(), fv.Value().Values(), nil
}

// Trace returns the minibatch ELBO estimate of every step of the fit
// (empty for a model made by NewSVGP).
func (s *SVGP) Trace() []float64 { return s.trace }
