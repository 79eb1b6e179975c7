//go:build linux && (amd64 || arm64)

package cuda

import "fmt"

// triAPI holds cuBLAS's triangular solve and product (NVIDIA, 2025,
// cuBLAS Library User Guide, cublas<t>trsm and cublas<t>trmm):
//
//	cublasStatus_t cublasStrsm_v2(cublasHandle_t handle, cublasSideMode_t side,
//	    cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
//	    int m, int n, const float *alpha, const float *A, int lda, float *B, int ldb)
//	cublasStatus_t cublasStrmm_v2(cublasHandle_t handle, cublasSideMode_t side,
//	    cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
//	    int m, int n, const float *alpha, const float *A, int lda,
//	    const float *B, int ldb, float *C, int ldc)
//
// and the same with double for D. trmm is out of place in the v2 API.
type triAPI struct {
	strsm func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32) int32
	dtrsm func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float64, a uint64, lda int32, b uint64, ldb int32) int32
	strmm func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32, c uint64, ldc int32) int32
	dtrmm func(h uintptr, side, uplo, trans, diag, m, n int32, alpha *float64, a uint64, lda int32, b uint64, ldb int32, c uint64, ldc int32) int32
}

// cublasSideMode_t, cublasFillMode_t and cublasDiagType_t values.
const (
	sideRight    = 1 // CUBLAS_SIDE_RIGHT (LEFT is 0)
	fillLower    = 0 // CUBLAS_FILL_MODE_LOWER
	fillUpper    = 1 // CUBLAS_FILL_MODE_UPPER
	diagNonUnit  = 0 // CUBLAS_DIAG_NON_UNIT
	maxDimension = 1<<31 - 1
)

// colMajorTri maps a row-major op(A)·X with the n×n triangular A and the
// n×k X onto cuBLAS: a row-major matrix read column-major is its
// transpose, so the product is computed as Xᵀ·op(A)ᵀ, A multiplying from
// the right (side RIGHT, m = k, n = n, leading dimensions n and k), and a
// row-major lower triangle is a column-major upper one. op(A)ᵀ is the
// column-major A itself without trans, its transpose with it.
func colMajorTri(lower, trans bool) (uplo, op int32) {
	uplo, op = fillLower, opN
	if lower {
		uplo = fillUpper
	}
	if trans {
		op = opT
	}
	return uplo, op
}

// checkTri checks the sizes of a triangular operation on row-major
// matrices: a n×n, each of xs n×k.
func checkTri(call string, dt DType, n, k int, a *Buffer, xs ...*Buffer) error {
	if n <= 0 || k <= 0 || n > maxDimension || k > maxDimension || n*n > maxDimension || n*k > maxDimension {
		return fmt.Errorf("cuda: %s %d×%d with %d columns: sizes must be positive and within cuBLAS's 32-bit sizes", call, n, n, k)
	}
	if a == nil || a.size < n*n*dt.Size() {
		return fmt.Errorf("cuda: %s: the %d×%d matrix needs %d bytes", call, n, n, n*n*dt.Size())
	}
	for _, x := range xs {
		if x == nil || x.size < n*k*dt.Size() {
			return fmt.Errorf("cuda: %s: the %d×%d operand needs %d bytes", call, n, k, n*k*dt.Size())
		}
	}
	return nil
}

// Trsm overwrites the row-major n×k matrix x with the solution X of
// op(A)·X = x, A being the lower (or upper) triangle of the row-major n×n
// a, op(A) A or Aᵀ; only that triangle of a is read (cublas<t>trsm). A
// zero on the diagonal gives infinities or NaNs, as on the CPU.
func (b *BLAS) Trsm(dt DType, lower, trans bool, n, k int, a, x *Buffer) error {
	if err := checkTri("Trsm", dt, n, k, a, x); err != nil {
		return err
	}
	uplo, op := colMajorTri(lower, trans)
	return b.d.do(func() error {
		var s int32
		if dt == F64 {
			one := 1.0
			s = b.api.tri.dtrsm(b.handle, sideRight, uplo, op, diagNonUnit, int32(k), int32(n), &one, a.ptr, int32(n), x.ptr, int32(k))
		} else {
			one := float32(1)
			s = b.api.tri.strsm(b.handle, sideRight, uplo, op, diagNonUnit, int32(k), int32(n), &one, a.ptr, int32(n), x.ptr, int32(k))
		}
		if s != 0 {
			return blasError("cublasTrsm", s)
		}
		return nil
	})
}

// Trmm sets the row-major n×k c to op(A)·x, with A and op as for Trsm
// (cublas<t>trmm, out of place: c must not overlap x).
func (b *BLAS) Trmm(dt DType, lower, trans bool, n, k int, a, x, c *Buffer) error {
	if err := checkTri("Trmm", dt, n, k, a, x, c); err != nil {
		return err
	}
	uplo, op := colMajorTri(lower, trans)
	return b.d.do(func() error {
		var s int32
		if dt == F64 {
			one := 1.0
			s = b.api.tri.dtrmm(b.handle, sideRight, uplo, op, diagNonUnit, int32(k), int32(n), &one, a.ptr, int32(n), x.ptr, int32(k), c.ptr, int32(k))
		} else {
			one := float32(1)
			s = b.api.tri.strmm(b.handle, sideRight, uplo, op, diagNonUnit, int32(k), int32(n), &one, a.ptr, int32(n), x.ptr, int32(k), c.ptr, int32(k))
		}
		if s != 0 {
			return blasError("cublasTrmm", s)
		}
		return nil
	})
}
