package ppl

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// LaplaceOptions configures FitLaplace. The zero value means the defaults
// given.
type LaplaceOptions struct {
	MaxIter int     // L-BFGS iterations for the mode (default 500)
	GradTol float64 // stop when max |∇| is below it (default 1e-8)
	Seed    uint64  // seeds the run of the model that finds its sites
}

// Laplace is the Laplace approximation of a model's posterior: a normal
// N(Mean, Cov) over the latent sites' unconstrained elements,
// concatenated in the model's order, centred at the mode of the
// unconstrained log density (log-Jacobians included) with the inverse of
// its negative Hessian there as covariance (Laplace 1774; MacKay 2003,
// "Information theory, inference, and learning algorithms", ch. 27).
type Laplace struct {
	Mean  []float64 // the mode, unconstrained
	Cov   []float64 // D×D, row-major
	chol  *tensor.Tensor
	sites []autoSite
	model Model
}

// FitLaplace finds the mode of the model's unconstrained log density by
// L-BFGS on gradients through the Unconstrain handler, and its Hessian by
// forward-over-reverse differentiation. Bad models fail before any work,
// as in NUTS. A Hessian that is not negative definite at the mode is an
// error; an L-BFGS run that stops before its tolerance returns the
// approximation with a *tensor.NotConvergedError. When ctx is cancelled it
// returns ctx.Err() wrapped.
func FitLaplace(ctx context.Context, model Model, opts LaplaceOptions) (l *Laplace, err error) {
	const op = "ppl.FitLaplace"
	tr, err := prototype(op, model, opts.Seed)
	if err != nil {
		return nil, err
	}
	if _, err := latents(op, tr); err != nil {
		return nil, err
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 500
	}
	if opts.GradTol == 0 {
		opts.GradTol = 1e-8
	}
	defer catch(op, &err)
	l = &Laplace{sites: autoSites(model, opts.Seed), model: model}
	x, _ := jointInit(l.sites)
	g := graph.New()
	negLogJoint := func(u *graph.Node) *graph.Node {
		t := &Trace{}
		Run(g, Record(enumerate(tr, Unconstrain(model, l.split(u))), t))
		return graph.Neg(t.LogJoint())
	}
	f := func(xs, grad []*tensor.Tensor) (float64, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		g.Reset()
		u := g.Var(xs[0])
		y := negLogJoint(u)
		if grad != nil {
			tensor.CopyInto(grad[0], autodiff.Grad(y, u)[0].Value())
		}
		return y.Item(), nil
	}
	res, merr := optim.Minimize(f, []*tensor.Tensor{x}, optim.LBFGSOptions{MaxIter: opts.MaxIter, GradTol: opts.GradTol})
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("%s: %w", op, cerr)
	}
	g.Reset()
	u := g.Var(x)
	h := autodiff.Hessian(negLogJoint(u), u)
	cov, ierr := tensor.Inverse(h)
	if ierr != nil {
		return nil, fmt.Errorf("%s: the Hessian at the mode is singular: %w", op, ierr)
	}
	chol, cerr := tensor.Cholesky(cov)
	if cerr != nil {
		return nil, fmt.Errorf("%s: the log density is not concave at the mode (%w)", op, cerr)
	}
	l.Mean, l.Cov, l.chol = x.Values(), cov.Values(), chol
	if merr != nil || !res.Converged {
		return l, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: res.GradNorm, Tol: opts.GradTol}
	}
	return l, nil
}

// split slices a joint unconstrained vector into the sites' shapes.
func (l *Laplace) split(u *graph.Node) map[string]*graph.Node {
	vals := map[string]*graph.Node{}
	off := 0
	for _, a := range l.sites {
		n := size(a.unconShape)
		vals[a.name] = graph.Reshape(graph.Slice(u, 0, off, off+n, 1), a.unconShape...)
		off += n
	}
	return vals
}

// Guide returns the approximation as a guide: one multivariate normal
// draw over the unconstrained elements, mapped onto each site's support.
// It serves as Importance's proposal, or for Predictive through Sample.
func (l *Laplace) Guide() Model {
	return func(c *Ctx) {
		d := len(l.Mean)
		q := probabilistic.NewMVNFromScaleTril(c.Const(tensor.FromValues(tensor.Float64, l.Mean, d)), c.Const(l.chol))
		unpack(c, l.sites, sampleAux(c, "_auto_latent", q))
	}
}

// Sample draws n times from the approximation and returns the latent
// sites keyed by name.
func (l *Laplace) Sample(n int, seed uint64) (Samples, error) {
	if n < 1 {
		return nil, fmt.Errorf("ppl.Laplace.Sample: n = %d, want ≥ 1", n)
	}
	guide := l.Guide()
	return collect("ppl.Laplace.Sample", n, func(g *graph.Graph, i int) *Trace {
		tr := &Trace{}
		Run(g, Record(Seed(guide, seed+uint64(i)*0x9e3779b97f4a7c15), tr))
		return tr
	}, func(s *Site) *graph.Node {
		if s.Kind == SampleSite && !s.auxiliary {
			return s.Value
		}
		return nil
	})
}
