// Package gemm implements single- and double-precision general matrix
// multiplication, C = alpha·op(A)·op(B) + beta·C, on row-major matrices, in
// pure Go plus Go assembly (no cgo).
//
// The design follows Goto/BLIS. The k dimension is split into kc-deep slabs
// and n into nc-wide blocks; for each slab op(B) is packed into NR-column
// micro-panels and, for every mc-row block, op(A) is packed into MR-row
// micro-panels. Packing performs the transposes and zero-pads ragged edges,
// so the register-blocked micro-kernel always computes a full MR×NR tile
// (6×16 for float32 and 6×8 for float64 with AVX2+FMA on amd64, keeping
// twelve YMM accumulators live). Interior tiles are written straight to C
// with alpha and beta applied in the kernel; edge tiles go through a small
// scratch tile. A portable, register-blocked 4×4 pure-Go kernel is used when
// AVX2/FMA are unavailable, on other architectures, or when forced with
// UsePortable.
//
// Large products are split over up to SetThreads goroutines by a fixed
// partition of the larger of m and n into contiguous tile-aligned chunks.
// Every element of C is computed by exactly one goroutine with the same
// summation order whatever the partition, so results are bit-for-bit
// reproducible. Small products run on the calling goroutine. Packing
// buffers come from a sync.Pool, so steady-state calls do not allocate.
package gemm
