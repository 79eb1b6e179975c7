package svm

import (
	"runtime"
	"sync"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/tensor"
)

// denseEval computes the kernel columns SVMs mostly need, stationary
// kernels (on rows scaled by the lengthscales) and the linear kernel,
// without a graph. A column is one matrix-vector product: the inner
// products xᵢᵀxⱼ of row i with rows [start, end) are accumulated as
// Σₖ xᵢₖ·Xᵀₖ,[start:end), one contiguous axpy per nonzero feature of row i
// over the transposed data, so zero features (most MNIST pixels) cost
// nothing and each axpy streams one row of Xᵀ. A stationary kernel then
// maps ‖xᵢ‖² + ‖xⱼ‖² − 2xᵢᵀxⱼ through its profile, with the squared norms
// precomputed. Shrinking permutes the rows: swap exchanges two columns of
// Xᵀ and two norms.
type denseEval struct {
	n, d int
	xt   []float64 // (d, n): feature k of the row at position j is xt[k*n+j]
	nzi  [][]int32 // per original row: its nonzero features
	nzv  [][]float64
	perm []int // position → original row
	sqn  []float64
	prof func(r2 float64) float64 // nil: linear
	v    float64                  // the linear kernel's variance
}

// newDenseEval returns nil for the kernels it does not cover (their graph
// path reports any mismatch of an ARD lengthscale).
func newDenseEval(k gp.Kernel, x *tensor.Tensor) *denseEval {
	n, d := x.Shape()[0], x.Shape()[1]
	xs := append([]float64(nil), x.Contiguous().Float64s()...)
	e := &denseEval{n: n, d: d}
	switch k := k.(type) {
	case *gp.Stationary:
		ls := k.Lengthscale().Get()
		if len(ls) != 1 && len(ls) != d {
			return nil
		}
		for i := range n {
			for j := range d {
				xs[i*d+j] /= ls[j%len(ls)]
			}
		}
		e.prof = k.Profile()
	case *gp.Linear:
		e.v = k.Variance().Value()
	default:
		return nil
	}
	e.xt = make([]float64, d*n)
	e.nzi, e.nzv = make([][]int32, n), make([][]float64, n)
	e.perm, e.sqn = make([]int, n), make([]float64, n)
	for i := range n {
		e.perm[i] = i
		for k, v := range xs[i*d : (i+1)*d] {
			e.xt[k*n+i] = v
			if v != 0 {
				e.nzi[i] = append(e.nzi[i], int32(k))
				e.nzv[i] = append(e.nzv[i], v)
				e.sqn[i] += v * v
			}
		}
	}
	return e
}

func (e *denseEval) swap(i, j int) {
	if i == j {
		return
	}
	e.perm[i], e.perm[j] = e.perm[j], e.perm[i]
	e.sqn[i], e.sqn[j] = e.sqn[j], e.sqn[i]
	for k := 0; k < e.d; k++ {
		row := e.xt[k*e.n : (k+1)*e.n]
		row[i], row[j] = row[j], row[i]
	}
}

func (e *denseEval) fill(i, start, end int, out []float64) {
	r := e.perm[i]
	nzi, nzv := e.nzi[r], e.nzv[r]
	inParallel(start, end, len(nzi), func(lo, hi int) {
		o := out[lo:hi]
		clear(o)
		for t, k := range nzi {
			axpy(nzv[t], e.xt[int(k)*e.n+lo:int(k)*e.n+hi], o)
		}
		switch {
		case e.prof == nil:
			for j := range o {
				o[j] *= e.v
			}
		default:
			ni, sq := e.sqn[i], e.sqn[lo:hi]
			for j, dot := range o {
				o[j] = e.prof(max(ni+sq[j]-2*dot, 0))
			}
		}
		if e.prof != nil && lo <= i && i < hi {
			out[i] = e.prof(0) // exact, whatever the rounding of the norms
		}
	})
}

// axpy sets y += a·x (x at least as long as y), unrolled by four.
func axpy(a float64, x, y []float64) {
	x = x[:len(y)]
	j := 0
	for ; j+4 <= len(y); j += 4 {
		y[j] += a * x[j]
		y[j+1] += a * x[j+1]
		y[j+2] += a * x[j+2]
		y[j+3] += a * x[j+3]
	}
	for ; j < len(y); j++ {
		y[j] += a * x[j]
	}
}

// inParallel splits [lo, hi) over GOMAXPROCS goroutines when a column reads
// enough data (length·width ≥ 2¹⁶ values) to pay for them; the columns are
// memory-bound, so two cores nearly halve their time.
func inParallel(lo, hi, width int, body func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	n := hi - lo
	if p == 1 || n*width < 1<<16 || n < 2*p {
		body(lo, hi)
		return
	}
	var wg sync.WaitGroup
	for w := range p {
		a, b := lo+w*n/p, lo+(w+1)*n/p
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(a, b)
		}()
	}
	wg.Wait()
}
