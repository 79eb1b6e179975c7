package cluster

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// KMeansOptions configures FitKMeans. Zero fields take scikit-learn's
// defaults.
type KMeansOptions struct {
	K        int     // number of clusters (required, 1 ≤ K ≤ n)
	Restarts int     // runs from different k-means++ seeds, the best kept (default 10)
	MaxIter  int     // Lloyd iterations per run (default 300)
	Tol      float64 // stop when the centres move less than Tol·(mean feature variance) in total squared distance (default 1e-4)
	Seed     uint64  // seed of the k-means++ draws (default 0)
	// Init, when set, holds the initial centres (K, d): one Lloyd run
	// from them replaces the k-means++ restarts.
	Init *tensor.Tensor
}

// KMeans is a fitted k-means clustering: the centres, each training row's
// cluster, and the inertia Σᵢ ‖xᵢ − c_{labelᵢ}‖² that k-means minimises.
type KMeans struct {
	Centers    *tensor.Tensor // (K, d) float64
	Labels     []int          // cluster of each training row
	Inertia    float64        // Σᵢ ‖xᵢ − c_{labelᵢ}‖² over the training rows
	Iterations int            // Lloyd iterations of the kept run
}

// FitKMeans clusters the rows of x (n, d) into opts.K groups by Lloyd's
// algorithm (Lloyd 1982, "Least squares quantization in PCM": assign each
// row to its nearest centre, move each centre to the mean of its rows)
// from k-means++ seeds (Arthur and Vassilvitskii 2007, "k-means++: the
// advantages of careful seeding"), keeping the run with the lowest inertia
// of opts.Restarts. A cluster that loses all its rows is moved to the row
// farthest from its centre, as scikit-learn does.
//
// It returns an error for a non-matrix x, zero columns, K outside
// [1, n], or values that are not finite. When the kept run uses MaxIter
// iterations without meeting Tol, the clustering comes back with a
// *tensor.NotConvergedError. When ctx is cancelled, the current run stops
// before its next iteration and the best clustering so far (at worst the
// first run's seeds and their assignment) comes back with an error
// wrapping ctx.Err().
func FitKMeans(ctx context.Context, x *tensor.Tensor, opts KMeansOptions) (*KMeans, error) {
	const op = "cluster.FitKMeans"
	rows, err := matrix(op, x)
	if err != nil {
		return nil, err
	}
	n, d := len(rows), len(rows[0])
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("%s: K = %d clusters for %d rows", op, opts.K, n)
	}
	if opts.Restarts < 0 || opts.MaxIter < 0 || opts.Tol < 0 || math.IsNaN(opts.Tol) {
		return nil, fmt.Errorf("%s: Restarts = %d, MaxIter = %d and Tol = %v must not be negative", op, opts.Restarts, opts.MaxIter, opts.Tol)
	}
	if opts.Restarts == 0 {
		opts.Restarts = 10
	}
	if opts.MaxIter == 0 {
		opts.MaxIter = 300
	}
	if opts.Tol == 0 {
		opts.Tol = 1e-4
	}
	tol := opts.Tol * meanVariance(rows)
	rng := tensor.NewRNG(opts.Seed)
	var init [][]float64
	if opts.Init != nil {
		if sh := opts.Init.Shape(); len(sh) != 2 || sh[0] != opts.K || sh[1] != d {
			return nil, fmt.Errorf("%s: Init has shape %v, want (%d, %d)", op, sh, opts.K, d)
		}
		if init, err = matrix(op+" (Init)", opts.Init); err != nil {
			return nil, err
		}
		opts.Restarts = 1
	}
	var best *KMeans
	var bestRun lloydRun
	for range opts.Restarts {
		centers := init
		if centers == nil {
			centers = plusPlus(rows, opts.K, rng)
		}
		run := lloyd(ctx, rows, centers, opts.MaxIter, tol)
		if best == nil || run.inertia < best.Inertia {
			best = &KMeans{Centers: fromRows(centers, d), Labels: run.labels, Inertia: run.inertia, Iterations: run.iters}
			bestRun = run
		}
		if ctx.Err() != nil {
			return best, fmt.Errorf("%s: stopped: %w", op, ctx.Err())
		}
	}
	if !bestRun.converged {
		return best, &tensor.NotConvergedError{Op: op, Iterations: bestRun.iters, Change: bestRun.shift, Tol: tol}
	}
	return best, nil
}

// Predict returns the nearest centre of each row of x (m, d). It panics
// with a *tensor.Error when x is not an (m, d) matrix.
func (m *KMeans) Predict(x *tensor.Tensor) []int {
	labels, _ := nearest("cluster.KMeans.Predict", x, m.Centers)
	return labels
}

// Transform returns the (m, K) squared distances from each row of x to
// each centre. It panics with a *tensor.Error when x is not an (m, d)
// matrix.
func (m *KMeans) Transform(x *tensor.Tensor) *tensor.Tensor {
	checkRows("cluster.KMeans.Transform", x, m.Centers)
	return tensor.SqDist(x.Cast(tensor.Float64), m.Centers)
}

// plusPlus draws k seeds: the first uniformly, each next one with
// probability proportional to its squared distance to the nearest seed so
// far.
func plusPlus(rows [][]float64, k int, rng *tensor.RNG) [][]float64 {
	n := len(rows)
	centers := [][]float64{clone(rows[rng.Intn(n)])}
	d2 := make([]float64, n)
	for i, r := range rows {
		d2[i] = sqDist(r, centers[0])
	}
	for len(centers) < k {
		total := 0.0
		for _, v := range d2 {
			total += v
		}
		pick := n - 1
		if total > 0 {
			u := rng.Float64() * total
			for i, v := range d2 {
				if u < v {
					pick = i
					break
				}
				u -= v
			}
		} else {
			pick = rng.Intn(n) // every row sits on a seed already
		}
		c := clone(rows[pick])
		centers = append(centers, c)
		for i, r := range rows {
			d2[i] = min(d2[i], sqDist(r, c))
		}
	}
	return centers
}

// lloydRun is what one run of Lloyd's algorithm reached.
type lloydRun struct {
	labels    []int
	inertia   float64
	iters     int
	shift     float64 // the centres' total squared movement in the last iteration
	converged bool    // shift ≤ tol
}

// lloyd runs Lloyd's iterations from centers (updated in place) until the
// centres' total squared movement is at most tol, maxIter is reached or
// ctx is cancelled; it returns the final assignment, its inertia and the
// iterations run.
func lloyd(ctx context.Context, rows, centers [][]float64, maxIter int, tol float64) lloydRun {
	k, d := len(centers), len(rows[0])
	labels := make([]int, len(rows))
	sums := make([][]float64, k)
	for j := range sums {
		sums[j] = make([]float64, d)
	}
	counts := make([]int, k)
	run := lloydRun{shift: math.Inf(1)}
	for run.iters < maxIter && ctx.Err() == nil {
		run.iters++
		assign(rows, centers, labels)
		for j := range sums {
			clear(sums[j])
			counts[j] = 0
		}
		for i, r := range rows {
			counts[labels[i]]++
			addTo(sums[labels[i]], r)
		}
		relocateEmpty(rows, centers, labels, sums, counts)
		shift := 0.0
		for j := range centers {
			if counts[j] == 0 {
				continue // fewer distinct rows than clusters: the centre stays
			}
			for f := range centers[j] {
				m := sums[j][f] / float64(counts[j])
				shift += (m - centers[j][f]) * (m - centers[j][f])
				centers[j][f] = m
			}
		}
		run.shift = shift
		if shift <= tol {
			run.converged = true
			break
		}
	}
	run.labels = labels
	run.inertia = assign(rows, centers, labels)
	return run
}

// assign sets each row's label to its nearest centre (the lowest index on
// ties) and returns the inertia.
func assign(rows, centers [][]float64, labels []int) float64 {
	inertia := 0.0
	for i, r := range rows {
		bj, bd := 0, math.Inf(1)
		for j, c := range centers {
			if dd := sqDist(r, c); dd < bd {
				bj, bd = j, dd
			}
		}
		labels[i] = bj
		inertia += bd
	}
	return inertia
}

// relocateEmpty gives each empty cluster the row farthest from its own
// centre, taking that row out of its cluster's sums.
func relocateEmpty(rows, centers [][]float64, labels []int, sums [][]float64, counts []int) {
	for j := range counts {
		if counts[j] > 0 {
			continue
		}
		far, fd := -1, -1.0
		for i, r := range rows {
			if counts[labels[i]] > 1 {
				if dd := sqDist(r, centers[labels[i]]); dd > fd {
					far, fd = i, dd
				}
			}
		}
		if far < 0 {
			continue // fewer distinct rows than clusters
		}
		old := labels[far]
		for f, v := range rows[far] {
			sums[old][f] -= v
		}
		counts[old]--
		copy(sums[j], rows[far])
		counts[j] = 1
		labels[far] = j
	}
}
