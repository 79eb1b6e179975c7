package tensor

import (
	"runtime"
	"slices"
	"sync"
)

// maxOperands is the most operands walk iterates over together.
const maxOperands = 4

// walk visits an n-d loop over shape in row-major order, one innermost run
// at a time. Operand j starts at offs[j] and moves by strides[j][d] along
// dimension d. fn receives each run's starting offsets, its length and the
// operands' strides along it. Dimensions of size 1 are dropped and adjacent
// dimensions that are laid out contiguously for every operand are merged,
// so a contiguous tensor is one long run.
func walk(shape []int, k int, offs [maxOperands]int, strides [maxOperands][]int, fn func(o [maxOperands]int, n int, s [maxOperands]int)) {
	// Collapse into at most len(shape) dims, innermost last.
	var dimsBuf [8]int
	var strBuf [maxOperands][8]int
	dims := dimsBuf[:0]
	var str [maxOperands][]int
	for j := 0; j < k; j++ {
		str[j] = strBuf[j][:0]
	}
	for d := 0; d < len(shape); d++ {
		if shape[d] == 0 {
			return
		}
		if shape[d] == 1 {
			continue
		}
		last := len(dims) - 1
		merge := last >= 0
		for j := 0; j < k && merge; j++ {
			merge = str[j][last] == strides[j][d]*shape[d]
		}
		if merge {
			dims[last] *= shape[d]
			for j := 0; j < k; j++ {
				str[j][last] = strides[j][d]
			}
			continue
		}
		dims = append(dims, shape[d])
		for j := 0; j < k; j++ {
			str[j] = append(str[j], strides[j][d])
		}
	}
	var inner [maxOperands]int
	if len(dims) == 0 { // a single element
		fn(offs, 1, inner)
		return
	}
	nd := len(dims)
	n := dims[nd-1]
	for j := 0; j < k; j++ {
		inner[j] = str[j][nd-1]
	}
	if nd == 1 {
		fn(offs, n, inner)
		return
	}
	var idxBuf [8]int
	idx := idxBuf[:nd-1]
	if nd-1 > len(idxBuf) {
		idx = make([]int, nd-1)
	}
	cur := offs
	for {
		fn(cur, n, inner)
		// Odometer increment over the outer dims.
		d := nd - 2
		for ; d >= 0; d-- {
			idx[d]++
			for j := 0; j < k; j++ {
				cur[j] += str[j][d]
			}
			if idx[d] < dims[d] {
				break
			}
			for j := 0; j < k; j++ {
				cur[j] -= str[j][d] * dims[d]
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// forEachRow1 calls fn for each innermost run of t with the backing slice,
// the run's offset, stride and length.
func forEachRow1[T Float](t *Tensor, fn func(d []T, off, stride, n int)) {
	d := storage[T](t)
	walk(t.shape, 1, [maxOperands]int{t.offset}, [maxOperands][]int{t.strides}, func(o [maxOperands]int, n int, s [maxOperands]int) {
		fn(d, o[0], s[0], n)
	})
}

// unaryApply sets dst[i] = f(a[i]) where a already has dst's shape (it may
// be a broadcast view). contig handles runs where both are unit-stride.
func unaryApply[T Float](dst, a *Tensor, contig func(d, x []T), f func(T) T) {
	unaryApplyPar(dst, a, contig, f, nil, parallelElemMin)
}

// unaryApplyPar is unaryApply where par, when not nil, is contig for runs long enough to split across
// goroutines; it must not be a closure made by the caller, since handing
// it to goroutines makes it escape (the kernel tables' functions are fine).
func unaryApplyPar[T Float](dst, a *Tensor, contig func(d, x []T), f func(T) T, par func(d, x []T), minPar int) {
	D, A := storage[T](dst), storage[T](a)
	var scratch *[]T
	walk(dst.shape, 2, [maxOperands]int{dst.offset, a.offset}, [maxOperands][]int{dst.strides, a.strides},
		func(o [maxOperands]int, n int, s [maxOperands]int) {
			if s[0] == 1 && s[1] == 1 {
				d, x := D[o[0]:o[0]+n], A[o[1]:o[1]+n]
				if par == nil || n < 2*minPar || runtime.GOMAXPROCS(0) < 2 {
					contig(d, x)
					return
				}
				parallelRange(n, minPar, func(lo, hi int) { par(d[lo:hi], x[lo:hi]) })
				return
			}
			if s[0] != 1 || n < gatherMin {
				di, ai := o[0], o[1]
				for i := 0; i < n; i++ {
					D[di] = f(A[ai])
					di += s[0]
					ai += s[1]
				}
				return
			}
			if scratch == nil {
				scratch = getScratch[T]()
			}
			d, xb := D[o[0]:o[0]+n], (*scratch)[:gatherChunk]
			for lo := 0; lo < n; lo += gatherChunk {
				m := min(gatherChunk, n-lo)
				contig(d[lo:lo+m], gatherStrided(xb[:m], A, o[1]+lo*s[1], s[1]))
			}
		})
	if scratch != nil {
		putScratch(scratch)
	}
}

// binaryApplyPar sets dst[i] = f(a[i], b[i]) where a and b already have
// dst's shape (either may be a broadcast view). contig handles runs where
// all three are unit-stride; par is as for unaryApplyPar.
func binaryApplyPar[T Float](dst, a, b *Tensor, contig func(d, x, y []T), f func(x, y T) T, par func(d, x, y []T)) {
	D, A, B := storage[T](dst), storage[T](a), storage[T](b)
	var scratch *[]T
	walk(dst.shape, 3, [maxOperands]int{dst.offset, a.offset, b.offset}, [maxOperands][]int{dst.strides, a.strides, b.strides},
		func(o [maxOperands]int, n int, s [maxOperands]int) {
			if s[0] == 1 && s[1] == 1 && s[2] == 1 {
				d, x, y := D[o[0]:o[0]+n], A[o[1]:o[1]+n], B[o[2]:o[2]+n]
				if par == nil || n < 2*parallelElemMin || runtime.GOMAXPROCS(0) < 2 {
					contig(d, x, y)
					return
				}
				parallelRange(n, parallelElemMin, func(lo, hi int) { par(d[lo:hi], x[lo:hi], y[lo:hi]) })
				return
			}
			if s[0] != 1 || n < gatherMin { // short runs and strided destinations
				di, ai, bi := o[0], o[1], o[2]
				for i := 0; i < n; i++ {
					D[di] = f(A[ai], B[bi])
					di += s[0]
					ai += s[1]
					bi += s[2]
				}
				return
			}
			// A broadcast or strided operand: gather it chunk by chunk so
			// the vector kernel still does the arithmetic.
			d := D[o[0] : o[0]+n]
			if par == nil || n < 2*parallelElemMin || runtime.GOMAXPROCS(0) < 2 {
				if scratch == nil {
					scratch = getScratch[T]()
				}
				gatheredRun(d, A, o[1], s[1], B, o[2], s[2], contig, *scratch)
				return
			}
			parallelRange(n, parallelElemMin, func(lo, hi int) {
				sc := getScratch[T]()
				gatheredRun(d[lo:hi], A, o[1]+lo*s[1], s[1], B, o[2]+lo*s[2], s[2], par, *sc)
				putScratch(sc)
			})
		})
	if scratch != nil {
		putScratch(scratch)
	}
}

// gatherChunk is the run length gatheredRun copies at a time, small enough
// to stay in L1; gatherMin the run length from which gathering beats a
// call per element.
const (
	gatherChunk = 256
	gatherMin   = 32
)

// Gather buffers (2·gatherChunk elements) come from pools of *[]T, so a
// steady loop gets and returns them without allocating.
var scratchPool32, scratchPool64 sync.Pool

func getScratch[T Float]() *[]T {
	pool := &scratchPool64
	if dtypeOf[T]() == Float32 {
		pool = &scratchPool32
	}
	if p, ok := pool.Get().(*[]T); ok {
		return p
	}
	b := make([]T, 2*gatherChunk)
	return &b
}

func putScratch[T Float](p *[]T) {
	if dtypeOf[T]() == Float32 {
		scratchPool32.Put(p)
	} else {
		scratchPool64.Put(p)
	}
}

// gatheredRun sets d = kernel(x, y) where x starts at A[ao] with stride as
// and y at B[bo] with stride bs; unit-stride operands are passed through,
// the others copied a chunk at a time into scratch (2·gatherChunk
// elements; stride 0 repeats one value).
func gatheredRun[T Float](d []T, A []T, ao, as int, B []T, bo, bs int, kernel func(d, x, y []T), scratch []T) {
	xb, yb := scratch[:gatherChunk], scratch[gatherChunk:2*gatherChunk]
	// A broadcast value is the same for every chunk: fill its buffer once.
	if as == 0 {
		gatherStrided(xb[:min(gatherChunk, len(d))], A, ao, 0)
	}
	if bs == 0 {
		gatherStrided(yb[:min(gatherChunk, len(d))], B, bo, 0)
	}
	for lo := 0; lo < len(d); lo += gatherChunk {
		m := min(gatherChunk, len(d)-lo)
		x, y := xb[:m], yb[:m]
		if as != 0 {
			x = gatherStrided(x, A, ao+lo*as, as)
		}
		if bs != 0 {
			y = gatherStrided(y, B, bo+lo*bs, bs)
		}
		kernel(d[lo:lo+m], x, y)
	}
}

// gatherStrided returns the len(buf) elements of src from off with the
// given stride: src itself when the stride is 1, else a copy in buf.
func gatherStrided[T Float](buf []T, src []T, off, stride int) []T {
	switch stride {
	case 1:
		return src[off : off+len(buf)]
	case 0:
		v := src[off]
		for i := range buf {
			buf[i] = v
		}
	default:
		for i := range buf {
			buf[i] = src[off]
			off += stride
		}
	}
	return buf
}

// BroadcastShapes returns the NumPy broadcast of the given shapes, or
// panics with a *Error for op naming every shape when they don't broadcast.
func BroadcastShapes(op string, shapes ...[]int) []int {
	out, j, a, b := broadcast(shapes)
	if j < 0 {
		checkShape(op, out) // (2³², 1) with (1, 2³²) must not wrap around
		return out
	}
	parts := make([]any, len(shapes))
	for k, sh := range shapes {
		parts[k] = fmtShape(sh)
	}
	Fail(op, "shapes %v do not broadcast (dimension %d: %d vs %d)", parts, j-len(out), a, b)
	return nil
}

// Broadcastable reports whether the shapes broadcast together by NumPy's
// rules, for callers that want to word their own error.
func Broadcastable(shapes ...[]int) bool {
	_, j, _, _ := broadcast(shapes)
	return j < 0
}

// broadcast computes the broadcast of shapes; when they do not broadcast
// it returns the index j ≥ 0 of the first dimension that clashes and the
// two sizes there, else j = −1.
func broadcast(shapes [][]int) (out []int, j, a, b int) {
	nd := 0
	for _, s := range shapes {
		nd = max(nd, len(s))
	}
	out = make([]int, nd)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := nd - len(s) + i
			switch {
			case out[j] == d || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				return out, j, out[j], d
			}
		}
	}
	return out, -1, 0, 0
}

// broadcastTo returns a view of t with the given shape, using stride 0
// along broadcast dimensions. It panics for op if t's shape does not
// broadcast to shape.
func (t *Tensor) broadcastTo(op string, shape []int) *Tensor {
	if slices.Equal(t.shape, shape) {
		return t
	}
	if len(t.shape) > len(shape) {
		Fail(op, "cannot broadcast shape %v to %v", fmtShape(t.shape), fmtShape(shape))
	}
	strides := make([]int, len(shape))
	lead := len(shape) - len(t.shape)
	for i := range shape {
		if i < lead {
			continue
		}
		d := t.shape[i-lead]
		switch {
		case d == shape[i]:
			strides[i] = t.strides[i-lead]
		case d == 1:
		default:
			Fail(op, "cannot broadcast shape %v to %v", fmtShape(t.shape), fmtShape(shape))
		}
	}
	v := *t
	v.shape = cloneInts(shape)
	v.strides = strides
	return &v
}
