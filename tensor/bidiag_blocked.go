package tensor

// Blocked reduction to upper bidiagonal form (LAPACK's dgebrd/dlabrd, for
// m ≥ n, on the row-major matrix). A panel of bdBlock left and right
// reflectors is generated with the trailing matrix left as it was, its
// effect carried in two matrices X (m×nb) and Y (n×nb) such that the
// trailing update is A ← A − U·Yᵀ − X·Vᵀ = A − [U X]·[Yᵀ; V], one GEMM
// of depth 2·bdBlock. Half of the flops
// stay matrix-vector products (one pass over the trailing matrix per
// reflector, instead of the unblocked method's three).

// bdBlock is the panel width; below bdBlockedMin remaining columns the
// unblocked reduction finishes.
const (
	bdBlock      = 32
	bdBlockedMin = 96
)

// bidiagonalizeBlocked does what bidiagonalize does, in panels.
func bidiagonalizeBlocked[T Float](m, n int, a, d, e []T) (left, right *reflectors[T]) {
	left = newReflectors[T](n, m, 0)
	right = newReflectors[T](max(n-1, 0), n, 1)
	nb := bdBlock
	xb, yb := make([]T, m*nb), make([]T, n*nb)
	scratch := make([]T, 2*max(m, n)+4*nb)
	// The operands of the trailing update side by side: [U X] (rows×2nb)
	// and [Yᵀ; V] (2nb×cols).
	lw, rw := workGet[T](m*2*nb), workGet[T](2*nb*n)
	defer workPut(lw)
	defer workPut(rw)
	p := 0
	for ; n-p > bdBlockedMin; p += nb {
		mm, nn := m-p, n-p
		x, y := xb[:mm*nb], yb[:nn*nb]
		labrd(p, mm, nn, nb, a[p*n+p:], n, d[p:], e[p:], x, y, left, right, scratch)
		// A(nb:, nb:) −= U·Yᵀ + X·Vᵀ = [U X]·[Yᵀ; V], with U below and V
		// right of the panel: one product of depth 2nb, so one pass over
		// the trailing matrix instead of two.
		rows, cols, k2 := mm-nb, nn-nb, 2*nb
		l, r := lw[:rows*k2], rw[:k2*cols]
		for i := range rows {
			copy(l[i*k2:i*k2+nb], a[(p+nb+i)*n+p:(p+nb+i)*n+p+nb])
		}
		for j := range nb {
			for i, v := range x[nb+j*mm : nb+j*mm+rows] {
				l[i*k2+nb+j] = v
			}
			copy(r[j*cols:(j+1)*cols], y[nb+j*nn:nb+j*nn+cols])
			copy(r[(nb+j)*cols:(nb+j+1)*cols], a[(p+j)*n+p+nb:(p+j)*n+p+nb+cols])
		}
		gemmT(false, false, rows, cols, k2, -1, l, k2, r, cols, 1, a[(p+nb)*n+p+nb:], n)
	}
	bidiagonalizeFrom(p, m, n, a, d, e, left, right)
	return left, right
}

// labrd reduces the first nb rows and columns of the mm×nn row-major a
// (leading dimension lda; global offset p) and fills the column-major
// x (mm×nb) and y (nn×nb) (dlabrd). The reflectors go to left and right
// at index p+i; a keeps them too, for the trailing update: u_i below the
// diagonal of column i (with a 1 on it) and v_i right of A(i, i+1) (a 1
// there).
func labrd[T Float](p, mm, nn, nb int, a []T, lda int, d, e, x, y []T, left, right *reflectors[T], scratch []T) {
	at := func(r, c int) *T { return &a[r*lda+c] }
	ucol := scratch[:mm]
	t1 := scratch[2*max(mm, nn) : 2*max(mm, nn)+nb]
	t2 := scratch[2*max(mm, nn)+nb : 2*max(mm, nn)+2*nb]
	work := scratch[max(mm, nn) : 2*max(mm, nn)]
	for i := 0; i < nb; i++ {
		g := p + i
		// Column i, rows i..: A(r, i) −= A(r, :i)·Y(i, :i) + X(r, :i)·A(:i, i).
		for j := 0; j < i; j++ {
			t1[j] = y[i+j*nn] // Y(i, j)
			t2[j] = *at(j, i) // V part: A(j, i)
		}
		// Both products four rows or columns at a time (the symmetric
		// product's kernel) into ucol and work, free until the reflector.
		if i > 0 {
			sa, sx := ucol[:mm-i], work[:mm-i]
			rowsDotFast(a, lda, i, mm, 0, i, t1[:i], sa)
			clear(sx)
			colsAxpy(x[i:], mm, i, t2[:i], sx)
			for r := i; r < mm; r++ {
				*at(r, i) -= sa[r-i] + sx[r-i]
			}
		}
		// Left reflector u_i from A(i:, i).
		u := ucol[:mm-i]
		for r := range u {
			u[r] = *at(i+r, i)
		}
		tau := householder(u)
		d[i] = u[0]
		u[0] = 1
		for r := 1; r < len(u); r++ {
			*at(i+r, i) = u[r]
		}
		*at(i, i) = 1
		copy(left.vt[g*left.m+g:(g+1)*left.m], u)
		left.tau[g] = tau

		// Y(i+1:, i) = τ·(A(i:, i+1:)ᵀu − Y(i+1:, :i)·(Uᵀu) − Vᵀ(Xᵀu)), the
		// first term over the trailing matrix as it was.
		yi := y[i*nn+i+1 : (i+1)*nn]
		rowsCombineFast(a, lda, i, mm, i+1, nn, u, yi, work)
		if i > 0 {
			rowsCombineFast(a, lda, i, mm, 0, i, u, t1[:i], work) // t1 = A(i:, :i)ᵀ·u
		}
		colsDot(x[i:], mm, i, u, t2, work)
		for j := 0; j < i; j++ {
			t1[j], t2[j] = -t1[j], -t2[j]
		}
		colsAxpy(y[i+1:], nn, i, t1, yi)
		colsAxpy(a[i+1:], lda, i, t2, yi)
		for c := range yi {
			yi[c] *= tau
		}

		// Row i, columns i+1..: A(i, c) −= Σ_{j≤i} A(i, j)·Y(c, j) + Σ_{j<i} X(i, j)·A(j, c).
		row := a[i*lda+i+1 : i*lda+nn]
		for j := 0; j <= i; j++ {
			t1[j] = -*at(i, j)
			if j < i {
				t2[j] = -x[i+j*mm]
			}
		}
		colsAxpy(y[i+1:], nn, i+1, t1, row)
		colsAxpy(a[i+1:], lda, i, t2, row)
		// Right reflector v_i from A(i, i+1:).
		taup := householder(row)
		e[i] = row[0]
		row[0] = 1
		copy(right.vt[g*right.m+g+1:(g+1)*right.m], row)
		right.tau[g] = taup

		// X(i+1:, i) = τ·(A(i+1:, i+1:)·v − U·(Yᵀv) − X(i+1:, :i)·(V v)).
		xi := x[i*mm+i+1 : (i+1)*mm]
		rowsDotFast(a, lda, i+1, mm, i+1, nn, row, xi)
		colsDot(y[i+1:], nn, i+1, row, t1, work)
		colsDot(a[i+1:], lda, i, row, t2, work)
		ua := ucol[:len(xi)] // u is in left and a by now
		rowsDotFast(a, lda, i+1, mm, 0, i+1, t1[:i+1], ua)
		axpy(-1, ua, xi)
		for j := 0; j < i; j++ {
			t2[j] = -t2[j]
		}
		colsAxpy(x[i+1:], mm, i, t2, xi)
		for r := range xi {
			xi[r] *= taup
		}
	}
}

// rowsCombineFast sets w = Σᵣ u[r−r0]·A(r, c0:c1) over rows r0..r1−1 of
// the row-major a, four rows at a time through the symmetric product's
// kernel, the rows split between two goroutines when there are many.
func rowsCombineFast[T Float](a []T, lda, r0, r1, c0, c1 int, u, w, work []T) {
	nc := c1 - c0
	rows := r1 - r0
	w = w[:nc]
	run := func(q0, q1 int, acc []T) {
		clear(acc)
		var alpha, dots [4]T
		r := q0
		for ; r+4 <= q1; r += 4 {
			copy(alpha[:], u[r-r0:r-r0+4])
			blk := a[r*lda+c0:]
			done := symvCols(blk, lda, acc, acc, &alpha, &dots)
			symvColsScalar(blk[done:], lda, acc[done:], acc[done:], &alpha, &dots)
		}
		for ; r < q1; r++ {
			axpy(u[r-r0], a[r*lda+c0:r*lda+c1], acc)
		}
	}
	if rows*nc < 2*bidiagSplitWork {
		run(r0, r1, w)
		return
	}
	mid := r0 + (rows/2)&^3
	acc2 := work[:nc]
	linalgParallel(2, 1, func(q0, q1 int) {
		for q := q0; q < q1; q++ {
			if q == 0 {
				run(r0, mid, w)
			} else {
				run(mid, r1, acc2)
			}
		}
	})
	axpy(1, acc2, w)
}

// rowsDotFast sets out[r−r0] = A(r, c0:c1)·v for rows r0..r1−1, four rows
// at a time through the symmetric product's kernel (with zero weights, so
// its column update of a scratch row changes nothing that is read).
func rowsDotFast[T Float](a []T, lda, r0, r1, c0, c1 int, v, out []T) {
	nc := c1 - c0
	linalgParallel(r1-r0, max(4, bidiagSplitWork/max(1, nc)), func(q0, q1 int) {
		scratch := workGet[T](nc) // written with zero weights, never read
		defer workPut(scratch)
		var zero [4]T
		r := r0 + q0
		for ; r+4 <= r0+q1; r += 4 {
			var dots [4]T
			blk := a[r*lda+c0:]
			done := symvCols(blk, lda, v[:nc], scratch, &zero, &dots)
			symvColsScalar(blk[done:], lda, v[done:nc], scratch[done:], &zero, &dots)
			copy(out[r-r0:r-r0+4], dots[:])
		}
		for ; r < r0+q1; r++ {
			out[r-r0] = dotContig(a[r*lda+c0:r*lda+c1], v[:nc])
		}
	})
}
