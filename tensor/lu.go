package tensor

import (
	"errors"
	"fmt"
	"math"
)

// ErrNotFinite is returned (wrapped) when a factorisation is given a matrix
// with NaN or infinite entries, whose result would be meaningless.
var ErrNotFinite = errors.New("matrix has NaN or infinite entries")

// luFactor holds the LU factorisations P·A = L·U of a batch of n×n
// matrices, stored contiguously; piv[b][i] is the row swapped with row i at
// step i, zero[b] the first exactly zero pivot of matrix b or -1.
type luFactor struct {
	lu   *Tensor
	n    int
	piv  [][]int
	zero []int
}

// factorLU copies and factors every matrix of a (..., n, n). It returns an
// error wrapping ErrNotFinite when an entry is NaN or infinite.
func factorLU(op string, a *Tensor) (*luFactor, error) {
	n := checkSquare(op, a)
	lu := a.Clone()
	nb := shapeSize(a.shape[:len(a.shape)-2])
	f := &luFactor{lu: lu, n: n, piv: make([][]int, nb), zero: make([]int, nb)}
	var bad int
	if a.dtype == Float32 {
		bad = factorLUBatch[float32](f)
	} else {
		bad = factorLUBatch[float64](f)
	}
	if bad >= 0 {
		return nil, fmt.Errorf("tensor.%s: matrix %d: %w", op, bad, ErrNotFinite)
	}
	return f, nil
}

// factorLUBatch factors each matrix in place and returns the index of the
// first matrix with a non-finite entry (left unfactored), or -1.
func factorLUBatch[T Float](f *luFactor) int {
	n := f.n
	A := storage[T](f.lu)
	big := maxFinite[T]()
	for bi := range f.piv {
		for _, v := range A[bi*n*n : (bi+1)*n*n] {
			if !(v >= -big && v <= big) {
				return bi
			}
		}
	}
	linalgParallel(len(f.piv), max(1, gemmParallelWork/max(1, n*n*n)), func(b0, b1 int) {
		for bi := b0; bi < b1; bi++ {
			f.piv[bi] = make([]int, n)
			f.zero[bi] = getrf(n, A[bi*n*n:(bi+1)*n*n], n, f.piv[bi])
		}
	})
	return -1
}

// getrf factors the n×n matrix a in place as P·A = L·U with partial
// pivoting (L unit lower, U upper, both stored in a), recording in piv[i]
// the row swapped with row i. It returns the index of the first exactly
// zero pivot, or -1; the factorisation still completes.
func getrf[T Float](n int, a []T, lda int, piv []int) int {
	return luRec(n, a, lda, 0, n, piv)
}

// luLeaf is the panel width below which LU columns are eliminated one by
// one.
const luLeaf = 16

// luRec factors the columns [c, c+w) of rows [c, n), to the left of which
// the matrix is already factored, by halving the columns: the left half is
// factored, the right half updated by a triangular solve and a GEMM, then
// factored (Toledo's recursive LU, which keeps almost all the work in
// large GEMM calls). Row interchanges are applied to whole rows at once:
// in row-major storage that is cheap, and it permutes both L to the left
// and the columns still to be updated to the right, as LAPACK's deferred
// swaps would. It returns the first exactly zero pivot, or -1.
func luRec[T Float](n int, a []T, lda int, c, w int, piv []int) int {
	if w <= luLeaf {
		return luPanel(n, a, lda, c, w, piv)
	}
	w1 := w / 2
	w2 := w - w1
	zero := luRec(n, a, lda, c, w1, piv)
	// U12 = L11⁻¹·A12, then A22 −= L21·U12.
	trsmLeft(true, false, true, w1, w2, a[c*lda+c:], lda, a[c*lda+c+w1:], lda)
	if r := n - c - w1; r > 0 {
		gemmT(false, false, r, w2, w1, -1, a[(c+w1)*lda+c:], lda, a[c*lda+c+w1:], lda, 1, a[(c+w1)*lda+c+w1:], lda)
	}
	if z := luRec(n, a, lda, c+w1, w2, piv); zero < 0 {
		zero = z
	}
	return zero
}

// luPanel eliminates the columns [c, c+w) of rows [c, n) one at a time.
func luPanel[T Float](n int, a []T, lda int, c, w int, piv []int) int {
	zero := -1
	for jj := c; jj < c+w; jj++ {
		p, best := jj, absT(a[jj*lda+jj])
		for i := jj + 1; i < n; i++ {
			if v := absT(a[i*lda+jj]); v > best {
				p, best = i, v
			}
		}
		piv[jj] = p
		if p != jj {
			rp, rj := a[p*lda:p*lda+n], a[jj*lda:jj*lda+n]
			for k := range rj {
				rp[k], rj[k] = rj[k], rp[k]
			}
		}
		d := a[jj*lda+jj]
		if d == 0 {
			if zero < 0 {
				zero = jj
			}
			continue
		}
		urow := a[jj*lda+jj+1 : jj*lda+c+w]
		for i := jj + 1; i < n; i++ {
			row := a[i*lda+jj : i*lda+c+w]
			l := row[0] / d
			row[0] = l
			if l != 0 {
				axpy(-l, urow, row[1:])
			}
		}
	}
	return zero
}

// Solve returns the solution X of A·X = B for a square a of shape
// (..., n, n) and b of shape (..., n, k) (or 1-D of length n), by LU
// factorisation with partial pivoting; batch dimensions broadcast. When a
// matrix is exactly singular (a pivot is exactly zero) it returns an error
// wrapping ErrSingular that names the pivot; a matrix with NaN or infinite
// entries gives an error wrapping ErrNotFinite. Nearly singular matrices
// give inaccurate results without an error. Shape or dtype misuse panics
// with a *Error.
func Solve(a, b *Tensor) (*Tensor, error) {
	return solve("Solve", nil, a, b)
}

// SolveTo is Solve writing X into dst (nil allocates). dst must be
// contiguous with the result's shape and dtype and must not overlap a; it
// may be b itself. On error dst holds partial results.
func SolveTo(dst, a, b *Tensor) (*Tensor, error) {
	return solve("SolveTo", dst, a, b)
}

func solve(op string, dst, a, b *Tensor) (*Tensor, error) {
	x, n, k, batch := solveSetupTo(op, dst, a, b)
	if x.dev != nil || a.dev != nil {
		return gpuSolve(op, x, a, n, k, batch)
	}
	f, err := factorLU(op, a)
	if err != nil {
		return nil, err
	}
	for bi, z := range f.zero {
		if z >= 0 {
			return nil, fmt.Errorf("tensor.%s: matrix %d: %w: pivot %d is zero", op, bi, ErrSingular, z)
		}
	}
	if x.Size() == 0 {
		return x, nil
	}
	// Offsets of each batch entry's factors; a's batch may be broadcast.
	lu := f.lu
	offs := matrixOffsets(lu, batch)
	if a.dtype == Float32 {
		luSolveBatch[float32](f, offs, x, n, k)
	} else {
		luSolveBatch[float64](f, offs, x, n, k)
	}
	return x, nil
}

func luSolveBatch[T Float](f *luFactor, offs []int, x *Tensor, n, k int) {
	A, X := storage[T](f.lu), storage[T](x)
	linalgParallel(len(offs), max(1, triSplitWork/(n*n*k)), func(b0, b1 int) {
		for bi := b0; bi < b1; bi++ {
			luSolveOne(A, f.piv[offs[bi]/(n*n)], offs[bi], X[bi*n*k:(bi+1)*n*k], n, k)
		}
	})
}

// luSolveOne solves one system in place given its factors at off.
func luSolveOne[T Float](A []T, piv []int, off int, xb []T, n, k int) {
	for i, p := range piv {
		if p != i {
			ri, rp := xb[i*k:i*k+k], xb[p*k:p*k+k]
			for c := range ri {
				ri[c], rp[c] = rp[c], ri[c]
			}
		}
	}
	trsmLeft(true, false, true, n, k, A[off:], n, xb, k)
	trsmLeft(false, false, false, n, k, A[off:], n, xb, k)
}

// Inverse returns A⁻¹ for a square a of shape (..., n, n), computed by
// Solve with the identity. Errors and panics are Solve's.
func Inverse(a *Tensor) (*Tensor, error) {
	n := checkSquare("Inverse", a)
	return solve("Inverse", nil, a, Eye(a.dtype, n).To(a.Device()))
}

// InverseTo is Inverse writing A⁻¹ into dst (nil allocates), with dst as
// for SolveTo (it must not overlap a).
func InverseTo(dst, a *Tensor) (*Tensor, error) {
	n := checkSquare("InverseTo", a)
	return solve("InverseTo", dst, a, Eye(a.dtype, n).To(a.Device()))
}

// Det returns the determinant of each matrix of a (..., n, n), with the
// batch shape (a scalar for one matrix), from its LU factorisation. A
// singular matrix has determinant 0 without an error; the product may
// overflow for large matrices, where SlogDet does not. It returns an error
// wrapping ErrNotFinite when a has NaN or infinite entries and panics with
// a *Error when a is not square.
func Det(a *Tensor) (*Tensor, error) {
	if a.dev != nil {
		det, _, _, err := gpuDet("Det", a, false)
		return det, err
	}
	f, err := factorLU("Det", a)
	if err != nil {
		return nil, err
	}
	det := New(a.dtype, a.shape[:len(a.shape)-2]...)
	if a.dtype == Float32 {
		detBatch[float32](f, det)
	} else {
		detBatch[float64](f, det)
	}
	return det, nil
}

// detBatch multiplies out U's diagonal, which is exact for small integer
// matrices where sign·exp(logAbs) would not be.
func detBatch[T Float](f *luFactor, det *Tensor) {
	A, D := storage[T](f.lu), storage[T](det)
	n := f.n
	for bi, piv := range f.piv {
		d := T(1)
		for i := 0; i < n; i++ {
			d *= A[bi*n*n+i*n+i]
			if piv[i] != i {
				d = -d
			}
		}
		D[bi] = d
	}
}

// SlogDet returns the sign (−1, 0 or +1) and the natural logarithm of the
// absolute value of the determinant of each matrix of a (..., n, n), each
// with the batch shape; unlike Det it does not overflow. A singular matrix
// has sign 0 and logAbs −Inf. Errors and panics are as for Det.
func SlogDet(a *Tensor) (sign, logAbs *Tensor, err error) {
	return slogDet("SlogDet", a)
}

func slogDet(op string, a *Tensor) (sign, logAbs *Tensor, err error) {
	if a.dev != nil {
		_, sign, logAbs, err = gpuDet(op, a, true)
		return sign, logAbs, err
	}
	f, err := factorLU(op, a)
	if err != nil {
		return nil, nil, err
	}
	batch := a.shape[:len(a.shape)-2]
	sign, logAbs = New(a.dtype, batch...), New(a.dtype, batch...)
	if a.dtype == Float32 {
		slogDetBatch[float32](f, sign, logAbs)
	} else {
		slogDetBatch[float64](f, sign, logAbs)
	}
	return sign, logAbs, nil
}

func slogDetBatch[T Float](f *luFactor, sign, logAbs *Tensor) {
	A, S, L := storage[T](f.lu), storage[T](sign), storage[T](logAbs)
	n := f.n
	for bi, piv := range f.piv {
		if f.zero[bi] >= 0 {
			S[bi], L[bi] = 0, T(math.Inf(-1))
			continue
		}
		s, l := T(1), T(0)
		for i := 0; i < n; i++ {
			u := A[bi*n*n+i*n+i]
			if u < 0 {
				s = -s
			}
			if piv[i] != i {
				s = -s
			}
			l += logT(absT(u))
		}
		S[bi], L[bi] = s, l
	}
}
