package ensemble

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// Criterion is a classification tree's impurity.
type Criterion int

const (
	// Gini impurity 1 − Σ p².
	Gini Criterion = iota
	// Entropy −Σ p log p.
	Entropy
)

// ClassTreeOptions configures FitClassTree. Zero fields take the
// defaults given.
type ClassTreeOptions struct {
	Classes     int       // number of classes (default: the largest label + 1)
	Criterion   Criterion // impurity: Gini (default) or Entropy
	MaxDepth    int       // default: unlimited (grow until pure or MinLeaf)
	MinLeaf     int       // fewest examples in a leaf (default 1)
	MaxFeatures int       // features tried per split (default all)
	Seed        uint64    // seed of the features drawn when MaxFeatures < d (default 0)
}

// classTreeOptions shape a classification tree.
type classTreeOptions struct {
	criterion                      Criterion
	maxDepth, minLeaf, maxFeatures int
}

// ClassTree is a CART classification tree (Breiman, Friedman, Olshen and
// Stone 1984, Classification and Regression Trees); its leaves hold class
// frequencies.
type ClassTree struct {
	classes  int
	features int
	nodes    []classNode
}

type classNode struct {
	leaf        bool
	dist        []float64 // class frequencies at a leaf
	class       int       // the most frequent class at a leaf (the lowest on ties)
	feature     int
	threshold   float64
	left, right int
}

// FitClassTree grows a tree on the rows of x (n, d) with labels in
// [0, Classes), choosing at each node the split of largest impurity
// decrease among MaxFeatures features drawn without replacement (all by
// default). It returns an error naming the fit for bad data (not a
// matrix, zero columns, NaN or Inf, one label per row missing, a label
// out of range, a single class) or negative options.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitClassTree(x *tensor.Tensor, labels []int, opts ClassTreeOptions) (*ClassTree, error) {
	const op = "ensemble.FitClassTree"
	if opts.MaxDepth < 0 || opts.MinLeaf < 0 || opts.MaxFeatures < 0 {
		return nil, fmt.Errorf("%s: MaxDepth = %d, MinLeaf = %d and MaxFeatures = %d must not be negative", op, opts.MaxDepth, opts.MinLeaf, opts.MaxFeatures)
	}
	rows, classes, err := classRows(op, x, labels, opts.Classes)
	if err != nil {
		return nil, err
	}
	if opts.MaxFeatures > len(rows[0]) {
		return nil, fmt.Errorf("%s: MaxFeatures = %d for %d columns", op, opts.MaxFeatures, len(rows[0]))
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	shape := classTreeOptions{criterion: opts.Criterion, maxDepth: opts.MaxDepth, minLeaf: opts.MinLeaf, maxFeatures: opts.MaxFeatures}
	return growClassTree(rows, labels, classes, idx, shape, tensor.NewRNG(opts.Seed)), nil
}

func growClassTree(rows [][]float64, labels []int, classes int, idx []int, opts classTreeOptions, rng *tensor.RNG) *ClassTree {
	if opts.minLeaf == 0 {
		opts.minLeaf = 1
	}
	if opts.maxDepth == 0 {
		opts.maxDepth = math.MaxInt
	}
	t := &ClassTree{classes: classes, features: len(rows[0])}
	t.grow(rows, labels, idx, 0, opts, rng)
	return t
}

func (t *ClassTree) impurity(counts []float64, n float64, c Criterion) float64 {
	s := 0.0
	for _, k := range counts {
		if k == 0 {
			continue
		}
		p := k / n
		if c == Entropy {
			s -= p * math.Log(p)
		} else {
			s += p * p
		}
	}
	if c == Entropy {
		return s
	}
	return 1 - s
}

func (t *ClassTree) grow(rows [][]float64, labels []int, idx []int, depth int, opts classTreeOptions, rng *tensor.RNG) int {
	counts := make([]float64, t.classes)
	for _, i := range idx {
		counts[labels[i]]++
	}
	n := float64(len(idx))
	me := len(t.nodes)
	dist := make([]float64, t.classes)
	for c, k := range counts {
		dist[c] = k / n
	}
	t.nodes = append(t.nodes, classNode{leaf: true, dist: dist, class: tensor.ArgMax(tensor.FromFloat64s(dist, t.classes), 0)[0]})
	parent := t.impurity(counts, n, opts.criterion)
	if parent == 0 || depth >= opts.maxDepth || len(idx) < 2*opts.minLeaf {
		return me
	}
	d := len(rows[idx[0]])
	features := make([]int, d)
	for i := range features {
		features[i] = i
	}
	if opts.maxFeatures > 0 && opts.maxFeatures < d {
		perm := rng.Perm(d)
		features = perm[:opts.maxFeatures]
	}
	best, bestF, bestThr := 1e-12, -1, 0.0
	order := append([]int(nil), idx...)
	left := make([]float64, t.classes)
	for _, f := range features {
		sort.Slice(order, func(a, b int) bool { return rows[order[a]][f] < rows[order[b]][f] })
		clear(left)
		for k := 0; k < len(order)-1; k++ {
			left[labels[order[k]]]++
			x0, x1 := rows[order[k]][f], rows[order[k+1]][f]
			nl := float64(k + 1)
			if x0 == x1 || k+1 < opts.minLeaf || len(order)-k-1 < opts.minLeaf {
				continue
			}
			right := make([]float64, t.classes)
			for c := range right {
				right[c] = counts[c] - left[c]
			}
			gain := parent - nl/n*t.impurity(left, nl, opts.criterion) - (n-nl)/n*t.impurity(right, n-nl, opts.criterion)
			if gain > best {
				best, bestF, bestThr = gain, f, (x0+x1)/2
			}
		}
	}
	if bestF < 0 {
		return me
	}
	var li, ri []int
	for _, i := range idx {
		if rows[i][bestF] <= bestThr {
			li = append(li, i)
		} else {
			ri = append(ri, i)
		}
	}
	l := t.grow(rows, labels, li, depth+1, opts, rng)
	r := t.grow(rows, labels, ri, depth+1, opts, rng)
	t.nodes[me] = classNode{feature: bestF, threshold: bestThr, left: l, right: r}
	return me
}

// leaf returns the leaf row reaches.
func (t *ClassTree) leaf(row []float64) *classNode {
	n := &t.nodes[0]
	for !n.leaf {
		if row[n.feature] <= n.threshold {
			n = &t.nodes[n.left]
		} else {
			n = &t.nodes[n.right]
		}
	}
	return n
}

// proba returns the class frequencies of the leaf row reaches.
func (t *ClassTree) proba(row []float64) []float64 { return t.leaf(row).dist }

// class returns the most frequent class of the leaf row reaches.
func (t *ClassTree) class(row []float64) int { return t.leaf(row).class }

// PredictProba returns the class frequencies of the leaf each row of x
// (m, d) reaches, an (m, classes) tensor. It panics with a *tensor.Error
// when x is not an (m, d) matrix of the training width.
func (t *ClassTree) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows("ensemble.ClassTree.PredictProba", x, t.features)
	out := make([]float64, 0, len(rows)*t.classes)
	for _, r := range rows {
		out = append(out, t.proba(r)...)
	}
	return tensor.FromFloat64s(out, len(rows), t.classes)
}

// Predict returns the most frequent class of the leaf each row of x
// reaches (the lowest on ties). It panics as PredictProba does.
func (t *ClassTree) Predict(x *tensor.Tensor) []int {
	rows := predictRows("ensemble.ClassTree.Predict", x, t.features)
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = t.class(r)
	}
	return out
}

// Forest is a random forest of classification trees (Breiman 2001,
// "Random forests"): each tree grows on a bootstrap sample, trying √d
// random features per split, and the forest predicts the class of largest
// mean probability.
type Forest struct {
	Trees   []*ClassTree // one per bootstrap sample
	Classes int          // number of classes
	// OOBError is the error of each row's prediction by the trees whose
	// bootstrap sample left it out (rows no tree left out are skipped).
	OOBError float64
	features int
}

// ForestOptions configures FitForest. Zero fields take the defaults
// given.
type ForestOptions struct {
	Trees       int       // trees (default 100)
	Classes     int       // number of classes (default: the largest label + 1)
	Criterion   Criterion // impurity: Gini (default) or Entropy
	MaxDepth    int       // default: unlimited
	MinLeaf     int       // fewest examples in a leaf (default 1)
	MaxFeatures int       // features tried per split (default ⌊√d⌋, at least 1)
	Seed        uint64    // seed of the bootstrap samples and feature draws (default 0)
}

// FitForest grows opts.Trees trees on the rows of x (n, d) with labels in
// [0, Classes). It returns an error naming the fit for bad data (as
// FitClassTree) or negative options. When ctx is cancelled it stops
// before the next tree and returns the forest so far (OOBError unset)
// with an error wrapping ctx.Err().
// Its Trees is a budget it always spends, with no convergence test: it never
// returns a *tensor.NotConvergedError.
func FitForest(ctx context.Context, x *tensor.Tensor, labels []int, opts ForestOptions) (*Forest, error) {
	const op = "ensemble.FitForest"
	if opts.Trees < 0 || opts.MaxDepth < 0 || opts.MinLeaf < 0 || opts.MaxFeatures < 0 {
		return nil, fmt.Errorf("%s: Trees = %d, MaxDepth = %d, MinLeaf = %d and MaxFeatures = %d must not be negative", op, opts.Trees, opts.MaxDepth, opts.MinLeaf, opts.MaxFeatures)
	}
	rows, classes, err := classRows(op, x, labels, opts.Classes)
	if err != nil {
		return nil, err
	}
	if opts.Trees == 0 {
		opts.Trees = 100
	}
	n, d := len(rows), len(rows[0])
	if opts.MaxFeatures > d {
		return nil, fmt.Errorf("%s: MaxFeatures = %d for %d columns", op, opts.MaxFeatures, d)
	}
	shape := classTreeOptions{criterion: opts.Criterion, maxDepth: opts.MaxDepth, minLeaf: opts.MinLeaf, maxFeatures: opts.MaxFeatures}
	if shape.maxFeatures == 0 {
		shape.maxFeatures = max(1, int(math.Sqrt(float64(d))))
	}
	rng := tensor.NewRNG(opts.Seed)
	f := &Forest{Classes: classes, features: d}
	oob := make([]float64, n*classes) // summed probabilities of the trees that left each row out
	left := make([]bool, n)
	for range opts.Trees {
		if ctx.Err() != nil {
			return f, fmt.Errorf("%s: stopped after %d trees: %w", op, len(f.Trees), ctx.Err())
		}
		in := make([]bool, n)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.Intn(n)
			in[idx[i]] = true
		}
		t := growClassTree(rows, labels, classes, idx, shape, rng)
		f.Trees = append(f.Trees, t)
		for i, r := range rows {
			if in[i] {
				continue
			}
			left[i] = true
			for c, p := range t.proba(r) {
				oob[i*classes+c] += p
			}
		}
	}
	wrong, counted := 0, 0
	for i, c := range tensor.ArgMax(tensor.FromFloat64s(oob, n, classes), 1) {
		if left[i] {
			counted++
			if c != labels[i] {
				wrong++
			}
		}
	}
	if counted > 0 {
		f.OOBError = float64(wrong) / float64(counted)
	}
	return f, nil
}

// PredictProba returns the trees' mean class probabilities for each row
// of x (m, d), an (m, Classes) tensor. It panics with a *tensor.Error when
// x is not an (m, d) matrix of the training width.
func (f *Forest) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	return f.proba("ensemble.Forest.PredictProba", x)
}

// Predict returns the class of largest mean probability for each row of
// x. It panics as PredictProba does.
func (f *Forest) Predict(x *tensor.Tensor) []int {
	return tensor.ArgMax(f.proba("ensemble.Forest.Predict", x), 1)
}

func (f *Forest) proba(op string, x *tensor.Tensor) *tensor.Tensor {
	rows := predictRows(op, x, f.features)
	out := make([]float64, len(rows)*f.Classes)
	for i, r := range rows {
		for _, t := range f.Trees {
			for c, p := range t.proba(r) {
				out[i*f.Classes+c] += p / float64(len(f.Trees))
			}
		}
	}
	return tensor.FromFloat64s(out, len(rows), f.Classes)
}

// classRows checks x and labels as the training data of the classifier
// op and returns x's rows and the number of classes (classes, or the
// largest label + 1 when it is 0): an error names op and what was wrong
// (not a matrix, zero columns, NaN or Inf, a label count other than the
// rows', a label out of range, fewer than two classes present).
func classRows(op string, x *tensor.Tensor, labels []int, classes int) ([][]float64, int, error) {
	rows, err := dataRows(op, x, -1)
	if err != nil {
		return nil, 0, err
	}
	if len(rows) != len(labels) {
		return nil, 0, fmt.Errorf("%s: %d rows but %d labels", op, len(rows), len(labels))
	}
	if classes < 0 {
		return nil, 0, fmt.Errorf("%s: Classes = %d must not be negative", op, classes)
	}
	if classes == 0 {
		for _, l := range labels {
			classes = max(classes, l+1)
		}
	}
	seen := map[int]bool{}
	for i, l := range labels {
		if l < 0 || l >= classes {
			return nil, 0, fmt.Errorf("%s: label %d of row %d is not in [0, %d)", op, l, i, classes)
		}
		seen[l] = true
	}
	if len(seen) < 2 {
		return nil, 0, fmt.Errorf("%s: the labels hold a single class (%d); a classifier needs two or more", op, labels[0])
	}
	return rows, classes, nil
}
