// Package gemm implements single- and double-precision general matrix
// multiplication, C = alpha·op(A)·op(B) + beta·C, on row-major matrices, in
// pure Go plus Go assembly (no cgo).
//
// The design follows Goto/BLIS. The k dimension is split into kc-deep slabs
// and n into nc-wide blocks; for each slab op(B) is packed into NR-column
// micro-panels and, for every mc-row block, op(A) is packed into MR-row
// micro-panels. Packing performs the transposes and zero-pads ragged edges,
// so the register-blocked micro-kernel always computes a full MR×NR tile.
// On amd64 the kernel is chosen at run time: 6×32 for float32 and 6×16 for
// float64 in twelve ZMM accumulators where the CPU has AVX-512F and the
// operating system saves the ZMM state, otherwise 6×16 and 6×8 in twelve YMM
// accumulators with AVX2+FMA; arm64 uses NEON kernels (8×8 and 8×4).
// Interior tiles are written straight to C with alpha and beta applied in the
// kernel; edge tiles go through a small scratch tile. A portable,
// register-blocked 4×4 pure-Go kernel is used when none of these is
// available or when forced with UsePortable; UseNarrow forces the AVX2
// kernels on an AVX-512 machine, and KernelName says which kernel runs.
//
// Products of at least 96³ multiply-adds are split over up to SetThreads
// goroutines. The work is cut into a fixed list of tasks that depends only
// on the shapes and the thread count (groups of B column panels to pack into
// a buffer shared by all goroutines, then contiguous mr-aligned row ranges to
// multiply against it, or contiguous column ranges when there are few rows).
// The caller and up to SetThreads-1 helper goroutines claim tasks in order
// from an atomic counter, so one that is scheduled late on a busy machine
// just does less, and every element of C is computed with the same blocking
// and summation order whatever the thread count or timing: on a given
// kernel, results are bit-for-bit reproducible. Helpers are started once (at most GOMAXPROCS-1)
// and poll for work for a short while after each task before parking, as
// BLAS worker threads do, because waking a parked goroutine per call is too
// slow to pay off. Smaller products run on the calling goroutine. Packing buffers come from a sync.Pool, so
// steady-state single-goroutine calls do not allocate.
package gemm
