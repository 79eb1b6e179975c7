// Package ensemble holds tree ensembles: gradient boosting of regression
// trees where the loss is any differentiable graph (Boost): the per-example
// gradients and Hessians that XGBoost's second-order objective needs come
// from autodiff, so a user-written loss needs no hand-derived derivatives.
//
//	b, err := ensemble.Boost(x, y, ensemble.SquaredError, ensemble.BoostOptions{Rounds: 100})
//	pred := b.Predict(xTest)
package ensemble

import (
	"math"
	"sort"
)

// TreeOptions configures the regression trees.
type TreeOptions struct {
	MaxDepth int     // default 3
	MinLeaf  int     // fewest examples in a leaf (default 1)
	Lambda   float64 // L2 penalty on leaf weights (default 1)
}

// Tree is a regression tree whose leaves hold weights.
type Tree struct{ nodes []treeNode }

type treeNode struct {
	leaf        bool
	value       float64 // leaf weight
	feature     int
	threshold   float64 // go left when x[feature] ≤ threshold
	left, right int
}

// fitTree grows a tree on the second-order statistics (gᵢ, hᵢ) of the rows
// idx: a leaf's weight is −G/(H + λ) and a split's gain
// ½[G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)] (Chen and Guestrin 2016). With
// g the residuals' negatives and h = 1 this is least-squares CART.
func fitTree(rows [][]float64, g, h []float64, idx []int, opts TreeOptions) *Tree {
	t := &Tree{}
	t.grow(rows, g, h, idx, 0, opts)
	return t
}

func (t *Tree) grow(rows [][]float64, g, h []float64, idx []int, depth int, opts TreeOptions) int {
	var gs, hs float64
	for _, i := range idx {
		gs += g[i]
		hs += h[i]
	}
	me := len(t.nodes)
	t.nodes = append(t.nodes, treeNode{leaf: true, value: -gs / (hs + opts.Lambda)})
	if depth >= opts.MaxDepth || len(idx) < 2*opts.MinLeaf {
		return me
	}
	score := func(g, h float64) float64 { return g * g / (h + opts.Lambda) }
	best, bestFeature, bestThr := 1e-12, -1, 0.0
	order := append([]int(nil), idx...)
	for f := range rows[idx[0]] {
		sort.Slice(order, func(a, b int) bool { return rows[order[a]][f] < rows[order[b]][f] })
		var gl, hl float64
		for k := 0; k < len(order)-1; k++ {
			gl += g[order[k]]
			hl += h[order[k]]
			x0, x1 := rows[order[k]][f], rows[order[k+1]][f]
			if x0 == x1 || k+1 < opts.MinLeaf || len(order)-k-1 < opts.MinLeaf {
				continue
			}
			gain := 0.5 * (score(gl, hl) + score(gs-gl, hs-hl) - score(gs, hs))
			if gain > best {
				best, bestFeature, bestThr = gain, f, (x0+x1)/2
			}
		}
	}
	if bestFeature < 0 {
		return me
	}
	var left, right []int
	for _, i := range idx {
		if rows[i][bestFeature] <= bestThr {
			left = append(left, i)
		} else {
			right = append(right, i)
		}
	}
	l := t.grow(rows, g, h, left, depth+1, opts)
	r := t.grow(rows, g, h, right, depth+1, opts)
	t.nodes[me] = treeNode{feature: bestFeature, threshold: bestThr, left: l, right: r}
	return me
}

// Predict returns the leaf weight reached by row.
func (t *Tree) Predict(row []float64) float64 {
	n := t.nodes[0]
	for !n.leaf {
		if row[n.feature] <= n.threshold {
			n = t.nodes[n.left]
		} else {
			n = t.nodes[n.right]
		}
	}
	return n.value
}

// Leaves returns the number of leaves.
func (t *Tree) Leaves() int {
	c := 0
	for _, n := range t.nodes {
		if n.leaf {
			c++
		}
	}
	return c
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
