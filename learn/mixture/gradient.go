package mixture

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// LogLikelihood returns Σᵢ log Σₖ softmax(logits)ₖ·N(xᵢ; μₖ, LₖLₖᵀ) as a
// scalar node: x (n, d), logits (K), means (K, d), and the lower Cholesky
// factors chol (K, d, d) of the covariances (only their lower triangles
// are read). Everything is differentiable, so the mixture can be fitted
// by gradient or embedded in a larger model.
func LogLikelihood(x, logits, means, chol *graph.Node) *graph.Node {
	d := x.Shape()[1]
	l := graph.Tril(chol)
	diff := graph.Sub(graph.Unsqueeze(x, 0), graph.Unsqueeze(means, 1)) // (K, n, d)
	z := graph.TriSolve(l, graph.Transpose(diff), true, false)          // (K, d, n)
	maha := graph.Sum(graph.Square(z), []int{1}, false)                 // (K, n)
	logdet := graph.Unsqueeze(graph.LogDetChol(l), 1)                   // (K, 1)
	logw := graph.Unsqueeze(graph.LogSoftmax(logits, 0), 1)             // (K, 1)
	comp := graph.Sub(logw, graph.MulScalar(graph.AddScalar(graph.Add(logdet, maha), float64(d)*math.Log(2*math.Pi)), 0.5))
	return graph.Sum(graph.LogSumExp(comp, []int{0}, false), nil, false)
}

// GaussianMixtureGradientOptions configures FitGaussianMixtureGradient.
type GaussianMixtureGradientOptions struct {
	// Start is the mixture the optimiser starts from (required): an EM
	// fit, or any mixture with positive definite covariances.
	Start   *GaussianMixture
	MaxIter int // L-BFGS iterations (default 500)
}

// FitGaussianMixtureGradient maximises LogLikelihood over the weights'
// logits, the means and the Cholesky factors (diagonals through exp, so
// covariances stay positive definite) with L-BFGS (Nocedal and Wright
// 2006, Numerical Optimization, Algorithm 7.5), starting from opts.Start.
// The fitted mixture's LogLikelihood is the mean per row as for EM, and
// Iterations counts the L-BFGS iterations. It returns an error for bad
// data, a missing start or a start of another width; when the optimiser
// stops without meeting its tolerance, the mixture comes back with a
// *tensor.NotConvergedError; when ctx is cancelled, the best mixture so
// far comes back with an error wrapping ctx.Err().
func FitGaussianMixtureGradient(ctx context.Context, x *tensor.Tensor, opts GaussianMixtureGradientOptions) (*GaussianMixture, error) {
	const op = "mixture.FitGaussianMixtureGradient"
	start := opts.Start
	if start == nil {
		return nil, fmt.Errorf("%s: nil Start", op)
	}
	x, err := checkData(op, x)
	if err != nil {
		return nil, err
	}
	n, k, d := x.Shape()[0], len(start.Weights), x.Shape()[1]
	if start.Means == nil || start.Means.Dim() != 2 || start.Means.Shape()[1] != d {
		return nil, fmt.Errorf("%s: data has %d columns but Start does not have means of that width", op, d)
	}
	if opts.MaxIter < 0 {
		return nil, fmt.Errorf("%s: MaxIter = %d must not be negative", op, opts.MaxIter)
	}
	maxIter := opts.MaxIter
	if maxIter == 0 {
		maxIter = 500
	}
	l, err := tensor.Cholesky(start.Covariances)
	if err != nil {
		return nil, fmt.Errorf("%s: Start: %w", op, err)
	}
	// Unconstrained parameters: logits, means, and L with log-diagonal.
	logits := make([]float64, k)
	for j, w := range start.Weights {
		logits[j] = math.Log(w)
	}
	raw := l.Clone()
	rv := raw.Float64s()
	for j := range k {
		for a := range d {
			rv[j*d*d+a*d+a] = math.Log(rv[j*d*d+a*d+a])
		}
	}
	params := []*tensor.Tensor{tensor.FromFloat64s(logits, k), start.Means.Clone(), raw}
	eye := tensor.Eye(tensor.Float64, d)
	g := graph.New()
	build := func(p []*graph.Node) *graph.Node {
		e := g.Const(eye)
		strict := graph.Sub(graph.Tril(p[2]), graph.Mul(p[2], e))
		chol := graph.Add(strict, graph.Mul(graph.Exp(p[2]), e))
		return LogLikelihood(g.Const(x), p[0], p[1], chol)
	}
	f := func(p, grad []*tensor.Tensor) (v float64, err error) {
		if err := ctx.Err(); err != nil {
			return 0, err // every trial fails, so L-BFGS stops at its last good point
		}
		defer tensor.Recover(&err)
		g.Reset()
		vars := []*graph.Node{g.Var(p[0]), g.Var(p[1]), g.Var(p[2])}
		nll := graph.MulScalar(build(vars), -1/float64(n))
		for i, gr := range autodiff.Grad(nll, vars...) {
			tensor.CopyInto(grad[i], gr.Value())
		}
		return nll.Item(), nil
	}
	const gradTol = 1e-9
	res, err := optim.Minimize(f, params, optim.LBFGSOptions{MaxIter: maxIter, GradTol: gradTol})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	g.Reset()
	vars := []*graph.Node{g.Const(params[0]), g.Const(params[1]), g.Const(params[2])}
	e := g.Const(eye)
	strict := graph.Sub(graph.Tril(vars[2]), graph.Mul(vars[2], e))
	chol := graph.Add(strict, graph.Mul(graph.Exp(vars[2]), e))
	cov := graph.MatMulT(chol, chol, false, true).Value().Clone()
	w := graph.Softmax(vars[0], 0).Value().Values()
	m := &GaussianMixture{Weights: w, Means: params[1], Covariances: cov, LogLikelihood: -res.F,
		Iterations: res.Iterations, converged: res.Converged}
	if _, err := m.factor(); err != nil { // factor now, so prediction never writes to m
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	switch {
	case ctx.Err() != nil:
		return m, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	case !res.Converged:
		return m, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: res.GradNorm, Tol: gradTol}
	}
	return m, nil
}
