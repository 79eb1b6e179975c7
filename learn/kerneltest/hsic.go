package kerneltest

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// HSIC returns the Hilbert-Schmidt independence criterion between paired
// samples x (n, d) and y (n, e) under kernels kx and ky, as a scalar node:
//
//	biased:   tr(K H L H)/n², H = I − 11ᵀ/n (Gretton et al. 2005)
//	unbiased: [tr(K̃L̃) + 1ᵀK̃1·1ᵀL̃1/((n−1)(n−2)) − 2·1ᵀK̃L̃1/(n−2)]/(n(n−3)),
//	          K̃, L̃ with zero diagonals (Song et al. 2012)
//
// It is differentiable in the samples and the kernels' hyperparameters.
// The unbiased form needs n ≥ 4.
func HSIC(kx, ky kernel.Kernel, x, y *graph.Node, est Estimator) *graph.Node {
	n := x.Shape()[0]
	if y.Shape()[0] != n {
		tensor.Fail("kerneltest.HSIC", "paired samples need equal rows, got %s", graph.Describe(x, y))
	}
	k, l := kx.K(x, x), ky.K(y, y)
	fn := float64(n)
	if est == Biased {
		return graph.MulScalar(graph.Sum(graph.Mul(centre(k), l), nil, false), 1/(fn*fn))
	}
	if n < 4 {
		tensor.Fail("kerneltest.HSIC", "the unbiased estimator needs four pairs, got %d", n)
	}
	eye := x.Graph().Const(tensor.Eye(k.DType(), n))
	kt := graph.Sub(k, graph.Mul(k, eye))
	lt := graph.Sub(l, graph.Mul(l, eye))
	trace := graph.Sum(graph.Mul(kt, lt), nil, false)
	sums := graph.MulScalar(graph.Mul(graph.Sum(kt, nil, false), graph.Sum(lt, nil, false)), 1/((fn-1)*(fn-2)))
	k1 := graph.Sum(kt, []int{1}, false)
	l1 := graph.Sum(lt, []int{1}, false)
	cross := graph.MulScalar(graph.Sum(graph.Mul(k1, l1), nil, false), 2/(fn-2))
	return graph.MulScalar(graph.Sub(graph.Add(trace, sums), cross), 1/(fn*(fn-3)))
}

// centre returns HKH: K with its row, column and overall means removed.
func centre(k *graph.Node) *graph.Node {
	rows := graph.Mean(k, []int{1}, true)
	cols := graph.Mean(k, []int{0}, true)
	all := graph.Mean(k, nil, true)
	return graph.Add(graph.Sub(graph.Sub(k, rows), cols), all)
}

// Independence tests whether the paired samples x (n, d) and y (n, e) are
// independent: the HSIC statistic, and its distribution when y's rows are
// shuffled against x's (Gretton et al. 2008, A kernel statistical test of
// independence). Both kernel matrices are computed once. Errors and ctx
// behave as in TwoSample.
func Independence(ctx context.Context, x, y *tensor.Tensor, opts IndependenceOptions) (Result, error) {
	const op = "kerneltest.Independence"
	if err := checkPair(op, x, y, true); err != nil {
		return Result{}, err
	}
	if opts.Permutations < 0 {
		return Result{}, fmt.Errorf("%s: %d permutations", op, opts.Permutations)
	}
	kx, ky := opts.KernelX, opts.KernelY
	if kx == nil {
		kx = kernel.NewRBF(MedianHeuristic(x))
	}
	if ky == nil {
		ky = kernel.NewRBF(MedianHeuristic(y))
	}
	n := x.Shape()[0]
	if opts.Estimator == Unbiased && n < 4 {
		return Result{}, fmt.Errorf("%s: the unbiased estimator needs four pairs, got %d", op, n)
	}
	kv, err := kernelMatrix(kx, x.Cast(tensor.Float64))
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	lv, err := kernelMatrix(ky, y.Cast(tensor.Float64))
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	stat := func(p []int) float64 {
		g := graph.New()
		lp := make([]float64, n*n)
		for i := range n {
			for j := range n {
				lp[i*n+j] = lv[p[i]*n+p[j]]
			}
		}
		return hsicValue(g, kv, lp, n, opts.Estimator)
	}
	return permutationTest(ctx, op, stat, idx, opts.Permutations, opts.Seed)
}

// hsicValue evaluates HSIC's formula on kernel matrices given as values,
// through the same graph expressions as HSIC.
func hsicValue(g *graph.Graph, kv, lv []float64, n int, est Estimator) float64 {
	k := g.Const(tensor.FromFloat64s(kv, n, n))
	l := g.Const(tensor.FromFloat64s(lv, n, n))
	return HSIC(precomputed{k}, precomputed{l}, k, l, est).Item()
}

// precomputed is a kernel whose matrix is already known: K returns it.
type precomputed struct{ m *graph.Node }

func (p precomputed) K(_, _ *graph.Node) *graph.Node    { return p.m }
func (p precomputed) Diag(_ *graph.Node) *graph.Node    { return graph.Diagonal(p.m) }
func (p precomputed) Hyperparams() []*kernel.Hyperparam { return nil }
