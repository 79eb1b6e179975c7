package gemm

import "fmt"

// Packed is op(B) of a product packed once for several products that
// share it, such as the recurrent weight of every step of a sequence:
// SgemmPacked and DgemmPacked then skip packing B, which for a product
// of few rows costs about as much as the multiply-adds (32×128·128×512
// float32 on the Zen 5: packing 6 µs of a 28 µs product, and 12 µs of 32
// for the transposed 32×512·(128×512)ᵀ). It holds B in the layout of the
// kernels chosen when it was packed, depth block after depth block, each
// block all of op(B)'s columns in micro-panels. The zero value is empty;
// packing again reuses its memory.
type Packed[T float] struct {
	p    *params[T]
	k, n int
	npad int // n rounded up to the kernel's panel width
	data []T
}

// Dims returns the depth k and the column count n of the packed op(B).
func (pk *Packed[T]) Dims() (k, n int) { return pk.k, pk.n }

// PackS packs the k×n matrix op(B) of float32 B (row stride ldb, read
// transposed when transB) into pk for SgemmPacked. k must be at least 2:
// a rank-1 product packs nothing. It panics with a message starting with
// "gemm: " on invalid arguments.
func PackS(pk *Packed[float32], transB bool, k, n int, b []float32, ldb int) {
	pack(pk, pick(n, portableParamsS, asmParamsS, wideParamsS), transB, k, n, b, ldb)
}

// PackD is PackS for float64, for DgemmPacked.
func PackD(pk *Packed[float64], transB bool, k, n int, b []float64, ldb int) {
	pack(pk, pick(n, portableParamsD, asmParamsD, wideParamsD), transB, k, n, b, ldb)
}

func pack[T float](pk *Packed[T], p *params[T], transB bool, k, n int, b []T, ldb int) {
	checkArgs(false, transB, 0, n, k, 0, max(1, k), len(b), ldb, 0, max(1, n))
	if k < 2 {
		panic(fmt.Sprintf("gemm: packing a depth of %d; a packed product needs k >= 2", k))
	}
	pk.p, pk.k, pk.n = p, k, n
	pk.npad = roundUp(n, p.nr)
	pk.data = grow(pk.data, pk.npad*k)
	for pc := 0; pc < k; pc += p.kc {
		packB(pk.data[pc*pk.npad:], b, ldb, transB, pc, min(p.kc, k-pc), 0, n, p.nr)
	}
}

// SgemmPacked computes C = alpha·op(A)·op(B) + beta·C like Sgemm, for the
// op(B) packed in pk (k×n): op(A) is m×k. Its results equal Sgemm's on
// the B that was packed, bit for bit, as long as the kernels have not
// been switched since (UsePortable, UseNarrow). It panics with a message
// starting with "gemm: " on invalid arguments or an empty pk.
func SgemmPacked(transA bool, m int, alpha float32, a []float32, lda int, pk *Packed[float32], beta float32, c []float32, ldc int) {
	gemmPacked(transA, m, alpha, a, lda, pk, beta, c, ldc, &poolS)
}

// DgemmPacked is SgemmPacked for float64.
func DgemmPacked(transA bool, m int, alpha float64, a []float64, lda int, pk *Packed[float64], beta float64, c []float64, ldc int) {
	gemmPacked(transA, m, alpha, a, lda, pk, beta, c, ldc, &poolD)
}

func gemmPacked[T float](transA bool, m int, alpha T, a []T, lda int, pk *Packed[T], beta T, c []T, ldc int, pool *wsPool[T]) {
	if pk.p == nil {
		panic("gemm: product with an empty Packed")
	}
	k, n := pk.k, pk.n
	if m < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d", m))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	checkMat("a", "lda", ar, ac, len(a), lda)
	checkMat("c", "ldc", m, n, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	jb := job[T]{p: pk.p, transA: transA, k: k, alpha: alpha, beta: beta, a: a, lda: lda, c: c, ldc: ldc,
		packed: pk.data, npad: pk.npad}
	execute(jb, pool, m, n, int(maxThreads.Load()))
}
