package tensor

import (
	"math"

	"github.com/chewxy/math32"
)

// cholBlock is the order below which the Cholesky factorisation is done
// unblocked; syrkBlock the order below which a symmetric rank-k update is
// one square GEMM (computing the block's upper half needlessly is cheaper
// than more, smaller GEMM calls).
const (
	cholBlock = 32
	syrkBlock = 128
)

// Cholesky returns the lower triangular L with L·Lᵀ = A for a symmetric
// positive definite a of shape (..., n, n), factoring each matrix of a
// batch. Only the lower triangle of a is read. The factorisation recurses
// on halves of the matrix so that nearly all of its work is done by GEMM.
//
// When a pivot is not positive (or is NaN or infinite) it returns a
// *NotPositiveDefiniteError naming the matrix of the batch, the pivot and
// its value; errors.Is(err, ErrNotPositiveDefinite) holds. It panics with a
// *Error when a is not a square matrix or batch of them.
func Cholesky(a *Tensor) (*Tensor, error) {
	return cholesky("Cholesky", nil, a)
}

// CholeskyTo is Cholesky writing L into dst (nil allocates), so that loops
// refactoring a matrix of fixed size need not allocate. dst must be
// contiguous with a's shape and dtype; it may be a itself, which is then
// overwritten. On error dst holds partial results.
func CholeskyTo(dst, a *Tensor) (*Tensor, error) {
	return cholesky("CholeskyTo", dst, a)
}

func cholesky(op string, dst, a *Tensor) (*Tensor, error) {
	n := checkSquare(op, a)
	fresh := dst == nil
	dst = prepareDst(op, dst, a.dtype, a.shape, a)
	if !dst.IsContiguous() {
		Fail(op, "destination %s is not contiguous", describe(dst))
	}
	if dst.Size() == 0 {
		return dst, nil
	}
	src := a
	if !fresh && sharesStorage(dst, a) && (dst.offset != a.offset || !a.IsContiguous()) {
		src = a.Clone() // overlapping but not the same matrix: read a copy
	}
	if dst.dev != nil || src.dev != nil {
		return gpuCholesky(op, dst, src, n)
	}
	offs := matrixOffsets(src, src.shape[:len(src.shape)-2])
	var err *NotPositiveDefiniteError
	if a.dtype == Float32 {
		err = choleskyBatch[float32](op, src, offs, dst, n, !fresh)
	} else {
		err = choleskyBatch[float64](op, src, offs, dst, n, !fresh)
	}
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// choleskyBatch factors each matrix of a (at offs) into out. The strict
// upper triangle of out is zeroed when zeroUpper is set (a fresh out is
// already zero there).
func choleskyBatch[T Float](op string, a *Tensor, offs []int, out *Tensor, n int, zeroUpper bool) *NotPositiveDefiniteError {
	A, O := storage[T](a), storage[T](out)[out.offset:]
	sr, sc := a.strides[len(a.strides)-2], a.strides[len(a.strides)-1]
	// Small matrices are factored in parallel over the batch; a large one
	// is parallel inside GEMM. Each chunk stops at its first failure and
	// the lowest failing index is reported.
	fails := make([]*NotPositiveDefiniteError, len(offs))
	linalgParallel(len(offs), max(1, gemmParallelWork/(n*n*n)), func(b0, b1 int) {
		for bi := b0; bi < b1; bi++ {
			off := offs[bi]
			l := O[bi*n*n : (bi+1)*n*n]
			for i := 0; i < n; i++ {
				row := l[i*n : i*n+n]
				if sc == 1 {
					copy(row[:i+1], A[off+i*sr:off+i*sr+i+1])
				} else {
					for j := 0; j <= i; j++ {
						row[j] = A[off+i*sr+j*sc]
					}
				}
				if zeroUpper {
					clear(row[i+1:])
				}
			}
			if p, v, ok := potrf(n, l, n); !ok {
				fails[bi] = &NotPositiveDefiniteError{Op: op, Pivot: p, Value: float64(v), Batch: bi}
				return
			}
		}
	})
	for _, f := range fails {
		if f != nil {
			return f
		}
	}
	return nil
}

// potrf factors the lower triangle of the n×n matrix a in place as L·Lᵀ.
// On failure it returns the pivot's index and value and ok false. Entries
// above the diagonal are not read, and zeros there stay zero.
func potrf[T Float](n int, a []T, lda int) (pivot int, value T, ok bool) {
	if n <= cholBlock {
		return potf2(n, a, lda)
	}
	n1 := n / 2
	n2 := n - n1
	if p, v, ok := potrf(n1, a, lda); !ok {
		return p, v, false
	}
	a21 := a[n1*lda:]
	trsmRightLowerT(n2, n1, a, lda, a21, lda) // L21 = A21·L11⁻ᵀ
	syrkLower(n2, n1, a21, lda, a[n1*lda+n1:], lda)
	if p, v, ok := potrf(n2, a[n1*lda+n1:], lda); !ok {
		return p + n1, v, false
	}
	return 0, 0, true
}

// potf2 is the unblocked Cholesky–Crout factorisation; row-major storage
// makes each entry a dot product of two contiguous row prefixes. The
// entries below a pivot are computed four rows at a time, so that each
// element of the pivot's row, loaded once, serves four independent sums:
// a call of the vector dot product for every entry (at most cholBlock
// long) cost more than its arithmetic, 0.34 multiply-adds per ns at order
// 31 on the Zen 3.
func potf2[T Float](n int, a []T, lda int) (pivot int, value T, ok bool) {
	for j := 0; j < n; j++ {
		rj := a[j*lda : j*lda+j]
		d := a[j*lda+j]
		for _, v := range rj {
			d -= v * v
		}
		if !(d > 0) || d > maxFinite[T]() {
			return j, d, false
		}
		ljj := sqrtT(d)
		a[j*lda+j] = ljj
		i := j + 1
		for ; i+4 <= n; i += 4 {
			r0 := a[i*lda : i*lda+j+1]
			r1 := a[(i+1)*lda : (i+1)*lda+j+1]
			r2 := a[(i+2)*lda : (i+2)*lda+j+1]
			r3 := a[(i+3)*lda : (i+3)*lda+j+1]
			s0, s1, s2, s3 := r0[j], r1[j], r2[j], r3[j]
			x0, x1, x2, x3 := r0[:len(rj)], r1[:len(rj)], r2[:len(rj)], r3[:len(rj)]
			for p, v := range rj {
				s0 -= v * x0[p]
				s1 -= v * x1[p]
				s2 -= v * x2[p]
				s3 -= v * x3[p]
			}
			r0[j], r1[j], r2[j], r3[j] = s0/ljj, s1/ljj, s2/ljj, s3/ljj
		}
		for ; i < n; i++ {
			ri := a[i*lda : i*lda+j+1]
			s, x := ri[j], ri[:len(rj)]
			for p, v := range rj {
				s -= v * x[p]
			}
			ri[j] = s / ljj
		}
	}
	return 0, 0, true
}

// syrkLower updates the lower triangle of the n×n matrix c by c −= a·aᵀ for
// the n×k matrix a, leaving zeros above the diagonal. Blocks of rows of
// equal work go to the goroutines (splitTriangle): the rectangle left of
// a block's diagonal square is one product, the square the serial
// recursion. Each entry is one product's sum over the k columns either
// way, so the split does not change the result.
func syrkLower[T Float](n, k int, a []T, lda int, c []T, ldc int) {
	splitTriangle(n, n*n*k/2, func(r0, r1 int) {
		if r0 > 0 {
			gemmSerialT(false, true, r1-r0, r0, k, -1, a[r0*lda:], lda, a, lda, 1, c[r0*ldc:], ldc)
		}
		syrkLowerSerial(r1-r0, k, a[r0*lda:], lda, c[r0*ldc+r0:], ldc)
	})
}

// syrkLowerSerial is syrkLower on the calling goroutine.
func syrkLowerSerial[T Float](n, k int, a []T, lda int, c []T, ldc int) {
	if n == 0 || k == 0 {
		return
	}
	if n <= syrkBlock {
		gemmSerialT(false, true, n, n, k, -1, a, lda, a, lda, 1, c, ldc)
		// Restore the zeros above the diagonal that the square update
		// overwrote; nothing else writes there.
		for i := 0; i < n-1; i++ {
			clear(c[i*ldc+i+1 : i*ldc+n])
		}
		return
	}
	n1 := n / 2
	n2 := n - n1
	syrkLowerSerial(n1, k, a, lda, c, ldc)
	gemmSerialT(false, true, n2, n1, k, -1, a[n1*lda:], lda, a, lda, 1, c[n1*ldc:], ldc)
	syrkLowerSerial(n2, k, a[n1*lda:], lda, c[n1*ldc+n1:], ldc)
}

// maxFinite returns the largest finite value of T.
func maxFinite[T Float]() T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(math32.MaxFloat32)
	}
	big := math.MaxFloat64
	return T(big)
}

// LogDetChol returns log det A = 2·Σ log Lᵢᵢ given the Cholesky factor l of
// A, with shape (..., n, n); the result has the batch shape (a scalar for
// one matrix). Only the diagonal of l is read. It panics with a *Error when
// l is not square.
func LogDetChol(l *Tensor) *Tensor {
	n := checkSquare("LogDetChol", l)
	if l.dev != nil {
		return gpuLogDetChol(l)
	}
	batch := l.shape[:len(l.shape)-2]
	out := New(l.dtype, batch...)
	offs := matrixOffsets(l, batch)
	step := l.strides[len(l.strides)-2] + l.strides[len(l.strides)-1]
	if l.dtype == Float32 {
		logDetDiag[float32](l, offs, step, n, out)
	} else {
		logDetDiag[float64](l, offs, step, n, out)
	}
	return out
}

func logDetDiag[T Float](l *Tensor, offs []int, step, n int, out *Tensor) {
	L, O := storage[T](l), storage[T](out)
	for bi, off := range offs {
		var s T
		for i := 0; i < n; i++ {
			s += logT(L[off+i*step])
		}
		O[bi] = 2 * s
	}
}
