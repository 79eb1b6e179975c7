package bayeslinear

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// LogEvidence returns log p(y | α, β) as a graph of the unconstrained
// logA = log α and logB = log β (scalar nodes of one graph), for the
// design matrix phi (n, M) and targets y:
//
//	M/2·log α + n/2·log β − β/2‖y − Φm‖² − α/2‖m‖² − ½log|A| − n/2·log 2π,
//	A = αI + βΦᵀΦ, m = βA⁻¹Φᵀy,
//
// so that α and β can be chosen by gradient (FitEvidenceGradient) or
// given priors.
func LogEvidence(phi *tensor.Tensor, y []float64, logA, logB *graph.Node) *graph.Node {
	g := logA.Graph()
	n, m := phi.Shape()[0], phi.Shape()[1]
	p := g.Const(phi)
	yv := g.Const(tensor.FromFloat64s(y, n, 1))
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
// L-BFGS on (log α, log β), from opts' starting values: the gradient route
// to FitEvidence's fixed point, and a template for evidence maximisation
// where no fixed-point update is known.
func FitEvidenceGradient(phi *tensor.Tensor, y []float64, opts Options) (*Model, error) {
	p, err := check("bayeslinear.FitEvidenceGradient", phi, y)
	if err != nil {
		return nil, err
	}
	opts = opts.defaults(y)
	x := []*tensor.Tensor{tensor.FromFloat64s([]float64{math.Log(opts.Alpha), math.Log(opts.Beta)}, 2)}
	f := func(xs, grad []*tensor.Tensor) (v float64, err error) {
		defer tensor.Recover(&err)
		g := graph.New()
		ab := g.Var(xs[0])
		ev := LogEvidence(p, y, graph.Slice(graph.Reshape(ab, 2), 0, 0, 1, 1), graph.Slice(graph.Reshape(ab, 2), 0, 1, 2, 1))
		ev = graph.Sum(ev, nil, false)
		gr := autodiff.Grad(ev, ab)[0].Value()
		tensor.CopyInto(grad[0], tensor.Neg(gr))
		return -ev.Item(), nil
	}
	res, err := optim.Minimize(f, x, optim.LBFGSConfig{MaxIter: opts.MaxIter, GradTol: 1e-9, FuncTol: 1e-15})
	if err != nil {
		return nil, fmt.Errorf("bayeslinear.FitEvidenceGradient: %w", err)
	}
	v := x[0].Values()
	model, err := Fit(p, y, math.Exp(v[0]), math.Exp(v[1]))
	if err != nil {
		return nil, err
	}
	model.Iterations, model.Converged = res.Iterations, res.Converged
	return model, nil
}
