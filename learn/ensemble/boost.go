package ensemble

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// Loss is a differentiable loss summed over examples: pred and target are
// (n) nodes of one graph, and the result a scalar node. Its Hessian must be
// diagonal (a sum of per-example terms), as every pointwise loss's is.
type Loss func(pred, target *graph.Node) *graph.Node

// SquaredError is Σ ½(predᵢ − targetᵢ)².
func SquaredError(pred, target *graph.Node) *graph.Node {
	return graph.MulScalar(graph.Sum(graph.Square(graph.Sub(pred, target)), nil, false), 0.5)
}

// Logistic is the binary cross-entropy of logits pred against 0/1 targets,
// summed (losses.BCEWithLogits).
func Logistic(pred, target *graph.Node) *graph.Node {
	return losses.BCEWithLogits(pred, target, losses.Sum)
}

// BoostOptions configures Boost. Zero fields take the defaults given.
type BoostOptions struct {
	Rounds       int     // trees (default 100)
	LearningRate float64 // shrinkage of each tree (default 0.1)
	Tree         TreeOptions
}

// Booster is a boosted ensemble: F(x) = Base + LearningRate·Σ treeₖ(x), in
// the loss's prediction space (logits for Logistic).
type Booster struct {
	Base         float64
	LearningRate float64
	Trees        []*Tree
	// Loss holds the training loss after each round.
	Loss []float64
}

// Boost fits gradient-boosted trees to the rows of x (n, d) and targets y
// under loss, by Newton boosting: each round takes gᵢ = ∂L/∂Fᵢ from
// autodiff.Grad and hᵢ = ∂²L/∂Fᵢ² from one Hessian-vector product with
// ones (exact for a per-example loss), grows a tree on (g, h) and adds it
// with shrinkage. The base score is one Newton step from 0.
func Boost(x *tensor.Tensor, y []float64, loss Loss, opts BoostOptions) (*Booster, error) {
	const op = "ensemble.Boost"
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[0] != len(y) {
		return nil, fmt.Errorf("%s: want an (n, d) matrix with one target per row, got %v and %d targets", op, x, len(y))
	}
	if loss == nil {
		return nil, fmt.Errorf("%s: nil loss", op)
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 100
	}
	if opts.LearningRate <= 0 {
		opts.LearningRate = 0.1
	}
	if opts.Tree.MaxDepth <= 0 {
		opts.Tree.MaxDepth = 3
	}
	if opts.Tree.MinLeaf <= 0 {
		opts.Tree.MinLeaf = 1
	}
	if opts.Tree.Lambda == 0 {
		opts.Tree.Lambda = 1
	}
	n, d := x.Shape()[0], x.Shape()[1]
	xv := x.Cast(tensor.Float64).Contiguous().Values()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = xv[i*d : (i+1)*d]
		for j, v := range rows[i] {
			if !finite(v) {
				return nil, fmt.Errorf("%s: row %d, column %d is %v", op, i, j, v)
			}
		}
	}
	target := tensor.FromFloat64s(append([]float64(nil), y...), n)
	f := make([]float64, n)
	b := &Booster{LearningRate: opts.LearningRate}
	g0, h0, _, err := derivatives(loss, f, target)
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
		g, h, l, err := derivatives(loss, f, target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		b.Loss = append(b.Loss, l)
		t := fitTree(rows, g, h, idx, opts.Tree)
		b.Trees = append(b.Trees, t)
		for i, r := range rows {
			f[i] += opts.LearningRate * t.Predict(r)
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
	ln := loss(fn, gr.Const(target))
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

// Predict returns F(x) for the rows of x (m, d).
func (b *Booster) Predict(x *tensor.Tensor) []float64 {
	if x == nil || x.Dim() != 2 {
		tensor.Fail("ensemble.Predict", "want an (m, d) matrix, got %v", x)
	}
	m, d := x.Shape()[0], x.Shape()[1]
	v := x.Cast(tensor.Float64).Contiguous().Values()
	out := make([]float64, m)
	for i := range out {
		out[i] = b.Base
		for _, t := range b.Trees {
			out[i] += b.LearningRate * t.Predict(v[i*d:(i+1)*d])
		}
	}
	return out
}
