package svm

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// Platt holds a sigmoid P(positive | f) = 1/(1 + exp(A·f + B)) fitted to
// decision values (Platt 1999; Lin, Lin and Weng 2007).
type Platt struct{ A, B float64 }

// FitPlatt fits A and B by maximum likelihood on decision values (n) and
// their labels (1 for the positive class, 0 for the negative), with
// Platt's smoothed targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), which keep
// the fit finite on separable data. Decision values from the training rows
// are biased towards overconfidence: use held-out rows (LIBSVM uses
// cross-validation). It returns an error for non-finite decision values,
// labels other than 0 and 1, lengths that differ, or a single class. When
// L-BFGS runs out of MaxIter it returns the sigmoid so far with a
// *tensor.NotConvergedError.
func FitPlatt(decision *tensor.Tensor, labels []int, opts PlattOptions) (Platt, error) {
	const op = "svm.FitPlatt"
	if decision == nil || decision.Dim() != 1 || decision.Shape()[0] != len(labels) || len(labels) == 0 {
		return Platt{}, fmt.Errorf("%s: want an (n) tensor of decision values for %d labels, got %v", op, len(labels), decision)
	}
	f := decision.Values()
	for i, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Platt{}, fmt.Errorf("%s: decision value %d is %v", op, i, v)
		}
	}
	if opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return Platt{}, fmt.Errorf("%s: negative MaxIter %d or Tol %v", op, opts.MaxIter, opts.Tol)
	}
	maxIter, tol := opts.MaxIter, opts.Tol
	if maxIter == 0 {
		maxIter = 200
	}
	if tol == 0 {
		tol = 1e-10
	}
	positive := make([]bool, len(labels))
	var np, nn float64
	for i, l := range labels {
		switch l {
		case 1:
			positive[i] = true
			np++
		case 0:
			nn++
		default:
			return Platt{}, fmt.Errorf("%s: label %d is %d; labels must be 0 or 1", op, i, l)
		}
	}
	if np == 0 || nn == 0 {
		return Platt{}, fmt.Errorf("svm.FitPlatt: need both classes, have %v positive and %v negative", np, nn)
	}
	t := make([]float64, len(f))
	for i, p := range positive {
		t[i] = 1 / (nn + 2)
		if p {
			t[i] = (np + 1) / (np + 2)
		}
	}
	ft, tt := tensor.FromFloat64s(append([]float64(nil), f...), len(f)), tensor.FromFloat64s(t, len(t))
	ab := tensor.FromFloat64s([]float64{0, math.Log((nn + 1) / (np + 1))}, 2)
	g := graph.New()
	obj := func(x, grad []*tensor.Tensor) (v float64, err error) {
		defer tensor.Recover(&err)
		g.Reset()
		p := g.Var(x[0])
		a, b := graph.Slice(p, 0, 0, 1, 1), graph.Slice(p, 0, 1, 2, 1)
		// With z = A·f + B, P = σ(−z), so −log P = softplus(z) and
		// −log(1 − P) = softplus(−z): the cross-entropy with targets t.
		z := graph.Add(graph.Mul(g.Const(ft), a), b)
		tn := g.Const(tt)
		nll := graph.Sum(graph.Add(graph.Mul(tn, graph.Softplus(z)), graph.Mul(graph.AddScalar(graph.Neg(tn), 1), graph.Softplus(graph.Neg(z)))), nil, false)
		tensor.CopyInto(grad[0], autodiff.Grad(nll, p)[0].Value())
		return nll.Item(), nil
	}
	res, err := optim.Minimize(obj, []*tensor.Tensor{ab}, optim.LBFGSOptions{MaxIter: maxIter, GradTol: tol})
	if err != nil {
		return Platt{}, fmt.Errorf("svm.FitPlatt: %w", err)
	}
	v := ab.Values()
	if !res.Converged {
		return Platt{A: v[0], B: v[1]}, notConverged(op, res.Iterations, res.GradNorm, tol)
	}
	return Platt{A: v[0], B: v[1]}, nil
}

// PredictProba returns the class probabilities for decision values (n)
// as an (n, 2) tensor: column 0 is P(negative | f), column 1
// P(positive | f). It panics with a *tensor.Error unless decision is a
// vector.
func (p Platt) PredictProba(decision *tensor.Tensor) *tensor.Tensor {
	if decision == nil || decision.Dim() != 1 {
		tensor.Fail("svm.Platt.PredictProba", "want an (n) tensor of decision values, got %v", decision)
	}
	f := decision.Values()
	out := make([]float64, 2*len(f))
	for i, v := range f {
		pos := 1 / (1 + math.Exp(p.A*v+p.B))
		out[2*i], out[2*i+1] = 1-pos, pos
	}
	return tensor.FromFloat64s(out, len(f), 2)
}
