package tensor

import (
	"fmt"
	"runtime"
	"sort"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// svdSplitWork is roughly the m·n·k summed over a chunk of a batch below
// which spreading the chunk over goroutines costs more than it saves.
const svdSplitWork = 1 << 14

// svdQRRatio is the aspect ratio m/n from which a tall matrix is first
// reduced to its n×n triangular factor R by QR (LAPACK's crossover): the
// bidiagonal reduction of R is much cheaper than that of A.
const svdQRRatio = 5.0 / 3

// svdApartMin is the order from which an SVD on two cores applies its
// left and right reflectors on two goroutines side by side (with more
// cores each is split between all of them, block by block).
const svdApartMin = 128

// SVD returns the thin singular value decomposition A = U·diag(s)·Vᵀ of
// each matrix of a (..., m, n): with k = min(m, n), u (..., m, k) and
// v (..., n, k) have orthonormal columns and s (..., k) holds the singular
// values in descending order, all non-negative. Note that v holds V, not
// NumPy's Vᵀ. Each pair of singular vectors (uᵢ, vᵢ) is signed so that the
// entry of largest magnitude of vᵢ is positive (package pca's convention,
// which also keeps the factors continuous in A); within the span of a
// repeated singular value they are determined only up to a rotation.
//
// The method is LAPACK's gesdd: a tall matrix (m ≥ 5n/3) is first
// reduced to its triangular factor by a blocked QR; the matrix is reduced
// to upper bidiagonal form by Householder reflections, in panels whose
// trailing updates are GEMMs (from 97 columns on); the bidiagonal matrix
// is diagonalised by divide and conquer (from order 25; below it by
// implicitly shifted QR sweeps, Golub–Kahan–Reinsch); and the reflectors
// are applied to the singular vectors in the compact WY form (GEMM). The
// singular values are accurate to about ε·‖A‖, as LAPACK's; unlike an
// eigendecomposition of AᵀA, nothing squares the condition number.
//
// SVD returns an error wrapping ErrNotFinite when an entry of a is NaN or
// infinite, and an error if the QR iteration does not converge. It panics
// with a *Error when a has fewer than two dimensions.
func SVD(a *Tensor) (u, s, v *Tensor, err error) {
	if len(a.shape) < 2 {
		Fail("SVD", "need a matrix or a batch of them (..., m, n), got %s", describe(a))
	}
	m, n := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	k := min(m, n)
	batch := a.shape[:len(a.shape)-2]
	u = New(a.dtype, append(cloneInts(batch), m, k)...)
	s = New(a.dtype, append(cloneInts(batch), k)...)
	v = New(a.dtype, append(cloneInts(batch), n, k)...)
	if a.dev != nil && a.Size() == 0 {
		return u.To(a.Device()), s.To(a.Device()), v.To(a.Device()), nil
	}
	if a.Size() == 0 {
		return u, s, v, nil
	}
	if a.dev != nil {
		return gpuSVD(a, m, n)
	}
	offs := matrixOffsets(a, batch)
	if a.dtype == Float32 {
		err = svdBatch[float32](a, offs, m, n, u, s, v)
	} else {
		err = svdBatch[float64](a, offs, m, n, u, s, v)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return u, s, v, nil
}

func svdBatch[T Float](a *Tensor, offs []int, m, n int, u, s, v *Tensor) error {
	k := min(m, n)
	U, S, V := storage[T](u), storage[T](s), storage[T](v)
	errs := make([]error, len(offs))
	at := Transpose(a)
	linalgParallel(len(offs), max(1, svdSplitWork/(m*n*k+16)), func(b0, b1 int) {
		w := workGet[T](m * n)
		defer workPut(w)
		for bi := b0; bi < b1; bi++ {
			ub, sb, vb := U[bi*m*k:(bi+1)*m*k], S[bi*k:(bi+1)*k], V[bi*n*k:(bi+1)*n*k]
			var ok bool
			if m >= n {
				ok = gatherMatrix(w, a, offs[bi], m, n)
			} else {
				// Aᵀ = V·S·Uᵀ: decompose the transpose, swapping the roles.
				ok = gatherMatrix(w, at, offs[bi], n, m)
				ub, vb = vb, ub
			}
			if !ok {
				errs[bi] = fmt.Errorf("tensor.SVD: matrix %d: %w", bi, ErrNotFinite)
				return
			}
			if !svdTall(max(m, n), k, w, ub, sb, vb) {
				errs[bi] = fmt.Errorf("tensor.SVD: matrix %d: QR iteration did not converge", bi)
				return
			}
			if m >= n {
				flipToV(ub, vb, m, n, k)
			} else {
				flipToV(vb, ub, m, n, k) // the slices were swapped back above
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// svdTall decomposes the row-major m×n matrix a (m ≥ n, overwritten) into
// the row-major u (m×n), s (n) and v (n×n).
func svdTall[T Float](m, n int, a, u, s, v []T) bool {
	var amax T
	for _, x := range a {
		amax = max(amax, absT(x))
	}
	scale := pow2Scale(amax)
	if scale != 1 {
		for i := range a {
			a[i] *= scale
		}
	}
	var qr *reflectors[T]
	mw := m // rows of the matrix that is bidiagonalised
	if float64(m) >= svdQRRatio*float64(n) {
		qr = qrFactor(m, n, a)
		// Continue with R, the upper triangle of a's first n rows.
		for i := 0; i < n; i++ {
			clear(a[i*n : i*n+i])
		}
		mw = n
	}
	w := a[:mw*n]
	d, e := make([]T, n), make([]T, max(n-1, 0))
	var left, right *reflectors[T]
	if n > bdBlockedMin {
		left, right = bidiagonalizeBlocked(mw, n, w, d, e)
	} else {
		left, right = bidiagonalize(mw, n, w, d, e)
	}
	ut, vt := workGet[T](n*n), workGet[T](n*n)
	defer workPut(ut)
	defer workPut(vt)
	clear(ut)
	clear(vt)
	for i := 0; i < n; i++ {
		ut[i*n+i], vt[i*n+i] = 1, 1
	}
	// Row p of ut and vt is the pair of singular vectors of d[p]: the
	// layout of both the QR sweeps and (column-major) divide and conquer.
	if n > bdLeaf {
		if !bdsdc(n, d, e, ut, vt) {
			return false
		}
	} else if !bidiagSVD(n, d, e, ut, vt) {
		return false
	}
	// Make the singular values non-negative and sort them in descending
	// order, permuting the rows of ut and vt alike.
	for i := 0; i < n; i++ {
		if d[i] < 0 {
			d[i] = -d[i]
			for j, x := range vt[i*n : (i+1)*n] {
				vt[i*n+j] = -x
			}
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(x, y int) bool { return d[perm[x]] > d[perm[y]] })
	for j, p := range perm {
		s[j] = d[p] / scale
	}
	// u = Q_QR·[Q_B·[U_B; 0]; 0] and v = P_B·V_B, columns in sorted order.
	clear(u)
	permTranspose(n, u, ut, perm)
	permTranspose(n, v, vt, perm)
	if n >= svdApartMin && runtime.GOMAXPROCS(0) == 2 {
		// The two back-transformations are independent: one a core,
		// rather than each split between the cores block by block, keeps
		// each matrix in one core's caches and needs one fork, not one
		// per block (the whole SVD at n = 1000 on a loaded Zen 3,
		// alternated runs: best 255 and median 307 ms, against 266 and
		// 327 with the blocks split).
		gemm.ParallelFor(2, 2, func(t int) {
			if t == 0 {
				left.applyQOn(u, n, n, false, false)
			} else {
				right.applyQOn(v, n, n, false, false)
			}
		})
	} else {
		left.applyQ(u, n, n, false)
		right.applyQ(v, n, n, false)
	}
	if qr != nil {
		qr.applyQ(u, n, n, false)
	}
	left.release()
	right.release()
	qr.release()
	return true
}

// flipToV negates column r of u (m×k) and v (n×k) wherever v's entry of
// largest magnitude in that column is negative: the sign convention of
// package pca, which also keeps the factors continuous in A (finite
// differences and gradient checks need that).
func flipToV[T Float](u, v []T, m, n, k int) {
	// Row by row, each column's first entry of largest magnitude: the
	// matrices are row-major, and walking them a column at a time took a
	// cache line per entry (the pass at n = 256: 208 µs that way, 96 µs
	// row by row).
	best, sign := make([]T, k), make([]T, k)
	for r := range k {
		best[r] = -1
	}
	for i := range n {
		for r, x := range v[i*k : (i+1)*k] {
			if a := absT(x); a > best[r] {
				best[r], sign[r] = a, x
			}
		}
	}
	flip := false
	for r, x := range sign {
		if x < 0 {
			sign[r], flip = -1, true
		} else {
			sign[r] = 1
		}
	}
	if !flip {
		return
	}
	for _, mat := range [][]T{v[:n*k], u[:m*k]} {
		for i := 0; i < len(mat); i += k {
			row := mat[i : i+k]
			for r, sg := range sign {
				row[r] *= sg
			}
		}
	}
}
