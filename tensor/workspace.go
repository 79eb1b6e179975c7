package tensor

import (
	"math/bits"
	"sync"
)

// Scratch space of the dense factorisations. An n×n factorisation needs
// several n×n work arrays; allocated afresh on every call, each is
// zeroed and, once the garbage collector has returned its pages to the
// operating system, faulted in again page by page, which at n = 1000 costs
// about as much as a tenth of the arithmetic. Pooled buffers stay mapped
// and warm in cache between calls.

// workMin is the length below which a plain make is cheaper than the pool.
// Above a few hundred elements zeroing the fresh slice costs more than the
// pool's Get and Put, and the garbage of a loop that makes one per step
// (a bidiagonal reduction's ~2,000 of 8 KiB at n = 1000) brings the
// collections that empty the pool of the large buffers.
const workMin = 1 << 9

// workPools holds free buffers by dtype (0 float32, 1 float64) and by
// the base-2 logarithm of their capacity.
var workPools [2][64]sync.Pool

// workBoxes holds spare *[]T boxes by dtype: the pools store pointers, and
// a box taken from here for workPut and returned by workGet keeps the
// round trip free of allocation (boxing the slice anew cost one per Put,
// 700 in a 256×256 SVD).
var workBoxes [2]sync.Pool

// workGet returns a slice of length n whose contents are undefined:
// callers that need zeros clear it. Return it with workPut when done.
func workGet[T Float](n int) []T {
	if n < workMin {
		return make([]T, n)
	}
	c := bits.Len(uint(n - 1))
	k := workKind[T]()
	if p, ok := workPools[k][c].Get().(*[]T); ok {
		s := (*p)[:n]
		*p = nil
		workBoxes[k].Put(p)
		return s
	}
	return make([]T, n, 1<<c)
}

// workPut hands s, from workGet, back to the pool; s must not be
// used afterwards.
func workPut[T Float](s []T) {
	c := cap(s)
	if c < workMin || c&(c-1) != 0 {
		return
	}
	k := workKind[T]()
	p, _ := workBoxes[k].Get().(*[]T)
	if p == nil {
		p = new([]T)
	}
	*p = s[:c]
	workPools[k][bits.Len(uint(c-1))].Put(p)
}

func workKind[T Float]() int {
	if dtypeOf[T]() == Float32 {
		return 0
	}
	return 1
}
