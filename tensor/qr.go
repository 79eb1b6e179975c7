package tensor

import (
	"fmt"
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// qrSplitWork is roughly the m·n·k summed over a chunk of a batch below
// which spreading the chunk over goroutines costs more than it saves.
const qrSplitWork = 1 << 15

// QR returns the thin QR factorisation A = Q·R of each matrix of a
// (..., m, n): with k = min(m, n), q (..., m, k) has orthonormal columns
// and r (..., k, n) is upper triangular with a non-negative diagonal. The
// sign convention makes the factorisation unique (and differentiable) when
// A has full rank k.
//
// Each matrix is reduced by Householder reflections, a panel of 32 columns
// at a time, with the reflectors of a panel applied to the rest of the
// matrix (and accumulated into Q) in the compact WY form, so that nearly
// all of the work is GEMM. QR returns an error wrapping ErrNotFinite when
// an entry of a is NaN or infinite, and panics with a *Error when a has
// fewer than two dimensions.
func QR(a *Tensor) (q, r *Tensor, err error) {
	if len(a.shape) < 2 {
		Fail("QR", "need a matrix or a batch of them (..., m, n), got %s", describe(a))
	}
	m, n := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	k := min(m, n)
	batch := a.shape[:len(a.shape)-2]
	q = New(a.dtype, append(cloneInts(batch), m, k)...)
	r = New(a.dtype, append(cloneInts(batch), k, n)...)
	if a.dev != nil && a.Size() == 0 {
		return q.To(a.Device()), r.To(a.Device()), nil
	}
	if a.Size() == 0 {
		return q, r, nil
	}
	if a.dev != nil {
		return gpuQR(a, m, n)
	}
	offs := matrixOffsets(a, batch)
	if a.dtype == Float32 {
		err = qrBatch[float32](a, offs, m, n, q, r)
	} else {
		err = qrBatch[float64](a, offs, m, n, q, r)
	}
	if err != nil {
		return nil, nil, err
	}
	return q, r, nil
}

func qrBatch[T Float](a *Tensor, offs []int, m, n int, q, r *Tensor) error {
	k := min(m, n)
	Q, R := storage[T](q), storage[T](r)
	errs := make([]error, len(offs))
	linalgParallel(len(offs), max(1, qrSplitWork/(m*n*k+16)), func(b0, b1 int) {
		w := workGet[T](m * n)
		defer workPut(w)
		for bi := b0; bi < b1; bi++ {
			if !gatherMatrix(w, a, offs[bi], m, n) {
				errs[bi] = fmt.Errorf("tensor.QR: matrix %d: %w", bi, ErrNotFinite)
				return
			}
			qrMatrix(m, n, w, Q[bi*m*k:(bi+1)*m*k], R[bi*k*n:(bi+1)*k*n])
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gatherMatrix copies the m×n matrix of a at storage offset off into the
// row-major w and reports whether every entry is finite.
func gatherMatrix[T Float](w []T, a *Tensor, off, m, n int) bool {
	A := storage[T](a)
	sr, sc := a.strides[len(a.strides)-2], a.strides[len(a.strides)-1]
	big := maxFinite[T]()
	ok := true
	for i := 0; i < m; i++ {
		row := w[i*n : (i+1)*n]
		for j := range row {
			x := A[off+i*sr+j*sc]
			ok = ok && x >= -big && x <= big
			row[j] = x
		}
	}
	return ok
}

// qrMatrix factors the row-major m×n matrix a (overwritten) into the
// row-major q (m×k) and r (k×n), k = min(m, n).
func qrMatrix[T Float](m, n int, a, q, r []T) {
	k := min(m, n)
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
	refl := qrFactor(m, n, a)
	clear(r)
	for i := 0; i < k; i++ {
		copy(r[i*n+i:(i+1)*n], a[i*n+i:(i+1)*n])
	}
	clear(q)
	for i := 0; i < k; i++ {
		q[i*k+i] = 1
	}
	refl.applyQ(q, k, k, true)
	refl.release()
	// Flip the signs that make R's diagonal negative (row by row through
	// q), then undo the scaling (exact: a power of two).
	sign := make([]T, k)
	for i := 0; i < k; i++ {
		ri := r[i*n : (i+1)*n]
		s := 1 / scale
		sign[i] = 1
		if ri[i] < 0 {
			s, sign[i] = -s, -1
		}
		for j := i; j < n; j++ {
			ri[j] *= s
		}
	}
	for p := 0; p < m; p++ {
		qp := q[p*k : (p+1)*k]
		for i, s := range sign {
			qp[i] *= s
		}
	}
}

// qrFactor reduces the row-major m×n matrix a to upper triangular form in
// place (its rows 0..k−1 then hold R above and on the diagonal; what lies
// below is scratch) and returns the reflectors, Q = H₀⋯H_{k−1}.
//
// A panel of reflectorBlock columns is factored left-looking (qrPanel),
// and its block of reflectors is applied to the trailing columns as
// I − V·T·Vᵀ by GEMMs (Schreiber and Van Loan 1989, "A storage-efficient
// WY representation for products of Householder transformations"; Golub
// and Van Loan 2013, Matrix Computations, 4th ed., §5.2.3). With two or
// more cores the update looks ahead: the next panel's columns are updated
// first and factored on this goroutine while another updates the rest of
// the trailing matrix, so the panel's vector work overlaps the GEMMs.
func qrFactor[T Float](m, n int, a []T) *reflectors[T] {
	k := min(m, n)
	refl := newReflectors[T](k, m, 0)
	if k == 0 {
		return refl
	}
	nb := reflectorBlock
	pt := workGet[T](nb * m)
	defer workPut(pt)
	w, scratch := make([]T, nb), make([]T, m)
	par := runtime.GOMAXPROCS(0) > 1
	qrPanel(m, n, 0, min(nb, k), a, refl, pt, w, scratch)
	for j0 := 0; j0 < k; j0 += nb {
		b := min(nb, k-j0)
		if j0+b >= n {
			break
		}
		t := refl.ts[(j0/nb)*nb*nb:][:b*b]
		mm := m - j0
		nextB := min(nb, k-j0-b) // 0: no panel follows
		c0 := j0 + b + nextB     // the rest of the trailing matrix
		rest := n - c0
		// The panel costs about as much as updating 2nb columns by GEMM.
		x := max(0, (rest-nextB-2*nb)/2) // rest columns kept on this goroutine
		if !par || x == 0 || 4*mm*b*rest < reflApplySplit {
			refl.applyBlock(j0, j0+b, true, a[j0+b:], n-j0-b, n)
			if nextB > 0 {
				qrPanel(m, n, j0+b, nextB, a, refl, pt, w, scratch)
			}
			continue
		}
		// The far part goes to one of GEMM's polling helpers; if none has
		// joined by the time this goroutine is done with the panel and its
		// own part (a busy machine), this goroutine does it too.
		gemm.ParallelFor(2, 2, func(task int) {
			if task == 1 {
				refl.applyBlockCols(j0, j0+b, t, true, a[c0+x:], rest-x, n)
				return
			}
			refl.applyBlockCols(j0, j0+b, t, true, a[j0+b:], nextB, n)
			qrPanel(m, n, j0+b, nextB, a, refl, pt, w, scratch)
			refl.applyBlockCols(j0, j0+b, t, true, a[c0:], x, n)
		})
	}
	return refl
}

// qrPanel factors the b columns of a from j0 (all earlier reflectors
// already applied to them) left-looking: each column is brought up to date
// by the panel's earlier reflectors at once, as (I − V·T·Vᵀ)ᵀ applied
// through the vector kernels of the symmetric product (four columns of V
// per pass), and T grows by one column per reflector. The reflectors and
// T go to refl; R's entries back to a. pt (b×m), w (b) and scratch (m)
// are workspace.
func qrPanel[T Float](m, n, j0, b int, a []T, refl *reflectors[T], pt, w, scratch []T) {
	nb := reflectorBlock
	// The panel's columns are strided in a; they are factored as
	// contiguous rows of its transpose pt.
	for i := j0; i < m; i++ {
		ai := a[i*n+j0 : i*n+j0+b]
		for p, x := range ai {
			pt[p*m+i] = x
		}
	}
	t := refl.ts[(j0/nb)*nb*nb:][:b*b]
	clear(t)
	v := refl.vt[j0*m+j0:] // the panel's reflectors from row j0, ld m
	for p := 0; p < b; p++ {
		col := j0 + p
		y := pt[p*m+j0 : (p+1)*m]
		if p > 0 {
			// y ← (I − V·T·Vᵀ)ᵀ·y = y − V·(Tᵀ·(Vᵀy)).
			colsDot(v, m, p, y, w)
			for q := p - 1; q >= 0; q-- {
				var s T
				for r := 0; r <= q; r++ {
					s += t[r*b+q] * w[r]
				}
				w[q] = -s
			}
			colsAxpy(v, m, p, w, y)
		}
		x := y[p:]
		tau := householder(x)
		beta := x[0]
		x[0] = 1
		copy(refl.vt[col*m+col:(col+1)*m], x)
		x[0] = beta
		refl.tau[col] = tau
		t[p*b+p] = tau
		if tau != 0 && p > 0 {
			colsDot(v, m, p, refl.vt[col*m+j0:(col+1)*m], w)
			triMulCol(t, b, p, w, 1, -tau)
		}
	}
	refl.tok[j0/nb] = true
	for i := j0; i < min(j0+b, m); i++ {
		for p := i - j0; p < b; p++ {
			a[i*n+j0+p] = pt[p*m+i]
		}
	}
}
