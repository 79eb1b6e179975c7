package bayeslinear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// LogEvidence returns log p(y | α, β) as a graph of the unconstrained
// logA = log α and logB = log β (scalar nodes of one graph), for the
// design matrix phi (n, M) and targets y (n):
//
//	M/2·log α + n/2·log β − β/2‖y − Φm‖² − α/2‖m‖² − ½log|A| − n/2·log 2π,
//	A = αI + βΦᵀΦ, m = βA⁻¹Φᵀy,
//
// so that α and β can be chosen by gradient (FitEvidenceGradient) or
// given priors.
//
// It panics with a *tensor.Error when the shapes do not fit.
func LogEvidence(phi, y *tensor.Tensor, logA, logB *graph.Node) *graph.Node {
	if phi == nil || y == nil || phi.Dim() != 2 || y.Dim() != 1 || y.Shape()[0] != phi.Shape()[0] {
		tensor.Fail("bayeslinear.LogEvidence", "want an (n, M) design matrix and (n) targets, got %v and %v", phi, y)
	}
	g := logA.Graph()
	n, m := phi.Shape()[0], phi.Shape()[1]
	phi = phi.Cast(tensor.Float64)
	p := g.Const(phi)
	yv := g.Const(tensor.Reshape(y.Cast(tensor.Float64), n, 1))
	alpha, beta := graph.Exp(logA), graph.Exp(logB)
	gram := g.Const(tensor.MatMulT(phi, phi, true, false))
	a := graph.AddDiag(graph.Mul(beta, gram), graph.BroadcastTo(alpha, m))
	l := graph.Cholesky(a)
	mean := graph.Mul(beta, graph.CholeskySolve(l, graph.MatMulT(p, yv, true, false)))
	resid := graph.Sub(yv, graph.MatMul(p, mean))
	ev := graph.Add(graph.MulScalar(logA, float64(m)/2), graph.MulScalar(logB, float64(n)/2))
	ev = graph.Sub(ev, graph.Mul(graph.MulScalar(beta, 0.5), graph.Sum(graph.Square(resid), nil, false)))
	ev = graph.Sub(ev, graph.Mul(graph.MulScalar(alpha, 0.5), graph.Sum(graph.Square(mean), nil, false)))
	ev = graph.Sub(ev, graph.MulScalar(graph.LogDetChol(l), 0.5))
	return graph.AddScalar(ev, -float64(n)/2*math.Log(2*math.Pi))
}

// FitEvidenceGradient chooses α and β by maximising LogEvidence with
// L-BFGS (Nocedal and Wright 2006, Numerical Optimization, Algorithm 7.5)
// on (log α, log β), from opts' starting values: the gradient route to
// FitEvidence's fixed point, and a template for evidence maximisation
// where no fixed-point update is known. It returns an error as
// FitRegression does; when L-BFGS stops without meeting its tolerance, or
// log β reaches its bound because the design fits y exactly, the model
// comes back with a *tensor.NotConvergedError, and when ctx is cancelled
// with an error wrapping ctx.Err().
func FitEvidenceGradient(ctx context.Context, x, y *tensor.Tensor, opts EvidenceOptions) (*Regression, error) {
	const op = "bayeslinear.FitEvidenceGradient"
	p, yv, err := check(op, x, y)
	if err != nil {
		return nil, err
	}
	alpha, beta, err := precisions(op, opts.Alpha, opts.Beta, yv)
	if err != nil {
		return nil, err
	}
	maxIter, _, err := iterations(op, opts.MaxIter, opts.Tol)
	if err != nil {
		return nil, err
	}
	yt := tensor.FromFloat64s(yv, len(yv))
	bmax := betaMax(yv)
	params := []*tensor.Tensor{tensor.FromFloat64s([]float64{math.Log(alpha), math.Log(min(beta, bmax))}, 2)}
	upper := []*tensor.Tensor{tensor.FromFloat64s([]float64{math.Inf(1), math.Log(bmax)}, 2)}
	f := func(xs, grad []*tensor.Tensor) (v float64, err error) {
		if err := ctx.Err(); err != nil {
			return 0, err // every trial fails, so L-BFGS stops at its last good point
		}
		defer tensor.Recover(&err)
		g := graph.New()
		ab := g.Var(xs[0])
		ev := LogEvidence(p, yt, graph.Slice(graph.Reshape(ab, 2), 0, 0, 1, 1), graph.Slice(graph.Reshape(ab, 2), 0, 1, 2, 1))
		ev = graph.Sum(ev, nil, false)
		gr := autodiff.Grad(ev, ab)[0].Value()
		tensor.CopyInto(grad[0], tensor.Neg(gr))
		return -ev.Item(), nil
	}
	const gradTol = 1e-9
	res, err := optim.Minimize(f, params, optim.LBFGSOptions{MaxIter: maxIter, GradTol: gradTol, FuncTol: 1e-15, Upper: upper})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	v := params[0].Values()
	model, err := FitRegression(p, yt, RegressionOptions{Alpha: math.Exp(v[0]), Beta: math.Exp(v[1])})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	model.Iterations = res.Iterations
	switch {
	case ctx.Err() != nil:
		return model, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	case v[1] >= math.Log(bmax)-1e-9:
		return model, diverged(op, res.Iterations, model.Beta)
	case !res.Converged:
		return model, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: res.GradNorm, Tol: gradTol}
	}
	return model, nil
}
