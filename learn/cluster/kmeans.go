package cluster

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// KMeansOptions configures KMeans. Zero fields take scikit-learn's
// defaults.
type KMeansOptions struct {
	K        int     // number of clusters (required, ≥ 1)
	Restarts int     // runs from different k-means++ seeds, the best kept (default 10)
	MaxIter  int     // Lloyd iterations per run (default 300)
	Tol      float64 // stop when the centres move less than Tol·(mean feature variance) in total squared distance (default 1e-4)
	Seed     uint64  // seed of the k-means++ draws
	// Init, when set, holds the initial centres (K, d): one Lloyd run
	// from them replaces the k-means++ restarts.
	Init *tensor.Tensor
}

// KMeansResult is a clustering: the centres, each row's cluster, and the
// inertia Σᵢ ‖xᵢ − c_{labelᵢ}‖² that k-means minimises.
type KMeansResult struct {
	Centers    *tensor.Tensor // (K, d) float64
	Labels     []int          // cluster of each training row
	Inertia    float64
	Iterations int // Lloyd iterations of the kept run
}

// KMeans clusters the rows of x (n, d) into opts.K groups by Lloyd's
// algorithm (assign each row to its nearest centre, move each centre to
// the mean of its rows) from k-means++ seeds (Arthur and Vassilvitskii
// 2007), keeping the run with the lowest inertia of opts.Restarts. A
// cluster that loses all its rows is moved to the row farthest from its
// centre, as scikit-learn does. It returns an error for a non-matrix x,
// fewer rows than clusters, or values that are not finite.
func KMeans(x *tensor.Tensor, opts KMeansOptions) (*KMeansResult, error) {
	rows, err := matrix("cluster.KMeans", x)
	if err != nil {
		return nil, err
	}
	n, d := len(rows), len(rows[0])
	if opts.K < 1 || opts.K > n {
		return nil, fmt.Errorf("cluster.KMeans: K = %d clusters for %d rows", opts.K, n)
	}
	if opts.Restarts <= 0 {
		opts.Restarts = 10
	}
	if opts.MaxIter <= 0 {
		opts.MaxIter = 300
	}
	if opts.Tol <= 0 {
		opts.Tol = 1e-4
	}
	tol := opts.Tol * meanVariance(rows)
	rng := tensor.NewRNG(opts.Seed)
	var init [][]float64
	if opts.Init != nil {
		if sh := opts.Init.Shape(); len(sh) != 2 || sh[0] != opts.K || sh[1] != d {
			return nil, fmt.Errorf("cluster.KMeans: Init has shape %v, want (%d, %d)", sh, opts.K, d)
		}
		if init, err = matrix("cluster.KMeans (Init)", opts.Init); err != nil {
			return nil, err
		}
		opts.Restarts = 1
	}
	var best *KMeansResult
	for range opts.Restarts {
		centers := init
		if centers == nil {
			centers = plusPlus(rows, opts.K, rng)
		}
		labels, inertia, iters := lloyd(rows, centers, opts.MaxIter, tol)
		if best == nil || inertia < best.Inertia {
			best = &KMeansResult{Centers: fromRows(centers, d), Labels: labels, Inertia: inertia, Iterations: iters}
		}
	}
	return best, nil
}

// Predict returns the nearest centre of each row of x (m, d).
func (r *KMeansResult) Predict(x *tensor.Tensor) []int {
	labels, _ := nearest(x, r.Centers)
	return labels
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

// lloyd runs Lloyd's iterations from centers (updated in place) until the
// centres' total squared movement is at most tol or maxIter is reached; it
// returns the final assignment, its inertia and the iterations run.
func lloyd(rows, centers [][]float64, maxIter int, tol float64) ([]int, float64, int) {
	k, d := len(centers), len(rows[0])
	labels := make([]int, len(rows))
	sums := make([][]float64, k)
	for j := range sums {
		sums[j] = make([]float64, d)
	}
	counts := make([]int, k)
	iters := 0
	for iters < maxIter {
		iters++
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
		if shift <= tol {
			break
		}
	}
	inertia := assign(rows, centers, labels)
	return labels, inertia, iters
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
