package mixture

import (
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

// FitGaussianMixtureGradient maximises LogLikelihood over the weights'
// logits, the means and the Cholesky factors (diagonals through exp, so
// covariances stay positive definite) with L-BFGS, starting from start
// (an EM fit, or any mixture). It returns the fitted mixture, whose
// LogLikelihood is the mean per row as for EM, and the optimiser's report.
func FitGaussianMixtureGradient(x *tensor.Tensor, start *GaussianMixture, maxIter int) (*GaussianMixture, optim.LBFGSResult, error) {
	if start == nil {
		return nil, optim.LBFGSResult{}, fmt.Errorf("mixture.FitGaussianMixtureGradient: nil start")
	}
	x = start.check("mixture.FitGaussianMixtureGradient", x)
	n, k, d := x.Shape()[0], len(start.Weights), x.Shape()[1]
	if maxIter <= 0 {
		maxIter = 500
	}
	l, err := tensor.Cholesky(start.Covariances)
	if err != nil {
		return nil, optim.LBFGSResult{}, fmt.Errorf("mixture.FitGaussianMixtureGradient: %w", err)
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
		defer tensor.Recover(&err)
		g.Reset()
		vars := []*graph.Node{g.Var(p[0]), g.Var(p[1]), g.Var(p[2])}
		nll := graph.MulScalar(build(vars), -1/float64(n))
		for i, gr := range autodiff.Grad(nll, vars...) {
			tensor.CopyInto(grad[i], gr.Value())
		}
		return nll.Item(), nil
	}
	res, err := optim.Minimize(f, params, optim.LBFGSConfig{MaxIter: maxIter, GradTol: 1e-9})
	if err != nil {
		return nil, res, fmt.Errorf("mixture.FitGaussianMixtureGradient: %w", err)
	}
	g.Reset()
	vars := []*graph.Node{g.Const(params[0]), g.Const(params[1]), g.Const(params[2])}
	e := g.Const(eye)
	strict := graph.Sub(graph.Tril(vars[2]), graph.Mul(vars[2], e))
	chol := graph.Add(strict, graph.Mul(graph.Exp(vars[2]), e))
	cov := graph.MatMulT(chol, chol, false, true).Value().Clone()
	w := graph.Softmax(vars[0], 0).Value().Values()
	return &GaussianMixture{Weights: w, Means: params[1], Covariances: cov, LogLikelihood: -res.F,
		Iterations: res.Iterations, Converged: res.Converged}, res, nil
}
