package gemm

import (
	"sync"
	"unsafe"
)

// Outer products are GEMMs of depth k = 1. The packed GEMM does them
// poorly: there is no depth to spread the packing over, and each tile's
// stores come in the micro-kernel's 6-row pattern. They are pure writes
// (m·n stores for m + n loads), the shape of per-example weight gradients
// (autodiff.PerExampleGrads writes one (out, in) matrix per example), so
// the rank-1 kernels write each row of C once, and large outputs bypass
// the caches (streaming stores need no read of the line before it is
// written, which halves the memory traffic of a write-only pass).

// StreamBytes is the output size, in bytes, from which outer products use
// non-temporal stores: about twice the L2 of a core on the Zen 4 and 5
// machines this was measured on, beyond which the output does not stay in
// the caches anyway.
const StreamBytes = 4 << 20

// outerParallel is the number of elements of C from which an outer product
// is split over goroutines: about 30 µs of stores.
const outerParallel = 1 << 16

// outerKernel is one architecture's rank-1 kernel: C's rows i < m become
// a[i·inca]·b (mode outerStore or outerStream) or add it (outerAdd); b and
// C's rows are contiguous, ldc is C's row stride in elements.
type outerKernel[T float] func(m, n int, a []T, inca int, b, c []T, ldc int, mode int)

// The kernels' modes.
const (
	outerStore  = 0 // plain stores
	outerStream = 1 // non-temporal stores
	outerAdd    = 2 // C += a·bᵀ
)

// portableOuter is the pure-Go rank-1 kernel; streaming stores are plain
// stores here. The product is rounded before it is added, as in the tile
// kernels with alpha = 1 and beta = 1, so every path gives the same bits.
func portableOuter[T float](m, n int, a []T, inca int, b, c []T, ldc int, mode int) {
	b = b[:n]
	for i := range m {
		ai := a[i*inca]
		row := c[i*ldc : i*ldc+n]
		if mode == outerAdd {
			for j, v := range b {
				row[j] += T(ai * v) // the conversion forbids a fused multiply-add
			}
			continue
		}
		for j, v := range b {
			row[j] = ai * v
		}
	}
}

// pickOuter returns the rank-1 kernel of the kernel family in use.
func pickOuter[T float]() outerKernel[T] {
	var z T
	f := family()
	if f == portableKernels {
		return portableOuter[T]
	}
	if _, ok := any(z).(float32); ok {
		return any(asmOuterS(f)).(outerKernel[T])
	}
	return any(asmOuterD(f)).(outerKernel[T])
}

// Souter computes the outer product C = x·yᵀ, or adds it to C when
// accumulate is set: C is m×n with row stride ldc, x holds m values x[i·incx]
// and y n contiguous values. It is Sgemm with k = 1, alpha = 1 and beta 0
// or 1, and gives the same results; Sgemm calls it for such products. With
// stream set, rows are written with non-temporal stores (where the CPU has
// them), which suits an output too large for the caches that is not read
// again at once; Sgemm sets it from StreamBytes. Products of at least 2¹⁶
// elements are split over up to SetThreads goroutines. It panics with a
// message starting with "gemm: " when a slice is too short.
func Souter(m, n int, x []float32, incx int, y, c []float32, ldc int, accumulate, stream bool) {
	outer(int(maxThreads.Load()), m, n, x, incx, y, c, ldc, accumulate, stream)
}

// SouterSerial is Souter on the calling goroutine alone.
func SouterSerial(m, n int, x []float32, incx int, y, c []float32, ldc int, accumulate, stream bool) {
	outer(1, m, n, x, incx, y, c, ldc, accumulate, stream)
}

// Douter is the float64 Souter.
func Douter(m, n int, x []float64, incx int, y, c []float64, ldc int, accumulate, stream bool) {
	outer(int(maxThreads.Load()), m, n, x, incx, y, c, ldc, accumulate, stream)
}

// DouterSerial is Douter on the calling goroutine alone.
func DouterSerial(m, n int, x []float64, incx int, y, c []float64, ldc int, accumulate, stream bool) {
	outer(1, m, n, x, incx, y, c, ldc, accumulate, stream)
}

func outer[T float](threads, m, n int, x []T, incx int, y, c []T, ldc int, accumulate, stream bool) {
	if m < 0 || n < 0 || incx < 1 || ldc < max(1, n) {
		panic("gemm: bad outer product dimensions")
	}
	if m == 0 || n == 0 {
		return
	}
	if len(x) < (m-1)*incx+1 || len(y) < n || len(c) < (m-1)*ldc+n {
		panic("gemm: outer product operand too short")
	}
	mode := outerStore
	switch {
	case accumulate:
		mode = outerAdd
	case stream:
		mode = outerStream
	}
	kern := pickOuter[T]()
	threads = min(threads, m, m*n/outerParallel)
	if threads < 2 {
		kern(m, n, x, incx, y, c, ldc, mode)
		return
	}
	outerSplit(kern, threads, m, n, x, incx, y, c, ldc, mode)
}

// outerSplit runs kern over threads contiguous row ranges of C, one per
// goroutine, each streaming its own part of C. (Apart from outer so that
// the goroutines' captures do not move outer's variables to the heap.)
func outerSplit[T float](kern outerKernel[T], threads, m, n int, x []T, incx int, y, c []T, ldc, mode int) {
	var wg sync.WaitGroup
	for t := 1; t < threads; t++ {
		i0, i1 := t*m/threads, (t+1)*m/threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			kern(i1-i0, n, x[i0*incx:], incx, y, c[i0*ldc:], ldc, mode)
		}()
	}
	kern(m/threads, n, x, incx, y, c, ldc, mode)
	wg.Wait()
}

// rank1 runs a GEMM of depth 1 with alpha = 1 and beta 0 or 1 through the
// outer-product kernels and reports whether it did: op(A)'s column is
// x, op(B)'s row y, which must be contiguous.
func rank1[T float](threads int, transA, transB bool, m, n int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) bool {
	if beta != 0 && beta != 1 {
		return false
	}
	incx := lda // op(A) is m×1: A's column, or A's single row when transposed
	if transA {
		incx = 1
	}
	if transB && n > 1 && ldb != 1 { // op(B) = Bᵀ reads a strided column of B
		return false
	}
	var z T
	stream := m*n*int(unsafe.Sizeof(z)) >= StreamBytes
	outer(threads, m, n, a, incx, b, c, ldc, beta == 1, stream)
	return true
}
