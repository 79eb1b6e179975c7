package cluster

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// MiniBatchKMeansOptions configures FitMiniBatchKMeans. Zero fields take
// the defaults given.
type MiniBatchKMeansOptions struct {
	K         int    // number of clusters (required, 1 ≤ K ≤ n)
	BatchSize int    // rows per step (default 1024, at most n)
	Steps     int    // mini-batch steps (default 100)
	Seed      uint64 // seed of the seeding and the batches (default 0)
}

// FitMiniBatchKMeans clusters the rows of x (n, d) with mini-batch
// k-means (Sculley 2010, "Web-scale k-means clustering"): k-means++ seeds
// drawn from a sample of at most 3·K + BatchSize rows, then per step a
// random batch is assigned to its nearest centres and each centre moves
// towards its rows with the step size 1/(rows it has seen). Each step
// costs O(BatchSize·K·d) whatever n is. Labels and Inertia in the result
// are those of the whole data set for the final centres; Iterations is the
// number of steps taken.
//
// It returns an error for bad data (as FitKMeans) or negative options.
// Steps is a budget, not a limit: the method has no convergence test, so
// it takes every step and never reports non-convergence.
// When ctx is cancelled it stops before the next step and returns the
// clustering of the centres so far with an error wrapping ctx.Err().
func FitMiniBatchKMeans(ctx context.Context, x *tensor.Tensor, opts MiniBatchKMeansOptions) (*KMeans, error) {
	const op = "cluster.FitMiniBatchKMeans"
	rows, err := matrix(op, x)
	if err != nil {
		return nil, err
	}
	n, d := len(rows), len(rows[0])
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("%s: K = %d clusters for %d rows", op, opts.K, n)
	}
	if opts.BatchSize < 0 || opts.Steps < 0 {
		return nil, fmt.Errorf("%s: BatchSize = %d and Steps = %d must not be negative", op, opts.BatchSize, opts.Steps)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 1024
	}
	opts.BatchSize = min(opts.BatchSize, n)
	if opts.Steps == 0 {
		opts.Steps = 100
	}
	rng := tensor.NewRNG(opts.Seed)
	sample := rows
	if m := 3*opts.K + opts.BatchSize; m < n {
		perm := rng.Perm(n)[:m]
		sample = make([][]float64, m)
		for i, p := range perm {
			sample[i] = rows[p]
		}
	}
	centers := plusPlus(sample, opts.K, rng)
	seen := make([]int, opts.K)
	batch := make([]int, opts.BatchSize)
	labels := make([]int, opts.BatchSize)
	picked := make([][]float64, opts.BatchSize)
	steps := 0
	for ; steps < opts.Steps && ctx.Err() == nil; steps++ {
		for i := range batch {
			batch[i] = rng.Intn(n)
			picked[i] = rows[batch[i]]
		}
		assign(picked, centers, labels)
		for i, r := range picked {
			j := labels[i]
			seen[j]++
			eta := 1 / float64(seen[j])
			for f, v := range r {
				centers[j][f] += eta * (v - centers[j][f])
			}
		}
	}
	all := make([]int, n)
	inertia := assign(rows, centers, all)
	km := &KMeans{Centers: fromRows(centers, d), Labels: all, Inertia: inertia, Iterations: steps}
	if ctx.Err() != nil {
		return km, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	}
	return km, nil
}
