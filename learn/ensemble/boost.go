package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// Loss is a differentiable loss in package losses' form: pred and target
// are (n) nodes of one graph, and the booster asks for the losses.Sum
// reduction, a scalar node. losses.MSE, losses.BCEWithLogits, losses.L1
// serve as they are. Its Hessian must be diagonal (a sum of per-example
// terms), as every pointwise loss's is.
type Loss func(pred, target *graph.Node, red losses.Reduction) *graph.Node

// BoosterOptions configures FitBooster. Zero fields take the defaults
// given.
type BoosterOptions struct {
	Loss         Loss    // the training loss (default losses.MSE)
	Rounds       int     // trees (default 100)
	LearningRate float64 // shrinkage of each tree (default 0.1)
	MaxDepth     int     // depth of each tree (default 3)
	MinLeaf      int     // fewest examples in a leaf (default 1)
	Lambda       float64 // L2 penalty on leaf weights (default 1)
}

// Booster is a boosted ensemble: F(x) = Base + LearningRate·Σ treeₖ(x), in
// the loss's prediction space (logits for losses.BCEWithLogits).
type Booster struct {
	Base         float64 // the starting score, one Newton step from 0
	LearningRate float64 // the shrinkage each tree was added with
	Trees        []*Tree // one per round
	// Trace holds the training loss at the start of each round.
	Trace    []float64
	features int
}

// FitBooster fits gradient-boosted trees to the rows of x (n, d) and the
// targets y (n) under opts.Loss, by Newton boosting (Friedman 2001,
// "Greedy function approximation: a gradient boosting machine"; Chen and
// Guestrin 2016): each round takes gᵢ = ∂L/∂Fᵢ from autodiff.Grad and
// hᵢ = ∂²L/∂Fᵢ² from one Hessian-vector product with ones (exact for a
// per-example loss), grows a tree on (g, h) and adds it with shrinkage.
// The base score is one Newton step from 0.
//
// It returns an error naming the fit for bad data (not a matrix, zero
// columns, NaN or Inf in x or y, a row count other than y's), negative
// options, or a loss whose gradient or Hessian is not finite or whose
// Hessian is negative. When ctx is cancelled it stops before the next
// round and returns the ensemble so far with an error wrapping ctx.Err().
// Its Rounds is a budget it always spends, with no convergence test: it never
// returns a *tensor.NotConvergedError.
func FitBooster(ctx context.Context, x, y *tensor.Tensor, opts BoosterOptions) (*Booster, error) {
	const op = "ensemble.FitBooster"
	yv, err := targets(op, y)
	if err != nil {
		return nil, err
	}
	rows, err := dataRows(op, x, len(yv))
	if err != nil {
		return nil, err
	}
	if opts.Rounds < 0 || !(opts.LearningRate >= 0) || opts.MaxDepth < 0 || opts.MinLeaf < 0 || !(opts.Lambda >= 0) ||
		math.IsInf(opts.LearningRate, 0) || math.IsInf(opts.Lambda, 0) {
		return nil, fmt.Errorf("%s: Rounds = %d, LearningRate = %v, MaxDepth = %d, MinLeaf = %d and Lambda = %v must be finite and not negative",
			op, opts.Rounds, opts.LearningRate, opts.MaxDepth, opts.MinLeaf, opts.Lambda)
	}
	if opts.Loss == nil {
		opts.Loss = losses.MSE
	}
	if opts.Rounds == 0 {
		opts.Rounds = 100
	}
	if opts.LearningRate == 0 {
		opts.LearningRate = 0.1
	}
	tree := treeOptions{maxDepth: opts.MaxDepth, minLeaf: opts.MinLeaf, lambda: opts.Lambda}
	if tree.maxDepth == 0 {
		tree.maxDepth = 3
	}
	if tree.minLeaf == 0 {
		tree.minLeaf = 1
	}
	if tree.lambda == 0 {
		tree.lambda = 1
	}
	n := len(rows)
	target := tensor.FromFloat64s(yv, n)
	f := make([]float64, n)
	b := &Booster{LearningRate: opts.LearningRate, features: len(rows[0])}
	g0, h0, _, err := derivatives(opts.Loss, f, target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var gs, hs float64
	for i := range g0 {
		gs, hs = gs+g0[i], hs+h0[i]
	}
	if hs > 0 {
		b.Base = -gs / hs
	}
	for i := range f {
		f[i] = b.Base
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for range opts.Rounds {
		if ctx.Err() != nil {
			return b, fmt.Errorf("%s: stopped after %d rounds: %w", op, len(b.Trees), ctx.Err())
		}
		g, h, l, err := derivatives(opts.Loss, f, target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		b.Trace = append(b.Trace, l)
		t := fitTree(rows, g, h, idx, tree)
		b.Trees = append(b.Trees, t)
		for i, r := range rows {
			f[i] += opts.LearningRate * t.value(r)
		}
	}
	return b, nil
}

// derivatives returns the loss's gradient and Hessian diagonal at the
// predictions f, and its value.
func derivatives(loss Loss, f []float64, target *tensor.Tensor) (g, h []float64, l float64, err error) {
	defer tensor.Recover(&err)
	gr := graph.New()
	fn := gr.Var(tensor.FromFloat64s(append([]float64(nil), f...), len(f)))
	ln := loss(fn, gr.Const(target), losses.Sum)
	if ln == nil || ln.Size() != 1 {
		return nil, nil, 0, fmt.Errorf("the loss must return a scalar, got %v", ln)
	}
	ones := tensor.Ones(tensor.Float64, len(f))
	hv := autodiff.HVP(ln, []*graph.Node{fn}, []*graph.Node{gr.Const(ones)})[0]
	g = autodiff.Grad(ln, fn)[0].Value().Values()
	h = hv.Value().Values()
	for i := range g {
		if !finite(g[i]) || !finite(h[i]) || h[i] < 0 {
			return nil, nil, 0, fmt.Errorf("example %d: gradient %v, Hessian %v (need finite values and h ≥ 0)", i, g[i], h[i])
		}
	}
	return g, h, ln.Item(), nil
}

// Predict returns F(x) for the rows of x (m, d), an (m) tensor. It panics
// with a *tensor.Error when x is not an (m, d) matrix of the training
// width.
func (b *Booster) Predict(x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows("ensemble.Booster.Predict", x, b.features)
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = b.Base
		for _, t := range b.Trees {
			out[i] += b.LearningRate * t.value(r)
		}
	}
	return tensor.FromFloat64s(out, len(out))
}
