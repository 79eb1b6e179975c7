// Package ensemble holds tree ensembles: gradient boosting of regression
// trees where the loss is any differentiable graph (FitBooster): the
// per-example gradients and Hessians that XGBoost's second-order objective
// needs come from autodiff, so a user-written loss needs no hand-derived
// derivatives. Beside it: bagged regression trees (FitBagging), random
// forests (FitForest), AdaBoost (FitAdaBoost) and single classification
// trees (FitClassTree).
//
//	b, err := ensemble.FitBooster(ctx, x, y, ensemble.BoosterOptions{Loss: losses.BCEWithLogits, Rounds: 100})
//	logits := b.Predict(xTest) // (m) tensor
//
// Every ensemble fit takes a context: when it is cancelled the fit stops
// before its next tree and returns the ensemble so far with an error
// wrapping ctx.Err().
package ensemble

import (
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// treeOptions shape a regression tree.
type treeOptions struct {
	maxDepth, minLeaf int
	lambda            float64 // L2 penalty on leaf weights
}

// Tree is a regression tree whose leaves hold weights.
type Tree struct {
	nodes    []treeNode
	features int
}

type treeNode struct {
	leaf        bool
	value       float64 // leaf weight
	feature     int
	threshold   float64 // go left when x[feature] ≤ threshold
	left, right int
}

// fitTree grows a tree on the second-order statistics (gᵢ, hᵢ) of the rows
// idx: a leaf's weight is −G/(H + λ) and a split's gain
// ½[G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)] (Chen and Guestrin 2016,
// "XGBoost: a scalable tree boosting system"). With g the residuals'
// negatives and h = 1 this is least-squares CART.
func fitTree(rows [][]float64, g, h []float64, idx []int, opts treeOptions) *Tree {
	t := &Tree{features: len(rows[0])}
	t.grow(rows, g, h, idx, 0, opts)
	return t
}

func (t *Tree) grow(rows [][]float64, g, h []float64, idx []int, depth int, opts treeOptions) int {
	var gs, hs float64
	for _, i := range idx {
		gs += g[i]
		hs += h[i]
	}
	me := len(t.nodes)
	t.nodes = append(t.nodes, treeNode{leaf: true, value: -gs / (hs + opts.lambda)})
	if depth >= opts.maxDepth || len(idx) < 2*opts.minLeaf {
		return me
	}
	score := func(g, h float64) float64 { return g * g / (h + opts.lambda) }
	best, bestFeature, bestThr := 1e-12, -1, 0.0
	order := append([]int(nil), idx...)
	for f := range rows[idx[0]] {
		sort.Slice(order, func(a, b int) bool { return rows[order[a]][f] < rows[order[b]][f] })
		var gl, hl float64
		for k := 0; k < len(order)-1; k++ {
			gl += g[order[k]]
			hl += h[order[k]]
			x0, x1 := rows[order[k]][f], rows[order[k+1]][f]
			if x0 == x1 || k+1 < opts.minLeaf || len(order)-k-1 < opts.minLeaf {
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

// value returns the leaf weight reached by row.
func (t *Tree) value(row []float64) float64 {
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

// Predict returns the leaf weight each row of x (m, d) reaches, an (m)
// tensor. It panics with a *tensor.Error when x is not an (m, d) matrix of
// the training width.
func (t *Tree) Predict(x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows("ensemble.Tree.Predict", x, t.features)
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = t.value(r)
	}
	return tensor.FromFloat64s(out, len(out))
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

// dataRows checks x as the (n, d) training matrix of op and returns its
// rows, or an error naming op: not a matrix, zero columns, want rows
// (when want ≥ 0) or a value that is not finite.
func dataRows(op string, x *tensor.Tensor, want int) ([][]float64, error) {
	if x == nil {
		return nil, fmt.Errorf("%s: nil data", op)
	}
	if x.Dim() != 2 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("%s: data must be a non-empty (n, d) matrix, got shape %s", op, tensor.FormatShape(x.Shape()))
	}
	n, d := x.Shape()[0], x.Shape()[1]
	if d == 0 {
		return nil, fmt.Errorf("%s: data has zero columns (shape %s)", op, tensor.FormatShape(x.Shape()))
	}
	if want >= 0 && n != want {
		return nil, fmt.Errorf("%s: %d rows but %d targets", op, n, want)
	}
	v := x.Cast(tensor.Float64).Contiguous().Float64s()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = v[i*d : (i+1)*d : (i+1)*d]
		for j, val := range rows[i] {
			if !finite(val) {
				return nil, fmt.Errorf("%s: row %d, column %d is %v", op, i, j, val)
			}
		}
	}
	return rows, nil
}

// targets checks y as the (n) regression targets of op.
func targets(op string, y *tensor.Tensor) ([]float64, error) {
	if y == nil || y.Dim() != 1 {
		return nil, fmt.Errorf("%s: targets must be an (n) tensor, got %v", op, y)
	}
	v := y.Cast(tensor.Float64).Contiguous().Float64s()
	for i, t := range v {
		if !finite(t) {
			return nil, fmt.Errorf("%s: target %d is %v", op, i, t)
		}
	}
	return v, nil
}

// predictRows checks x for the prediction call op of a model trained on d
// columns and returns its rows.
func predictRows(op string, x *tensor.Tensor, d int) [][]float64 {
	if x == nil {
		tensor.Fail(op, "nil data")
	}
	if x.Dim() != 2 || x.Shape()[1] != d {
		tensor.Fail(op, "want an (m, %d) matrix, got shape %s", d, tensor.FormatShape(x.Shape()))
	}
	m := x.Shape()[0]
	v := x.Cast(tensor.Float64).Contiguous().Float64s()
	rows := make([][]float64, m)
	for i := range rows {
		rows[i] = v[i*d : (i+1)*d : (i+1)*d]
	}
	return rows
}
