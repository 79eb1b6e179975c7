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

// FitPlatt fits A and B by maximum likelihood on decision values f and
// their labels (true for the positive class), with Platt's smoothed
// targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), which keep the fit finite on
// separable data. Decision values from the training rows are biased
// towards overconfidence: use held-out rows (LIBSVM uses cross-validation).
func FitPlatt(f []float64, positive []bool) (Platt, error) {
	if len(f) != len(positive) || len(f) == 0 {
		return Platt{}, fmt.Errorf("svm.FitPlatt: %d decision values for %d labels", len(f), len(positive))
	}
	var np, nn float64
	for _, p := range positive {
		if p {
			np++
		} else {
			nn++
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
	if _, err := optim.Minimize(obj, []*tensor.Tensor{ab}, optim.LBFGSConfig{MaxIter: 200, GradTol: 1e-10}); err != nil {
		return Platt{}, fmt.Errorf("svm.FitPlatt: %w", err)
	}
	v := ab.Values()
	return Platt{A: v[0], B: v[1]}, nil
}

// Probability returns P(positive | f) for each decision value.
func (p Platt) Probability(f []float64) []float64 {
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = 1 / (1 + math.Exp(p.A*v+p.B))
	}
	return out
}
