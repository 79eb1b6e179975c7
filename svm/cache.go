package svm

import (
	"container/list"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/tensor"
)

// kernelQ serves columns of Qᵢⱼ = yᵢyⱼK(x_{i mod n}, x_{j mod n}) over m
// variables (m = n for classification, 2n for regression, whose variables
// come in two copies of the rows). Kernel columns are computed through the
// kernel's graph one at a time and kept in an LRU cache of at most
// maxCols columns, so memory stays bounded whatever n is.
type kernelQ struct {
	k       gp.Kernel
	x       *tensor.Tensor // (n, d) float64
	y       []float64      // the variables' signs (length m)
	n       int
	kdiag   []float64
	qd      []float64
	maxCols int
	cols    map[int]*list.Element
	order   *list.List // front: most recently used
	bufs    [2][]float64
	next    int
	// Computed counts the kernel columns evaluated (cache misses).
	computed int
}

type cached struct {
	row int
	col []float64 // K(x_row, x_·), length n
}

func newKernelQ(k gp.Kernel, x *tensor.Tensor, y []float64, cacheBytes int) (*kernelQ, error) {
	n := x.Shape()[0]
	q := &kernelQ{k: k, x: x, y: y, n: n, cols: map[int]*list.Element{}, order: list.New()}
	q.maxCols = max(2, cacheBytes/(8*n))
	var err error
	q.kdiag, err = kernelDiag(k, x)
	if err != nil {
		return nil, err
	}
	q.qd = make([]float64, len(y))
	for t := range y {
		q.qd[t] = q.kdiag[t%n]
	}
	return q, nil
}

func (q *kernelQ) diag() []float64 { return q.qd }

// column returns Q's column i (length m). The slice is valid until the
// call after next: the solver holds two columns at a time.
func (q *kernelQ) column(i int) []float64 {
	kc := q.kernelColumn(i % q.n)
	if q.bufs[q.next] == nil {
		q.bufs[q.next] = make([]float64, len(q.y))
	}
	out := q.bufs[q.next]
	q.next ^= 1
	for t := range out {
		out[t] = q.y[i] * q.y[t] * kc[t%q.n]
	}
	return out
}

// kernelColumn returns K(x_r, x_·) from the cache, computing it on a miss
// and evicting the least recently used column when full.
func (q *kernelQ) kernelColumn(r int) []float64 {
	if e, ok := q.cols[r]; ok {
		q.order.MoveToFront(e)
		return e.Value.(*cached).col
	}
	col, err := kernelRows(q.k, tensor.Slice(q.x, 0, r, r+1, 1), q.x)
	if err != nil {
		panic(err) // kernels of finite inputs do not fail; checked at fit time
	}
	if q.order.Len() >= q.maxCols {
		old := q.order.Back()
		q.order.Remove(old)
		delete(q.cols, old.Value.(*cached).row)
	}
	q.cols[r] = q.order.PushFront(&cached{row: r, col: col})
	q.computed++
	return col
}

// kernelRows evaluates K(a, b) (a's rows by b's) through the kernel's graph.
func kernelRows(k gp.Kernel, a, b *tensor.Tensor) (vals []float64, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	return k.K(g.Const(a), g.Const(b)).Value().Values(), nil
}

func kernelDiag(k gp.Kernel, x *tensor.Tensor) (vals []float64, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	return k.Diag(g.Const(x)).Value().Values(), nil
}
