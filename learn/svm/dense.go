package svm

import (
	"math"
	"runtime"
	"sync"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// denseEval computes the kernel columns SVMs mostly need, stationary
// kernels (on rows scaled by the lengthscales) and the linear kernel,
// without a graph. A column is one matrix-vector product, the inner
// products xᵢᵀxⱼ of row i with rows [start, end), by gonum's SSE2 kernels
// through tensor.BLAS. Dense data (at least half the entries nonzero) keep
// their rows and take one GEMV, X[start:end]·xᵢ, four rows at a time.
// Sparse data keep Xᵀ and accumulate Σₖ xᵢₖ·Xᵀₖ,[start:end), one contiguous
// axpy per nonzero feature of row i, so zero features (most MNIST pixels)
// cost nothing and each axpy streams one row of Xᵀ into a column that stays
// in L1. A stationary kernel then maps ‖xᵢ‖² + ‖xⱼ‖² − 2xᵢᵀxⱼ through its
// profile, with the squared norms precomputed. Shrinking permutes the
// rows: swap exchanges two rows of X (or columns of Xᵀ) and two norms.
type denseEval struct {
	n, d int
	xr   []float64 // dense data: (n, d), the row at position j is xr[j*d:(j+1)*d]
	xt   []float64 // sparse data: (d, n), feature k of the row at position j is xt[k*n+j]
	// Row r's nonzero features are nzi[nzp[r]:nzp[r+1]] with values nzv[…]
	// (compressed sparse rows, in the original order of the rows).
	nzp  []int
	nzi  []int32
	nzv  []float64
	perm []int // position → original row
	sqn  []float64
	prof func(r2 float64) float64 // nil: linear
	rbf  bool                     // prof is exp(−r²/2): use tensor's vector exp
	v    float64                  // the linear kernel's variance
}

// newDenseEval returns nil for the kernels it does not cover (their graph
// path reports any mismatch of an ARD lengthscale).
func newDenseEval(k kernel.Kernel, x *tensor.Tensor) *denseEval {
	n, d := x.Shape()[0], x.Shape()[1]
	xs := x.Contiguous().Float64s()
	e := &denseEval{n: n, d: d}
	inv := make([]float64, d) // 1/lengthscale per feature
	switch k := k.(type) {
	case *kernel.Stationary:
		ls := k.Lengthscale().Get()
		if len(ls) != 1 && len(ls) != d {
			return nil
		}
		for j := range inv {
			inv[j] = 1 / ls[j%len(ls)]
		}
		e.prof = k.Profile()
		// The stationary kinds are a closed set, and only the RBF's
		// profile is exp(−r²/2) at these points.
		e.rbf = true
		for _, r2 := range []float64{0.5, 3, 17} {
			e.rbf = e.rbf && e.prof(r2) == math.Exp(-r2/2)
		}
	case *kernel.Linear:
		e.v = k.Variance().Value()
		for j := range inv {
			inv[j] = 1
		}
	default:
		return nil
	}
	e.perm, e.sqn, e.nzp = make([]int, n), make([]float64, n), make([]int, n+1)
	for i := range n {
		e.perm[i] = i
		for _, v := range xs[i*d : (i+1)*d] {
			if v != 0 {
				e.nzp[i+1]++
			}
		}
		e.nzp[i+1] += e.nzp[i]
	}
	if 2*e.nzp[n] >= n*d {
		e.xr = make([]float64, n*d)
		for i := range n {
			row := e.xr[i*d : (i+1)*d]
			for k, v := range xs[i*d : (i+1)*d] {
				row[k] = v * inv[k]
				e.sqn[i] += row[k] * row[k]
			}
		}
		return e
	}
	// Compressed rows, then Xᵀ scattered from them: only the nonzeros are
	// written, where a dense transpose strides through memory.
	e.nzi, e.nzv = make([]int32, e.nzp[n]), make([]float64, e.nzp[n])
	e.xt = make([]float64, d*n)
	for i := range n {
		t := e.nzp[i]
		for k, v := range xs[i*d : (i+1)*d] {
			if v != 0 {
				v *= inv[k]
				e.nzi[t], e.nzv[t] = int32(k), v
				e.xt[k*n+i] = v
				e.sqn[i] += v * v
				t++
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
	if e.xr != nil {
		d := e.d
		for k := range d {
			e.xr[i*d+k], e.xr[j*d+k] = e.xr[j*d+k], e.xr[i*d+k]
		}
		return
	}
	for k := 0; k < e.d; k++ {
		row := e.xt[k*e.n : (k+1)*e.n]
		row[i], row[j] = row[j], row[i]
	}
}

func (e *denseEval) fill(i, start, end int, out []float64) {
	var nzi []int32
	var nzv []float64
	width := e.d
	if e.xr == nil {
		r := e.perm[i]
		nzi, nzv = e.nzi[e.nzp[r]:e.nzp[r+1]], e.nzv[e.nzp[r]:e.nzp[r+1]]
		width = len(nzi)
	}
	inParallel(start, end, width, func(lo, hi int) {
		o := out[lo:hi]
		if e.xr != nil {
			d := e.d
			blas.Dgemv(gblas.NoTrans, hi-lo, d, 1, e.xr[lo*d:hi*d], d, e.xr[i*d:(i+1)*d], 1, 0, o, 1)
		} else {
			clear(o)
			for t, k := range nzi {
				blas.Daxpy(hi-lo, nzv[t], e.xt[int(k)*e.n+lo:int(k)*e.n+hi], 1, o, 1)
			}
		}
		switch {
		case e.prof == nil:
			for j := range o {
				o[j] *= e.v
			}
		case e.rbf:
			ni, sq := e.sqn[i], e.sqn[lo:hi]
			for j, dot := range o {
				o[j] = -0.5 * max(ni+sq[j]-2*dot, 0)
			}
			t := tensor.FromFloat64s(o, len(o))
			tensor.ExpTo(t, t)
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

// blas is gonum's BLAS as the tensor package exposes it: its Daxpy and
// Dgemv are SSE2 kernels, about three times the plain Go loops.
var blas tensor.BLAS

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
