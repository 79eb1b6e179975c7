package cluster

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// DPMeansOptions configures FitDPMeans.
type DPMeansOptions struct {
	Lambda  float64 // the cost of a cluster, in squared distance units (required, > 0)
	MaxIter int     // passes over the data (default 100)
}

// DPMeans is a fitted DP-means clustering; Objective is
// Σᵢ ‖xᵢ − μ_{labelᵢ}‖² + λ·K, which every pass lowers or keeps.
type DPMeans struct {
	Centers    *tensor.Tensor // (K, d) float64
	Labels     []int          // cluster of each training row
	K          int            // clusters found
	Objective  float64        // Σᵢ ‖xᵢ − μ_{labelᵢ}‖² + λ·K
	Iterations int            // passes made
}

// FitDPMeans clusters the rows of x (n, d) by DP-means (Kulis and Jordan
// 2012, "Revisiting k-means: new algorithms via Bayesian
// nonparametrics"): starting from one cluster at the global mean, it
// visits the rows in order and opens a new cluster at a row whose squared
// distance to every centre exceeds λ, otherwise moves the row to its
// nearest centre, updating the centres it leaves and joins at once; it
// repeats the passes until none changes an assignment. Clusters left empty
// are dropped. The result is deterministic.
//
// It returns an error for bad data (as FitKMeans) or a λ that is not
// positive and finite. When MaxIter passes all changed an assignment, the
// clustering comes back with a *tensor.NotConvergedError (Change counts
// the rows moved in the last pass). When ctx is cancelled it stops before
// the next pass and returns the clustering so far with an error wrapping
// ctx.Err().
func FitDPMeans(ctx context.Context, x *tensor.Tensor, opts DPMeansOptions) (*DPMeans, error) {
	const op = "cluster.FitDPMeans"
	rows, err := matrix(op, x)
	if err != nil {
		return nil, err
	}
	if !(opts.Lambda > 0) || math.IsInf(opts.Lambda, 0) {
		return nil, fmt.Errorf("%s: λ = %v must be positive and finite", op, opts.Lambda)
	}
	if opts.MaxIter < 0 {
		return nil, fmt.Errorf("%s: MaxIter = %d must not be negative", op, opts.MaxIter)
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 100
	}
	n, d := len(rows), len(rows[0])
	mean := make([]float64, d)
	for _, r := range rows {
		addTo(mean, r)
	}
	sums := [][]float64{clone(mean)}
	counts := []int{n}
	centers := [][]float64{make([]float64, d)}
	for f := range mean {
		centers[0][f] = mean[f] / float64(n)
	}
	labels := make([]int, n) // every row starts in cluster 0
	res := &DPMeans{}
	converged := false
	changed := 0
	for res.Iterations < opts.MaxIter && ctx.Err() == nil {
		res.Iterations++
		changed = 0
		for i, r := range rows {
			bj, bd := -1, math.Inf(1)
			for j, c := range centers {
				if counts[j] == 0 {
					continue
				}
				if dd := sqDist(r, c); dd < bd {
					bj, bd = j, dd
				}
			}
			if bd > opts.Lambda {
				sums, counts, centers = append(sums, make([]float64, d)), append(counts, 0), append(centers, clone(r))
				bj = len(centers) - 1
			}
			if old := labels[i]; bj != old {
				changed++
				move(r, old, bj, sums, counts, centers)
				labels[i] = bj
			}
		}
		if changed == 0 {
			converged = true
			break
		}
	}
	// Drop the empty clusters and renumber the rest in order.
	index := make([]int, len(centers))
	var kept [][]float64
	for j := range centers {
		index[j] = -1
		if counts[j] > 0 {
			index[j] = len(kept)
			kept = append(kept, centers[j])
		}
	}
	obj := 0.0
	for i, r := range rows {
		obj += sqDist(r, centers[labels[i]])
		labels[i] = index[labels[i]]
	}
	res.K = len(kept)
	res.Objective = obj + opts.Lambda*float64(res.K)
	res.Centers, res.Labels = fromRows(kept, d), labels
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
	case !converged:
		return res, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: float64(changed), Tol: 0}
	}
	return res, nil
}

// move takes row r out of cluster from and into cluster to, updating both
// clusters' sums, counts and centres (a centre left empty stays where it
// was and is skipped until a row joins it again).
func move(r []float64, from, to int, sums [][]float64, counts []int, centers [][]float64) {
	for f, v := range r {
		sums[from][f] -= v
		sums[to][f] += v
	}
	counts[from]--
	counts[to]++
	for _, j := range []int{from, to} {
		if counts[j] > 0 {
			for f := range centers[j] {
				centers[j][f] = sums[j][f] / float64(counts[j])
			}
		}
	}
}
