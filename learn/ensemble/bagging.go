package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// BaggingOptions configures FitBagging. Zero fields take the defaults
// given.
type BaggingOptions struct {
	Trees    int     // trees (default 10, as scikit-learn's BaggingRegressor)
	MaxDepth int     // depth of each tree (default 8)
	MinLeaf  int     // fewest examples in a leaf (default 5)
	Lambda   float64 // L2 penalty on leaf weights (default 0: leaves hold their rows' mean target)
	Seed     uint64  // seed of the bootstrap samples (default 0)
}

// Bagging is an average of least-squares regression trees, each grown on
// a bootstrap sample of the rows (Breiman 1996, "Bagging predictors"): the
// regression counterpart of Forest.
type Bagging struct {
	Trees    []*Tree // one per bootstrap sample
	features int
}

// FitBagging grows opts.Trees regression trees on bootstrap samples of the
// rows of x (n, d) with targets y (n). It returns an error naming the fit
// for bad data (as FitBooster) or negative options. When ctx is cancelled
// it stops before the next tree and returns the trees so far with an
// error wrapping ctx.Err().
// Its Trees is a budget it always spends, with no convergence test: it never
// returns a *tensor.NotConvergedError.
func FitBagging(ctx context.Context, x, y *tensor.Tensor, opts BaggingOptions) (*Bagging, error) {
	const op = "ensemble.FitBagging"
	yv, err := targets(op, y)
	if err != nil {
		return nil, err
	}
	rows, err := dataRows(op, x, len(yv))
	if err != nil {
		return nil, err
	}
	if opts.Trees < 0 || opts.MaxDepth < 0 || opts.MinLeaf < 0 || !(opts.Lambda >= 0) || math.IsInf(opts.Lambda, 0) {
		return nil, fmt.Errorf("%s: Trees = %d, MaxDepth = %d, MinLeaf = %d and Lambda = %v must be finite and not negative", op, opts.Trees, opts.MaxDepth, opts.MinLeaf, opts.Lambda)
	}
	if opts.Trees == 0 {
		opts.Trees = 10
	}
	tree := treeOptions{maxDepth: opts.MaxDepth, minLeaf: opts.MinLeaf, lambda: opts.Lambda}
	if tree.maxDepth == 0 {
		tree.maxDepth = 8
	}
	if tree.minLeaf == 0 {
		tree.minLeaf = 5
	}
	n := len(rows)
	// Least squares from zero: g = −y, h = 1 make a leaf −G/(H + λ) the mean.
	g, h := make([]float64, n), make([]float64, n)
	for i, v := range yv {
		g[i], h[i] = -v, 1
	}
	rng := tensor.NewRNG(opts.Seed)
	b := &Bagging{features: len(rows[0])}
	for range opts.Trees {
		if ctx.Err() != nil {
			return b, fmt.Errorf("%s: stopped after %d trees: %w", op, len(b.Trees), ctx.Err())
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.Intn(n)
		}
		b.Trees = append(b.Trees, fitTree(rows, g, h, idx, tree))
	}
	return b, nil
}

// Predict returns the trees' mean prediction for each row of x (m, d), an
// (m) tensor (zeros without trees). It panics with a *tensor.Error when x
// is not an (m, d) matrix of the training width.
func (b *Bagging) Predict(x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows("ensemble.Bagging.Predict", x, b.features)
	out := make([]float64, len(rows))
	for i, r := range rows {
		for _, t := range b.Trees {
			out[i] += t.value(r) / float64(len(b.Trees))
		}
	}
	return tensor.FromFloat64s(out, len(out))
}
