package ensemble

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// AdaBoost is a weighted vote of classification trees, AdaBoost.M1 in its
// multiclass form SAMME (Zhu, Zou, Rosset and Hastie 2009, "Multi-class
// AdaBoost"; Freund and Schapire 1997, "A decision-theoretic
// generalization of on-line learning and an application to boosting", for
// two classes): each round fits a tree to a sample drawn by the current
// weights, and its vote α = log((1 − ε)/ε) + log(K − 1) grows as its
// weighted error ε shrinks. For two classes this is forward stagewise
// minimisation of the exponential loss Σ exp(−yᵢF(xᵢ)).
type AdaBoost struct {
	Trees   []*ClassTree // one per round kept
	Alphas  []float64    // each tree's vote
	Classes int          // number of classes
	// TrainError is the ensemble's training error after each round.
	TrainError []float64
	features   int
}

// AdaBoostOptions configures FitAdaBoost. Zero fields take the defaults
// given.
type AdaBoostOptions struct {
	Rounds    int       // most rounds (default 50, as scikit-learn's)
	Classes   int       // number of classes (default: the largest label + 1)
	Criterion Criterion // impurity of the trees: Gini (default) or Entropy
	MaxDepth  int       // depth of each tree (default 1: stumps)
	MinLeaf   int       // fewest examples in a leaf (default 1)
	Seed      uint64    // seed of the weighted resampling (default 0)
}

// FitAdaBoost runs up to opts.Rounds rounds of SAMME on the rows of x
// (n, d) with labels in [0, Classes), resampling by weight each round. It
// stops early when a tree is perfect on the weighted sample (ε = 0) or no
// better than chance (ε ≥ 1 − 1/K); when the first tree is already no
// better (the features cannot tell the classes apart), the ensemble is
// that tree alone with a vote of 1. It returns an error naming the fit for
// bad data (as FitClassTree) or negative options. When ctx is cancelled it stops before the next
// round and returns the vote so far with an error wrapping ctx.Err().
// Its Rounds is a budget it always spends, with no convergence test: it never
// returns a *tensor.NotConvergedError.
func FitAdaBoost(ctx context.Context, x *tensor.Tensor, labels []int, opts AdaBoostOptions) (*AdaBoost, error) {
	const op = "ensemble.FitAdaBoost"
	if opts.Rounds < 0 || opts.MaxDepth < 0 || opts.MinLeaf < 0 {
		return nil, fmt.Errorf("%s: Rounds = %d, MaxDepth = %d and MinLeaf = %d must not be negative", op, opts.Rounds, opts.MaxDepth, opts.MinLeaf)
	}
	rows, classes, err := classRows(op, x, labels, opts.Classes)
	if err != nil {
		return nil, err
	}
	if opts.Rounds == 0 {
		opts.Rounds = 50
	}
	shape := classTreeOptions{criterion: opts.Criterion, maxDepth: opts.MaxDepth, minLeaf: opts.MinLeaf}
	if shape.maxDepth == 0 {
		shape.maxDepth = 1
	}
	n := len(rows)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	rng := tensor.NewRNG(opts.Seed)
	a := &AdaBoost{Classes: classes, features: len(rows[0])}
	votes := tensor.Zeros(tensor.Float64, n, classes)
	vv := votes.Float64s()
	cum := make([]float64, n)
	for range opts.Rounds {
		if ctx.Err() != nil {
			return a, fmt.Errorf("%s: stopped after %d rounds: %w", op, len(a.Trees), ctx.Err())
		}
		total := 0.0
		for i, v := range w {
			total += v
			cum[i] = total
		}
		idx := make([]int, n)
		for k := range idx {
			idx[k] = min(sort.SearchFloat64s(cum, rng.Float64()*total), n-1)
		}
		t := growClassTree(rows, labels, classes, idx, shape, rng)
		eps := 0.0
		wrong := make([]bool, n)
		for i, r := range rows {
			if t.class(r) != labels[i] {
				wrong[i] = true
				eps += w[i]
			}
		}
		eps /= total
		if eps >= 1-1/float64(classes) {
			if len(a.Trees) == 0 {
				// The features cannot tell the classes apart (identical
				// rows, say): the vote is this tree's alone.
				a.Trees, a.Alphas = append(a.Trees, t), append(a.Alphas, 1)
				a.TrainError = append(a.TrainError, eps)
			}
			break
		}
		alpha := math.Log(float64(classes) - 1)
		if eps > 0 {
			alpha += math.Log((1 - eps) / eps)
		} else {
			alpha += 10 // a perfect tree: a large, finite vote
		}
		a.Trees, a.Alphas = append(a.Trees, t), append(a.Alphas, alpha)
		for i, r := range rows {
			vv[i*classes+t.class(r)] += alpha
			if wrong[i] {
				w[i] *= math.Exp(alpha)
			}
		}
		errs := 0
		for i, c := range tensor.ArgMax(votes, 1) {
			if c != labels[i] {
				errs++
			}
		}
		a.TrainError = append(a.TrainError, float64(errs)/float64(n))
		if eps == 0 {
			break
		}
	}
	return a, nil
}

// Decision returns each class's total vote Σₖ αₖ[treeₖ(x) = c] for the
// rows of x (m, d), an (m, Classes) tensor. It panics with a *tensor.Error
// when x is not an (m, d) matrix of the training width.
func (a *AdaBoost) Decision(x *tensor.Tensor) *tensor.Tensor {
	return a.votes("ensemble.AdaBoost.Decision", x)
}

// Predict returns the class with the largest total vote for each row of
// x. It panics as Decision does.
func (a *AdaBoost) Predict(x *tensor.Tensor) []int {
	return tensor.ArgMax(a.votes("ensemble.AdaBoost.Predict", x), 1)
}

func (a *AdaBoost) votes(op string, x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows(op, x, a.features)
	out := make([]float64, len(rows)*a.Classes)
	for i, r := range rows {
		for k, t := range a.Trees {
			out[i*a.Classes+t.class(r)] += a.Alphas[k]
		}
	}
	return tensor.FromFloat64s(out, len(rows), a.Classes)
}
