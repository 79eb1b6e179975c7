package tensor

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	gt "gorgonia.org/tensor"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// BLAS is a gonum BLAS implementation (blas.Float32, blas.Float64,
// blas.Complex64 and blas.Complex128) whose real matrix multiplications,
// Sgemm and Dgemm, run on Gradus's GEMM; every other routine is gonum's
// pure-Go one. Install it in gorgonia.org/tensor with UseInGorgonia, or
// pass it wherever gonum's blas interfaces are accepted.
type BLAS struct{ gonum.Implementation }

var _ gt.BLAS = BLAS{}

// UseInGorgonia makes gorgonia.org/tensor use BLAS, so its MatMul and
// other GEMM-based operations run on Gradus's GEMM. It changes global state
// in gorgonia.org/tensor; gt.WhichBLAS reports the previous choice if it
// needs to be restored.
func UseInGorgonia() { gt.Use(BLAS{}) }

// Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// matrices, as specified by gonum's blas.Float32. Invalid arguments panic
// with gonum's messages.
func (b BLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, bm []float32, ldb int, beta float32, c []float32, ldc int) {
	if !gemmArgsValid(tA, tB, m, n, k, len(a), lda, len(bm), ldb, len(c), ldc) {
		b.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc) // panics
		return
	}
	if m == 0 || n == 0 {
		return // gonum returns before looking at A, B or C
	}
	gemm.Sgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C on row-major float64
// matrices, as specified by gonum's blas.Float64. Invalid arguments panic
// with gonum's messages.
func (b BLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, bm []float64, ldb int, beta float64, c []float64, ldc int) {
	if !gemmArgsValid(tA, tB, m, n, k, len(a), lda, len(bm), ldb, len(c), ldc) {
		b.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc) // panics
		return
	}
	if m == 0 || n == 0 {
		return // gonum returns before looking at A, B or C
	}
	gemm.Dgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, bm, ldb, beta, c, ldc)
}

// gemmArgsValid applies gonum's argument checks for ?gemm, so that invalid
// calls can be handed to gonum to panic with its standard messages.
// An empty C (m or n zero) skips the length checks, as in gonum.
func gemmArgsValid(tA, tB blas.Transpose, m, n, k, lenA, lda, lenB, ldb, lenC, ldc int) bool {
	okT := func(t blas.Transpose) bool { return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans }
	if !okT(tA) || !okT(tB) || m < 0 || n < 0 || k < 0 {
		return false
	}
	// Stored shapes (rows × columns) of A and B.
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	if lda < max(1, ac) || ldb < max(1, bc) || ldc < max(1, n) {
		return false
	}
	if m == 0 || n == 0 {
		return true
	}
	fits := func(rows, cols, length, ld int) bool { return rows == 0 || cols == 0 || length >= (rows-1)*ld+cols }
	return fits(ar, ac, lenA, lda) && fits(br, bc, lenB, ldb) && fits(m, n, lenC, ldc)
}
