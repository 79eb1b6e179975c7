// Package kerneltest holds kernel two-sample and independence tests: the
// maximum mean discrepancy MMD² between two samples (biased V-statistic,
// unbiased U-statistic and the linear-time statistic; Gretton, Borgwardt,
// Rasch, Schölkopf and Smola 2012, A kernel two-sample test) and the
// Hilbert-Schmidt independence criterion HSIC (biased and unbiased;
// Gretton et al. 2008, A kernel statistical test of independence), each
// with a permutation test, on the kernels of probabilistic/kernel. The
// statistics are graphs, so a kernel's hyperparameters (or a feature
// network feeding the samples) can be trained by gradient on them.
//
//	res, err := kerneltest.TwoSample(ctx, x, y, kerneltest.TwoSampleOptions{Permutations: 500, Seed: 1})
//	fmt.Println(res.Statistic, res.PValue)
package kerneltest

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Estimator chooses between the biased and unbiased statistics.
type Estimator int

const (
	// Biased is the V-statistic: every pair, diagonals included. It is
	// never negative.
	Biased Estimator = iota
	// Unbiased is the U-statistic: distinct pairs only. Its mean under the
	// null hypothesis is 0, so it can be negative.
	Unbiased
	// Linear is the linear-time statistic of Gretton et al. (2012, §6):
	// the mean over disjoint pairs i of
	// h = k(x₂ᵢ, x₂ᵢ₊₁) + k(y₂ᵢ, y₂ᵢ₊₁) − k(x₂ᵢ, y₂ᵢ₊₁) − k(x₂ᵢ₊₁, y₂ᵢ),
	// for samples of equal size (an odd last row is dropped). It costs
	// O(n) kernel evaluations instead of O(n²), is unbiased, and its null
	// distribution is asymptotically normal, which TwoSample uses instead
	// of permutations.
	Linear
)

// MMD2 returns the squared maximum mean discrepancy between the samples
// x (m, d) and y (n, d) under kernel k, as a scalar node of their graph:
//
//	biased:   mean(Kxx) + mean(Kyy) − 2·mean(Kxy)
//	unbiased: Σ_{i≠j}Kxx/(m(m−1)) + Σ_{i≠j}Kyy/(n(n−1)) − 2·mean(Kxy)
//
// and for Linear the mean of h over disjoint pairs (see Linear). It is
// differentiable in x, y and the kernel's hyperparameters. The unbiased
// form needs m, n ≥ 2 and the linear one m = n ≥ 2. It panics with a
// *tensor.Error otherwise.
func MMD2(k kernel.Kernel, x, y *graph.Node, est Estimator) *graph.Node {
	m, n := x.Shape()[0], y.Shape()[0]
	if est == Linear {
		return graph.Mean(linearTerms(k, x, y), nil, false)
	}
	kxx, kyy, kxy := k.K(x, x), k.K(y, y), k.K(x, y)
	cross := graph.MulScalar(graph.Mean(kxy, nil, false), 2)
	if est == Biased {
		return graph.Sub(graph.Add(graph.Mean(kxx, nil, false), graph.Mean(kyy, nil, false)), cross)
	}
	if m < 2 || n < 2 {
		tensor.Fail("kerneltest.MMD2", "the unbiased estimator needs two points per sample, got %d and %d", m, n)
	}
	within := func(kk *graph.Node, n int) *graph.Node {
		off := graph.Sub(graph.Sum(kk, nil, false), graph.Sum(graph.Diagonal(kk), nil, false))
		return graph.MulScalar(off, 1/float64(n*(n-1)))
	}
	return graph.Sub(graph.Add(within(kxx, m), within(kyy, n)), cross)
}

// TwoSampleOptions configures TwoSample. The zero value means the
// defaults stated on each field.
type TwoSampleOptions struct {
	// Kernel is the kernel; nil means an RBF whose lengthscale is the
	// median heuristic of the pooled samples (MedianHeuristic).
	Kernel kernel.Kernel
	// Estimator is the MMD² estimator (Biased by default).
	Estimator Estimator
	// Permutations is the number of resamples under the null; zero means
	// 1000.
	Permutations int
	// Seed seeds the permutations.
	Seed uint64
}

// IndependenceOptions configures Independence. The zero value means the
// defaults stated on each field.
type IndependenceOptions struct {
	// KernelX and KernelY are the kernels on x and on y; nil means an RBF
	// whose lengthscale is the median heuristic of that sample.
	KernelX, KernelY kernel.Kernel
	// Estimator is the HSIC estimator (Biased by default).
	Estimator Estimator
	// Permutations is the number of resamples under the null; zero means
	// 1000.
	Permutations int
	// Seed seeds the permutations.
	Seed uint64
}

// Result is a test's outcome: the statistic on the data and the
// permutation p-value (1 + #{permuted ≥ observed})/(1 + permutations),
// which is never 0.
type Result struct {
	Statistic float64
	PValue    float64
	Null      []float64 // the statistic under each permutation
}

// TwoSample tests whether x (m, d) and y (n, d) come from the same
// distribution: the MMD² statistic, and its distribution when the pooled
// rows are reassigned at random. The pooled kernel matrix is computed once
// and every permutation only re-sums it. With the Linear estimator no
// kernel matrix is formed: the p-value comes from the statistic's normal
// null distribution and Null is empty (Gretton et al. 2012, A kernel
// two-sample test).
//
// Bad data (NaN or ±Inf, column counts that differ, too few rows for the
// estimator) or a negative Permutations return an error. ctx is checked
// at every permutation; when it is cancelled TwoSample returns promptly
// with the permutations done so far (the p-value over them) and the error
// wrapping ctx.Err().
func TwoSample(ctx context.Context, x, y *tensor.Tensor, opts TwoSampleOptions) (Result, error) {
	const op = "kerneltest.TwoSample"
	if err := checkPair(op, x, y, false); err != nil {
		return Result{}, err
	}
	if opts.Permutations < 0 {
		return Result{}, fmt.Errorf("%s: %d permutations", op, opts.Permutations)
	}
	k := opts.Kernel
	if k == nil {
		k = kernel.NewRBF(MedianHeuristic(x, y))
	}
	m, n := x.Shape()[0], y.Shape()[0]
	if opts.Estimator == Linear {
		if m != n || m < 2 {
			return Result{}, fmt.Errorf("%s: the linear estimator needs two samples of equal size ≥ 2, got %d and %d", op, m, n)
		}
		res, err := linearTest(k, x, y)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", op, err)
		}
		return res, nil
	}
	if opts.Estimator == Unbiased && (m < 2 || n < 2) {
		return Result{}, fmt.Errorf("%s: the unbiased estimator needs two points per sample, got %d and %d", op, m, n)
	}
	kz, err := kernelMatrix(k, tensor.Concat(0, x.Cast(tensor.Float64), y.Cast(tensor.Float64)))
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	idx := make([]int, m+n)
	for i := range idx {
		idx[i] = i
	}
	stat := func(idx []int) float64 { return mmdFromPooled(kz, idx, m, opts.Estimator) }
	return permutationTest(ctx, op, stat, idx, opts.Permutations, opts.Seed)
}

// pairBlock is how many pairs one kernel call evaluates in the linear
// statistic: the call computes a pairBlock² matrix of which only the
// diagonal is used, so the work stays linear in n.
const pairBlock = 64

// linearTerms returns the h values of the linear-time statistic, one per
// disjoint pair of rows, as a node of shape (⌊n/2⌋).
func linearTerms(k kernel.Kernel, x, y *graph.Node) *graph.Node {
	m, n := x.Shape()[0], y.Shape()[0]
	if m != n || m < 2 {
		tensor.Fail("kerneltest.MMD2", "the linear estimator needs two samples of equal size ≥ 2, got %d and %d", m, n)
	}
	half := m / 2
	even := func(z *graph.Node) *graph.Node { return graph.Slice(z, 0, 0, 2*half, 2) }
	odd := func(z *graph.Node) *graph.Node { return graph.Slice(z, 0, 1, 2*half, 2) }
	x0, x1, y0, y1 := even(x), odd(x), even(y), odd(y)
	// paired is k(aᵢ, bᵢ) for every i, a block of pairs per kernel call.
	paired := func(a, b *graph.Node) *graph.Node {
		var parts []*graph.Node
		for lo := 0; lo < half; lo += pairBlock {
			hi := min(lo+pairBlock, half)
			parts = append(parts, graph.Diagonal(k.K(graph.Slice(a, 0, lo, hi, 1), graph.Slice(b, 0, lo, hi, 1))))
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return graph.Concat(0, parts...)
	}
	return graph.Sub(graph.Add(paired(x0, x1), paired(y0, y1)), graph.Add(paired(x0, y1), paired(x1, y0)))
}

// linearTest is the linear-time test: the statistic is the mean of the h
// values and the p-value is P(N(0, σ̂²/p) ≥ statistic) with σ̂² their
// sample variance over the p pairs (Gretton et al. 2012, Corollary 16).
func linearTest(k kernel.Kernel, x, y *tensor.Tensor) (res Result, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	h := linearTerms(k, g.Const(x.Cast(tensor.Float64)), g.Const(y.Cast(tensor.Float64))).Value().Values()
	p := float64(len(h))
	mean, ss := 0.0, 0.0
	for _, v := range h {
		mean += v
	}
	mean /= p
	for _, v := range h {
		ss += (v - mean) * (v - mean)
	}
	res.Statistic = mean
	switch sd := math.Sqrt(ss / max(p-1, 1) / p); {
	case sd > 0:
		res.PValue = 0.5 * math.Erfc(mean/sd/math.Sqrt2)
	case mean > 0: // every h equal and positive: certain rejection
		res.PValue = 0
	default:
		res.PValue = 1
	}
	return res, nil
}

// mmdFromPooled is MMD² with the first m entries of idx as x and the rest
// as y, read off the pooled kernel matrix kz.
func mmdFromPooled(kz []float64, idx []int, m int, est Estimator) float64 {
	nz := len(idx)
	n := nz - m
	var sxx, syy, sxy, dx, dy float64
	for a := range nz {
		row := kz[idx[a]*nz : (idx[a]+1)*nz]
		for b := range nz {
			v := row[idx[b]]
			switch {
			case a < m && b < m:
				sxx += v
				if a == b {
					dx += v
				}
			case a >= m && b >= m:
				syy += v
				if a == b {
					dy += v
				}
			case a < m:
				sxy += v
			}
		}
	}
	fm, fn := float64(m), float64(n)
	if est == Biased {
		return sxx/(fm*fm) + syy/(fn*fn) - 2*sxy/(fm*fn)
	}
	return (sxx-dx)/(fm*(fm-1)) + (syy-dy)/(fn*(fn-1)) - 2*sxy/(fm*fn)
}

// permutationTest evaluates stat on idx and on permutations shuffles of
// it (zero: 1000), stopping early with the wrapped error when ctx is
// cancelled.
func permutationTest(ctx context.Context, op string, stat func([]int) float64, idx []int, permutations int, seed uint64) (Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if permutations == 0 {
		permutations = 1000
	}
	res := Result{Statistic: stat(idx)}
	rng := tensor.NewRNG(seed)
	perm := slices.Clone(idx)
	above := 0
	for p := range permutations {
		if err := ctx.Err(); err != nil {
			res.PValue = float64(1+above) / float64(1+p)
			return res, fmt.Errorf("%s: cancelled after %d of %d permutations: %w", op, p, permutations, err)
		}
		for i := len(perm) - 1; i > 0; i-- {
			j := rng.Intn(i + 1)
			perm[i], perm[j] = perm[j], perm[i]
		}
		v := stat(perm)
		res.Null = append(res.Null, v)
		if v >= res.Statistic {
			above++
		}
	}
	res.PValue = float64(1+above) / float64(1+permutations)
	return res, nil
}

// MedianHeuristic returns the median Euclidean distance between distinct
// rows of the pooled samples: the usual RBF lengthscale for kernel tests.
// Zero distances (repeated rows) are skipped; it returns 1 if all are zero.
func MedianHeuristic(xs ...*tensor.Tensor) float64 {
	var rows []*tensor.Tensor
	for _, x := range xs {
		rows = append(rows, x.Cast(tensor.Float64))
	}
	z := tensor.Concat(0, rows...)
	d := tensor.SqDist(z, z).Values()
	n := z.Shape()[0]
	var dist []float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			if v := d[i*n+j]; v > 0 {
				dist = append(dist, math.Sqrt(v))
			}
		}
	}
	if len(dist) == 0 {
		return 1
	}
	slices.Sort(dist)
	if len(dist)%2 == 1 {
		return dist[len(dist)/2]
	}
	return (dist[len(dist)/2-1] + dist[len(dist)/2]) / 2
}

// kernelMatrix evaluates K(z, z) through the kernel's graph.
func kernelMatrix(k kernel.Kernel, z *tensor.Tensor) (vals []float64, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	zn := g.Const(z)
	return k.K(zn, zn).Value().Contiguous().Values(), nil
}

// checkPair validates two samples x and y (validate.NamedMatrix) and, for
// a two-sample test, that they have the same number of columns, or for an
// independence test, the same number of rows.
func checkPair(op string, x, y *tensor.Tensor, sameRows bool) error {
	_, m, dx, err := validate.NamedMatrix(op, "x", x)
	if err != nil {
		return err
	}
	_, n, dy, err := validate.NamedMatrix(op, "y", y)
	if err != nil {
		return err
	}
	if sameRows && m != n {
		return fmt.Errorf("%s: paired samples need equal rows, got %d and %d", op, m, n)
	}
	if !sameRows && dx != dy {
		return fmt.Errorf("%s: samples have %d and %d columns", op, dx, dy)
	}
	return nil
}
