package gp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// FitSVGP returns an SVGP of y (n) or (n, 1) on x (n, d) fitted by
// maximising the minibatch ELBO plus the hyperparameters' log priors with
// Adam over the kernel's and the likelihood's free hyperparameters, the
// inducing inputs (unless FixInducing) and q(u), or with natural-gradient
// steps for q(u) when opts.NaturalGradient is set. It runs a fixed budget
// of opts.Steps steps with no convergence test, so it never returns a
// *tensor.NotConvergedError; Trace has the ELBO estimates.
//
// Bad data or options (see NewSVGP) return an error and no model, as does
// a step whose Kzz cannot be factored or whose natural-gradient update
// leaves q without a positive-definite covariance. If ctx is cancelled it
// returns promptly: the model after the last finished step with the error
// wrapping ctx.Err().
func FitSVGP(ctx context.Context, x, y *tensor.Tensor, opts SVGPOptions) (*SVGP, error) {
	s, err := NewSVGP(x, y, opts)
	if err != nil {
		return nil, fmt.Errorf("gp.FitSVGP: %w", err)
	}
	if err := s.fit(ctx, "gp.FitSVGP", opts); err != nil {
		if ctx != nil && ctx.Err() != nil {
			return s, err
		}
		return nil, err
	}
	return s, nil
}

// fit runs the stochastic optimisation of FitSVGP. When it fails for
// another reason than ctx, it puts the hyperparameters (the caller's
// kernel and likelihood objects) back as they were.
func (s *SVGP) fit(ctx context.Context, op string, o SVGPOptions) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	saved := make([]*tensor.Tensor, len(s.params))
	for i, p := range s.params {
		saved[i] = p.Raw().Clone()
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			for i, p := range s.params {
				tensor.CopyInto(p.Raw(), saved[i])
			}
		}
	}()
	n := s.N()
	steps, lr, batch := o.Steps, o.LR, o.BatchSize
	if steps == 0 {
		steps = 1000
	}
	if lr == 0 {
		lr = 0.01
	}
	if batch == 0 {
		batch = 256
	}
	batch = min(batch, n)
	var vals []*tensor.Tensor
	var nodes []func(*graph.Graph) *graph.Node
	for _, p := range s.params {
		if !p.Fixed() {
			vals, nodes = append(vals, p.Raw()), append(nodes, p.RawNode)
		}
	}
	if !s.fixZ {
		vals, nodes = append(vals, s.z.Value), append(nodes, s.z.Node)
	}
	if o.NaturalGradient == 0 {
		vals, nodes = append(vals, s.qMu.Value), append(nodes, s.qMu.Node)
		for _, q := range s.qSqrt {
			vals, nodes = append(vals, q.Value), append(nodes, q.Node)
		}
	}
	var adam *optim.Adam
	if len(vals) > 0 {
		adam = optim.NewAdam(vals, optim.AdamOptions{LR: lr})
	}
	rng := tensor.NewRNG(o.Seed + 1) // the inducing draw uses Seed itself
	var perm []int
	pos := n
	g := graph.New()
	s.trace = s.trace[:0]
	for step := 1; step <= steps; step++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: cancelled after %d of %d steps: %w", op, step-1, steps, err)
		}
		if pos+batch > n {
			perm, pos = rng.Perm(n), 0
		}
		rows := perm[pos : pos+batch]
		pos += batch
		if o.NaturalGradient > 0 {
			if err := s.natGradStep(rows, o.NaturalGradient); err != nil {
				return fmt.Errorf("%s: step %d: %w", op, step, err)
			}
		}
		g.Reset()
		elbo, grads, err := s.evalGrad(g, rows, nodes)
		if err != nil {
			return fmt.Errorf("%s: step %d: %w", op, step, err)
		}
		s.trace = append(s.trace, elbo)
		if o.Progress != nil {
			o.Progress(SVGPEvent{Step: step, ELBO: elbo})
		}
		if adam == nil {
			continue
		}
		for _, gr := range grads {
			tensor.NegTo(gr, gr)
		}
		if err := adam.Step(grads); err != nil {
			return fmt.Errorf("%s: step %d: %w", op, step, err)
		}
	}
	return nil
}

// evalGrad returns the ELBO on rows and the gradient of ELBO + log prior
// with respect to the nodes given.
func (s *SVGP) evalGrad(g *graph.Graph, rows []int, nodes []func(*graph.Graph) *graph.Node) (elbo float64, grads []*tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	e, err := s.ELBO(g, rows)
	if err != nil {
		return 0, nil, err
	}
	if math.IsNaN(e.Item()) || math.IsInf(e.Item(), 0) {
		return 0, nil, fmt.Errorf("ELBO is %g", e.Item())
	}
	obj := e
	if lp := logPrior(g, s.params); lp != nil {
		obj = graph.Add(obj, lp)
	}
	xs := make([]*graph.Node, len(nodes))
	for i, f := range nodes {
		xs[i] = f(g)
	}
	if len(xs) == 0 {
		return e.Item(), nil, nil
	}
	gs := autodiff.Grad(obj, xs...)
	grads = make([]*tensor.Tensor, len(gs))
	for i, gn := range gs {
		grads[i] = gn.Value().Clone()
	}
	return e.Item(), grads, nil
}

// natGradStep takes one natural-gradient step of size gamma on each
// latent's q(u_l) with the ELBO estimated on rows (Salimbeni,
// Eleftheriadis and Hensman 2018): the natural gradient in the natural
// parameters θ = (S⁻¹m, −½S⁻¹) is the ordinary gradient in the
// expectation parameters η = (m, S + mmᵀ), which autodiff gives by writing
// the ELBO through m = η₁, S = η₂ − η₁η₁ᵀ; then θ ← θ + γ ∂ELBO/∂η. The
// latents' q are independent, so one graph gives every latent's step. It
// leaves q unchanged and returns an error if a new precision is not
// positive definite.
func (s *SVGP) natGradStep(rows []int, gamma float64) (err error) {
	defer tensor.Recover(&err)
	mz, nl := s.qMu.Value.Shape()[0], len(s.qSqrt)
	g := graph.New()
	means, ls := make([]*tensor.Tensor, nl), make([]*tensor.Tensor, nl)
	eta, lNodes, mNodes := make([]*graph.Node, 0, 2*nl), make([]*graph.Node, nl), make([]*graph.Node, nl)
	for l, q := range s.qSqrt {
		means[l] = tensor.FromFloat64s(column(s.qMu.Value, l), mz, 1)
		ls[l] = lowerOf(q.Value)
		cov := tensor.MatMulT(ls[l], ls[l], false, true)
		eta1 := g.Var(means[l].Clone())
		eta2 := g.Var(tensor.Add(cov, tensor.MatMulT(means[l], means[l], false, true)))
		sym := graph.MulScalar(graph.Add(eta2, graph.Transpose(eta2)), 0.5)
		lNode, err := tryCholesky(graph.Sub(sym, graph.MatMulT(eta1, eta1, false, true)))
		if err != nil {
			return fmt.Errorf("q's covariance: %w", err)
		}
		eta, lNodes[l], mNodes[l] = append(eta, eta1, eta2), lNode, eta1
	}
	mu := mNodes[0]
	if nl > 1 {
		mu = graph.Concat(1, mNodes...)
	}
	yb := make([]float64, len(rows))
	for i, r := range rows {
		yb[i] = s.y[r]
	}
	elbo, err := s.elbo(g, s.z.Node(g), mu, lNodes, pickRows(s.x, rows), yb)
	if err != nil {
		return err
	}
	gs := autodiff.Grad(elbo, eta...)
	eye := tensor.Eye(tensor.Float64, mz)
	newMus, newLs := make([][]float64, nl), make([]*tensor.Tensor, nl)
	for l := range s.qSqrt {
		prec := tensor.CholeskySolve(ls[l], eye) // S⁻¹
		theta1 := tensor.Add(tensor.CholeskySolve(ls[l], means[l]), tensor.MulScalar(gs[2*l].Value(), gamma))
		newPrec := tensor.Sub(prec, tensor.MulScalar(gs[2*l+1].Value(), 2*gamma)) // −2θ₂
		lp, err := tensor.Cholesky(newPrec)
		if err != nil {
			return fmt.Errorf("natural-gradient step %g left q's precision not positive definite (lower NaturalGradient): %w", gamma, err)
		}
		newCov := tensor.CholeskySolve(lp, eye)
		newL, err := tensor.Cholesky(tensor.MulScalar(tensor.Add(newCov, tensor.Transpose(newCov)), 0.5))
		if err != nil {
			return fmt.Errorf("natural-gradient step %g: q's covariance: %w", gamma, err)
		}
		newMu := tensor.CholeskySolve(lp, theta1)
		if firstNonFinite(newMu.Values()) >= 0 || firstNonFinite(newL.Values()) >= 0 {
			return errors.New("natural-gradient step gave a non-finite q")
		}
		newMus[l], newLs[l] = newMu.Values(), newL
	}
	mv := s.qMu.Value.Values()
	for l := range s.qSqrt {
		for i := 0; i < mz; i++ {
			mv[i*nl+l] = newMus[l][i]
		}
		tensor.CopyInto(s.qSqrt[l].Value, newLs[l])
	}
	tensor.CopyInto(s.qMu.Value, tensor.FromFloat64s(mv, mz, nl))
	return nil
}

// column returns column j of the (r, c) matrix a.
func column(a *tensor.Tensor, j int) []float64 {
	r, c, v := a.Shape()[0], a.Shape()[1], a.Values()
	out := make([]float64, r)
	for i := range out {
		out[i] = v[i*c+j]
	}
	return out
}

// SVGPClassifier is classification by an SVGP with a class likelihood:
// binary with a Bernoulli likelihood (Hensman, Matthews and Ghahramani
// 2015, "Scalable Variational Gaussian Process Classification") or K
// classes with a softmax over K latent functions; labels 0 … K−1,
// minibatch training, and class probabilities averaged over q(f).
type SVGPClassifier struct {
	m   *SVGP
	lik ClassLikelihood
}

// FitSVGPClassifier returns an SVGP classifier of labels (0 … K−1, one
// per row of x) fitted as FitSVGP fits a regression; opts.Likelihood must
// be a ClassLikelihood (a *BernoulliLikelihood or *SoftmaxLikelihood; nil
// means the logit Bernoulli with 20 quadrature points). It returns an
// error and no model for labels outside 0 … K−1, a single class, a
// likelihood that does not model class labels, or anything NewSVGP
// rejects.
func FitSVGPClassifier(ctx context.Context, x *tensor.Tensor, labels []int, opts SVGPOptions) (*SVGPClassifier, error) {
	c, err := newSVGPClassifier("gp.FitSVGPClassifier", x, labels, opts)
	if err != nil {
		return nil, err
	}
	distinct := map[int]bool{}
	for _, l := range labels {
		distinct[l] = true
	}
	if len(distinct) < 2 {
		return nil, fmt.Errorf("gp.FitSVGPClassifier: every label is %d; fitting needs at least two classes", labels[0])
	}
	if err := c.m.fit(ctx, "gp.FitSVGPClassifier", opts); err != nil {
		if ctx != nil && ctx.Err() != nil {
			return c, err
		}
		return nil, err
	}
	return c, nil
}

// NewSVGPClassifier returns an SVGP classifier of labels at the kernel's
// current hyperparameters and q at the prior, without fitting; it returns
// the errors FitSVGPClassifier does, except for a single class.
func NewSVGPClassifier(x *tensor.Tensor, labels []int, opts SVGPOptions) (*SVGPClassifier, error) {
	return newSVGPClassifier("gp.NewSVGPClassifier", x, labels, opts)
}

func newSVGPClassifier(op string, x *tensor.Tensor, labels []int, opts SVGPOptions) (*SVGPClassifier, error) {
	if opts.Likelihood == nil {
		opts.Likelihood = NewBernoulliLikelihood(Logit, 0)
	}
	lik, ok := opts.Likelihood.(ClassLikelihood)
	if !ok {
		return nil, fmt.Errorf("%s: the %s likelihood does not model class labels; use gp.NewBernoulliLikelihood or gp.NewSoftmaxLikelihood", op, opts.Likelihood.Name())
	}
	k := lik.Classes()
	y := make([]float64, len(labels))
	for i, l := range labels {
		if l < 0 || l >= k {
			return nil, fmt.Errorf("%s: label %d at row %d; the %s likelihood takes labels 0 to %d", op, l, i, lik.Name(), k-1)
		}
		y[i] = float64(l)
	}
	m, err := func() (m *SVGP, err error) {
		defer tensor.Recover(&err)
		return newSVGP(op, x, y, opts)
	}()
	if err != nil {
		return nil, err
	}
	return &SVGPClassifier{m: m, lik: lik}, nil
}

// Model returns the underlying SVGP: its ELBO, inducing inputs, q(u),
// hyperparameters and latent predictions.
func (c *SVGPClassifier) Model() *SVGP { return c.m }

// Classes returns the number of classes K.
func (c *SVGPClassifier) Classes() int { return c.lik.Classes() }

// PredictProba returns the class probabilities (k, K) at xs (k, d), each
// p(y = j) = ∫ p(y = j | f) q(f) df. It returns an error like
// SVGP.Predict.
func (c *SVGPClassifier) PredictProba(xs *tensor.Tensor) (*tensor.Tensor, error) {
	mean, v, err := c.m.latent("gp.SVGPClassifier.PredictProba", xs)
	if err != nil {
		return nil, err
	}
	p := c.lik.ClassProbs(mean, v)
	k := c.lik.Classes()
	return tensor.FromFloat64s(p, len(p)/k, k), nil
}

// Predict returns the most probable class at each row of xs (the lower
// class on a tie). It returns an error like SVGP.Predict.
func (c *SVGPClassifier) Predict(xs *tensor.Tensor) ([]int, error) {
	mean, v, err := c.m.latent("gp.SVGPClassifier.Predict", xs)
	if err != nil {
		return nil, err
	}
	p, k := c.lik.ClassProbs(mean, v), c.lik.Classes()
	out := make([]int, len(p)/k)
	for i := range out {
		for j := 1; j < k; j++ {
			if p[i*k+j] > p[i*k+out[i]] {
				out[i] = j
			}
		}
	}
	return out, nil
}
