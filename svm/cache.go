package svm

import (
	"container/list"
	"runtime"
	"sync"

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
	fast    func(r int, out []float64) // nil: evaluate through the kernel's graph
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
	q.fast = directColumns(k, x)
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
	var col []float64
	if q.fast != nil {
		col = make([]float64, q.n)
		q.fast(r, col)
	} else {
		var err error
		if col, err = kernelRows(q.k, tensor.Slice(q.x, 0, r, r+1, 1), q.x); err != nil {
			panic(err) // kernels of finite inputs do not fail; checked at fit time
		}
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

// directColumns returns a column evaluator that skips the graph for the
// kernels SVMs mostly use, stationary (on the scaled rows and their norms)
// and linear, or nil for any other kernel. Building a graph per column
// re-scales all n rows each time, which made columns ~40× slower than
// this dot-product loop.
func directColumns(k gp.Kernel, x *tensor.Tensor) func(r int, out []float64) {
	n, d := x.Shape()[0], x.Shape()[1]
	switch k := k.(type) {
	case *gp.Stationary:
		ls := k.Lengthscale().Get()
		if len(ls) != 1 && len(ls) != d {
			return nil // the graph path reports the mismatch
		}
		xs := append([]float64(nil), x.Contiguous().Float64s()...)
		for i := range n {
			for j := range d {
				xs[i*d+j] /= ls[j%len(ls)]
			}
		}
		norms := make([]float64, n)
		for i := range n {
			norms[i] = dotRows(xs[i*d:(i+1)*d], xs[i*d:(i+1)*d])
		}
		f := k.Profile()
		return func(r int, out []float64) {
			row := xs[r*d : (r+1)*d]
			inParallel(n, d, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					out[j] = f(max(norms[r]+norms[j]-2*dotRows(row, xs[j*d:(j+1)*d]), 0))
				}
			})
			out[r] = f(0)
		}
	case *gp.Linear:
		xs := x.Contiguous().Float64s()
		v := k.Variance().Value()
		return func(r int, out []float64) {
			row := xs[r*d : (r+1)*d]
			inParallel(n, d, func(lo, hi int) {
				for j := lo; j < hi; j++ {
					out[j] = v * dotRows(row, xs[j*d:(j+1)*d])
				}
			})
		}
	}
	return nil
}

// inParallel splits the rows [0, n) of a column over GOMAXPROCS goroutines
// when the column reads enough data (n·d ≥ 2¹⁶ values) to pay for them;
// the columns are memory-bound, so two cores nearly halve their time.
func inParallel(n, d int, body func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if p == 1 || n*d < 1<<16 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range p {
		lo, hi := w*n/p, (w+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}

// dotRows is aᵀb with four accumulators, which lets the CPU overlap the
// additions (about 4× a single running sum).
func dotRows(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}
