package ensemble

import (
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

// ClassTreeOptions configures classification trees (CART).
type ClassTreeOptions struct {
	Criterion   Criterion
	MaxDepth    int // default: unlimited (grow until pure or MinLeaf)
	MinLeaf     int // default 1
	MaxFeatures int // features tried per split; 0: all (a forest uses √d)
}

// ClassTree is a CART classification tree; its leaves hold class
// frequencies.
type ClassTree struct {
	classes int
	nodes   []classNode
}

type classNode struct {
	leaf        bool
	dist        []float64 // class frequencies at a leaf
	feature     int
	threshold   float64
	left, right int
}

// FitClassTree grows a tree on the rows of x (n, d) with labels in
// [0, classes), choosing at each node the split of largest impurity
// decrease among MaxFeatures features drawn without replacement (all by
// default). rng draws those features; it may be nil when all are used.
func FitClassTree(x *tensor.Tensor, labels []int, classes int, opts ClassTreeOptions, rng *tensor.RNG) (*ClassTree, error) {
	rows, err := classRows("ensemble.FitClassTree", x, labels, classes)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	return growClassTree(rows, labels, classes, idx, opts, rng), nil
}

func growClassTree(rows [][]float64, labels []int, classes int, idx []int, opts ClassTreeOptions, rng *tensor.RNG) *ClassTree {
	if opts.MinLeaf <= 0 {
		opts.MinLeaf = 1
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = math.MaxInt
	}
	t := &ClassTree{classes: classes}
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

func (t *ClassTree) grow(rows [][]float64, labels []int, idx []int, depth int, opts ClassTreeOptions, rng *tensor.RNG) int {
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
	t.nodes = append(t.nodes, classNode{leaf: true, dist: dist})
	parent := t.impurity(counts, n, opts.Criterion)
	if parent == 0 || depth >= opts.MaxDepth || len(idx) < 2*opts.MinLeaf {
		return me
	}
	d := len(rows[idx[0]])
	features := make([]int, d)
	for i := range features {
		features[i] = i
	}
	if opts.MaxFeatures > 0 && opts.MaxFeatures < d && rng != nil {
		perm := rng.Perm(d)
		features = perm[:opts.MaxFeatures]
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
			if x0 == x1 || k+1 < opts.MinLeaf || len(order)-k-1 < opts.MinLeaf {
				continue
			}
			right := make([]float64, t.classes)
			for c := range right {
				right[c] = counts[c] - left[c]
			}
			gain := parent - nl/n*t.impurity(left, nl, opts.Criterion) - (n-nl)/n*t.impurity(right, n-nl, opts.Criterion)
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

// Proba returns the class frequencies of the leaf row reaches.
func (t *ClassTree) Proba(row []float64) []float64 {
	n := t.nodes[0]
	for !n.leaf {
		if row[n.feature] <= n.threshold {
			n = t.nodes[n.left]
		} else {
			n = t.nodes[n.right]
		}
	}
	return n.dist
}

// Forest is a random forest of classification trees (Breiman 2001): each
// tree grows on a bootstrap sample, trying √d random features per split,
// and the forest predicts the class of largest mean probability.
type Forest struct {
	Trees   []*ClassTree
	Classes int
	// OOBError is the error of each row's prediction by the trees whose
	// bootstrap sample left it out (rows no tree left out are skipped).
	OOBError float64
}

// FitForest grows trees trees on the rows of x with labels in [0, classes)
// from seed.
func FitForest(x *tensor.Tensor, labels []int, classes, trees int, opts ClassTreeOptions, seed uint64) (*Forest, error) {
	rows, err := classRows("ensemble.FitForest", x, labels, classes)
	if err != nil {
		return nil, err
	}
	if trees < 1 {
		return nil, fmt.Errorf("ensemble.FitForest: %d trees", trees)
	}
	n, d := len(rows), len(rows[0])
	if opts.MaxFeatures == 0 {
		opts.MaxFeatures = max(1, int(math.Sqrt(float64(d))))
	}
	rng := tensor.NewRNG(seed)
	f := &Forest{Classes: classes}
	oob := make([][]float64, n)
	for range trees {
		in := make([]bool, n)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.Intn(n)
			in[idx[i]] = true
		}
		t := growClassTree(rows, labels, classes, idx, opts, rng)
		f.Trees = append(f.Trees, t)
		for i, r := range rows {
			if in[i] {
				continue
			}
			if oob[i] == nil {
				oob[i] = make([]float64, classes)
			}
			for c, p := range t.Proba(r) {
				oob[i][c] += p
			}
		}
	}
	wrong, counted := 0, 0
	for i, v := range oob {
		if v == nil {
			continue
		}
		counted++
		if argmax(v) != labels[i] {
			wrong++
		}
	}
	if counted > 0 {
		f.OOBError = float64(wrong) / float64(counted)
	}
	return f, nil
}

// Predict returns the class of largest mean probability for each row.
func (f *Forest) Predict(x *tensor.Tensor) []int {
	if x == nil || x.Dim() != 2 {
		tensor.Fail("ensemble.Forest.Predict", "want an (m, d) matrix, got %v", x)
	}
	m, d := x.Shape()[0], x.Shape()[1]
	v := x.Cast(tensor.Float64).Contiguous().Values()
	out := make([]int, m)
	sum := make([]float64, f.Classes)
	for i := range out {
		clear(sum)
		for _, t := range f.Trees {
			for c, p := range t.Proba(v[i*d : (i+1)*d]) {
				sum[c] += p
			}
		}
		out[i] = argmax(sum)
	}
	return out
}

func argmax(v []float64) int {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return b
}

func classRows(op string, x *tensor.Tensor, labels []int, classes int) ([][]float64, error) {
	if x == nil || x.Dim() != 2 || x.Shape()[0] == 0 || x.Shape()[0] != len(labels) {
		return nil, fmt.Errorf("%s: want an (n, d) matrix with one label per row, got %v and %d labels", op, x, len(labels))
	}
	n, d := x.Shape()[0], x.Shape()[1]
	v := x.Cast(tensor.Float64).Contiguous().Values()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = v[i*d : (i+1)*d]
		for j, val := range rows[i] {
			if !finite(val) {
				return nil, fmt.Errorf("%s: row %d, column %d is %v", op, i, j, val)
			}
		}
		if labels[i] < 0 || labels[i] >= classes {
			return nil, fmt.Errorf("%s: label %d of row %d is not in [0, %d)", op, labels[i], i, classes)
		}
	}
	return rows, nil
}
