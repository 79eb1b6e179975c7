package tensor

import (
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// Blocked reduction to upper bidiagonal form (LAPACK's dgebrd/dlabrd, for
// m ≥ n, on the row-major matrix). A panel of bdBlock left and right
// reflectors is generated with the trailing matrix left as it was, its
// effect carried in two matrices X (m×nb) and Y (n×nb) such that the
// trailing update is A ← A − U·Yᵀ − X·Vᵀ = A − [U X]·[Yᵀ; V], one GEMM
// of depth 2·bdBlock. Half of the flops stay matrix-vector products:
// about one pass over the trailing matrix per step (a left and a right
// reflector; see labrd), where the unblocked method makes three per
// reflector.

// bdBlock is the panel width; below bdBlockedMin remaining columns the
// unblocked reduction finishes.
const (
	bdBlock      = 32
	bdBlockedMin = 96
)

// bidiagonalizeBlocked does what bidiagonalize does, in panels. It
// expects a scaled as svdTall scales it, its largest entry's magnitude
// below 1: labrdFused sums products of unnormalised columns, whose
// squares would overflow float32 from entries of about 1e19.
func bidiagonalizeBlocked[T Float](m, n int, a, d, e []T) (left, right *reflectors[T]) {
	left = newReflectors[T](n, m, 0)
	right = newReflectors[T](max(n-1, 0), n, 1)
	nb := bdBlock
	xb, yb := make([]T, m*nb), make([]T, n*nb)
	scratch := make([]T, 3*max(m, n)+2*nb)
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
//
// Each step reads the trailing matrix twice: for Y(:, i) = Aᵀu_i and for
// X(:, i) = A·v_i. The second pass of step i is fused with the first of
// step i+1 (labrdFused): u_{i+1} comes from column i+1 as updated by
// X(:, i), row by row, so each row of the pass gives its entry of X(:, i),
// then its entry of the next column, then its multiple of itself for the
// next Aᵀu while it is still in the cache. That halves the panel's reads
// of the trailing matrix from memory.
func labrd[T Float](p, mm, nn, nb int, a []T, lda int, d, e, x, y []T, left, right *reflectors[T], scratch []T) {
	at := func(r, c int) *T { return &a[r*lda+c] }
	mx := max(mm, nn)
	ucol := scratch[:mm]
	t1 := scratch[mx : mx+nb]
	t2 := scratch[mx+nb : mx+2*nb]
	cxv := scratch[mx+2*nb : 2*mx+2*nb]
	cc := scratch[2*mx+2*nb : 3*mx+2*nb]
	// The panel's left reflectors as contiguous columns: U(r, j) =
	// ub[j·um + r] (left.vt's rows), so that products with A(i:, :i),
	// whose rows are only i long, run down columns instead.
	um := left.m
	ub := left.vt[p*um+p:]
	fused := false // whether ucol holds column i updated, and Y(:, i) the sum of its pass
	for i := 0; i < nb; i++ {
		g := p + i
		u := ucol[:mm-i]
		if !fused {
			// Column i, rows i..: A(r, i) −= A(r, :i)·Y(i, :i) + X(r, :i)·A(:i, i),
			// both products down the columns of U and X, then the column
			// (strided in a) read once, into the reflector's vector.
			for j := 0; j < i; j++ {
				t1[j] = y[i+j*nn] // Y(i, j)
				t2[j] = *at(j, i) // V part: A(j, i)
			}
			clear(u)
			if i > 0 {
				colsAxpy(ub[i:], um, i, t1[:i], u)
				colsAxpy(x[i:], mm, i, t2[:i], u)
			}
			for r := range u {
				u[r] = *at(i+r, i) - u[r]
			}
		}
		// Left reflector u_i from A(i:, i).
		alpha := u[0]
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
		if fused {
			// yi holds Σ_{r>i} A(r, i)·A(r, i+1:) of the column before
			// householder scaled its entries below the first by
			// 1/(α − β); u's first entry is 1.
			var scal T
			if tau != 0 {
				scal = 1 / (alpha - d[i])
			}
			ai := a[i*lda+i+1 : i*lda+nn]
			for c, v := range ai {
				yi[c] = scal*yi[c] + v
			}
		} else {
			rowsCombineFast(a, lda, i, mm, i+1, nn, u, yi)
		}
		if i > 0 {
			colsDot(ub[i:], um, i, u, t1[:i]) // t1 = A(i:, :i)ᵀ·u = U(i:, :i)ᵀ·u
		}
		colsDot(x[i:], mm, i, u, t2)
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
		colsDot(y[i+1:], nn, i+1, row, t1)
		colsDot(a[i+1:], lda, i, row, t2)
		corr := cxv[:len(xi)]
		clear(corr)
		colsAxpy(ub[i+1:], um, i+1, t1[:i+1], corr)
		colsAxpy(x[i+1:], mm, i, t2[:i], corr)
		fused = i+1 < nb
		if !fused {
			rowsDotFast(a, lda, i+1, mm, i+1, nn, row, xi)
			for r := range xi {
				xi[r] = taup * (xi[r] - corr[r])
			}
			continue
		}
		// Step i+1's column: A(r, i+1) − U(r, :i+1)·Y(i+1, :i+1) −
		// X(r, :i)·A(:i, i+1), and X(r, i)·A(i, i+1) once X(:, i) is known.
		for j := 0; j <= i; j++ {
			t1[j] = y[i+1+j*nn] // Y(i+1, j)
			t2[j] = *at(j, i+1) // A(j, i+1): V's column, 1 at j = i
		}
		next := cc[:len(xi)]
		clear(next)
		colsAxpy(ub[i+1:], um, i+1, t1[:i+1], next)
		colsAxpy(x[i+1:], mm, i, t2[:i], next)
		labrdFused(a, lda, i+1, mm, i+1, nn, row, corr, next, taup, t2[i], xi, ucol[:len(xi)], y[(i+1)*nn+i+2:(i+2)*nn])
	}
}

// labrdFused is the pass over rows r0..r1−1 and columns c0..c1−1 of a
// that ends step i = r0−1 of labrd (c0 = r0) and begins step r0: for each
// row r (k = r−r0)
//
//	x[k] = τ·(A(r, c0:)·v − corr[k])
//	col[k] = A(r, c0) − next[k] − x[k]·w
//
// and w1 = Σ_{r>r0} col[k]·A(r, c0+1:). The parts are gemvSplit's, with
// the sums of each part added in order.
func labrdFused[T Float](a []T, lda, r0, r1, c0, c1 int, v, corr, next []T, tau, w T, x, col, w1 []T) {
	nc := c1 - c0
	parts := gemvParts(r1-r0, nc)
	var acc []T
	if parts > 1 {
		acc = workGet[T]((parts - 1) * (nc - 1))
		defer workPut(acc)
	}
	gemvSplit(r0, r1, parts, func(t, q0, q1 int) {
		sum := w1
		if t > 0 {
			sum = acc[(t-1)*(nc-1) : t*(nc-1)]
		}
		clear(sum)
		entry := func(r int, dot T) T {
			k := r - r0
			x[k] = tau * (dot - corr[k])
			col[k] = a[r*lda+c0] - next[k] - x[k]*w
			if r == r0 {
				return 0 // u's first entry is 1, not a multiple of col[0]
			}
			return col[k]
		}
		r := q0
		for ; r+4 <= q1; r += 4 {
			var dots, alpha [4]T
			blk := a[r*lda+c0:]
			dots4(blk, lda, v[:nc], &dots)
			for k := range 4 {
				alpha[k] = entry(r+k, dots[k])
			}
			axpy4(blk[1:], lda, sum, &alpha)
		}
		for ; r < q1; r++ {
			s := entry(r, dotContig(a[r*lda+c0:r*lda+c1], v[:nc]))
			axpy(s, a[r*lda+c0+1:r*lda+c1], sum)
		}
	})
	for t := 1; t < parts; t++ {
		axpy(1, acc[(t-1)*(nc-1):t*(nc-1)], w1)
	}
}

// rowsCombineFast sets w = Σᵣ u[r−r0]·A(r, c0:c1) over rows r0..r1−1 of
// the row-major a, four rows at a time (axpy4). Large passes are cut into
// gemvParts parts of whole four-row groups, each summed into its own
// vector and the vectors added in order, so that the bits depend on the
// matrix's size, not on how many goroutines ran the parts.
func rowsCombineFast[T Float](a []T, lda, r0, r1, c0, c1 int, u, w []T) {
	nc := c1 - c0
	w = w[:nc]
	run := func(q0, q1 int, acc []T) {
		clear(acc)
		var alpha [4]T
		r := q0
		for ; r+4 <= q1; r += 4 {
			copy(alpha[:], u[r-r0:r-r0+4])
			axpy4(a[r*lda+c0:], lda, acc, &alpha)
		}
		for ; r < q1; r++ {
			axpy(u[r-r0], a[r*lda+c0:r*lda+c1], acc)
		}
	}
	parts := gemvParts(r1-r0, nc)
	if parts == 1 {
		run(r0, r1, w)
		return
	}
	acc := workGet[T]((parts - 1) * nc)
	defer workPut(acc)
	gemvSplit(r0, r1, parts, func(t, q0, q1 int) {
		if t == 0 {
			run(q0, q1, w)
		} else {
			run(q0, q1, acc[(t-1)*nc:t*nc])
		}
	})
	for t := 1; t < parts; t++ {
		axpy(1, acc[(t-1)*nc:t*nc], w)
	}
}

// rowsDotFast sets out[r−r0] = A(r, c0:c1)·v for rows r0..r1−1, four rows
// at a time (dots4). The parts of a large pass are those of rowsCombineFast: every row is in
// the same four-row group however many goroutines run.
func rowsDotFast[T Float](a []T, lda, r0, r1, c0, c1 int, v, out []T) {
	nc := c1 - c0
	run := func(q0, q1 int) {
		r := q0
		for ; r+4 <= q1; r += 4 {
			var dots [4]T
			dots4(a[r*lda+c0:], lda, v[:nc], &dots)
			copy(out[r-r0:r-r0+4], dots[:])
		}
		for ; r < q1; r++ {
			out[r-r0] = dotContig(a[r*lda+c0:r*lda+c1], v[:nc])
		}
	}
	parts := gemvParts(r1-r0, nc)
	if parts == 1 {
		run(r0, r1)
		return
	}
	gemvSplit(r0, r1, parts, func(_, q0, q1 int) { run(q0, q1) })
}

// gemvParts is the number of parts a matrix-vector pass over rows×cols
// elements is cut into: a function of the size alone (at least
// gemvPartWork elements a part, at most gemvMaxParts parts), so that
// where a part's sums go, and so their bits, do not depend on how many
// goroutines run them.
func gemvParts(rows, cols int) int {
	return max(1, min(rows*cols/gemvPartWork, rows/8, gemvMaxParts))
}

const (
	gemvPartWork = 1 << 15
	gemvMaxParts = 4
)

// gemvSplit runs fn(t, q0, q1) for the parts t of rows r0..r1−1 cut into
// parts, on up to GOMAXPROCS goroutines. The parts go in fixed sets (set
// g holds the parts t ≡ g mod the number of sets), one ParallelFor task a
// set, rather than one task a part: the passes of a bidiagonalisation
// read the same rows again and again, and the caller always runs set 0,
// so its rows stay in its core's caches, as the helper's do whenever the
// same helper joins (claimed a part at a time, 500×500 passes on the Zen
// 3 ran 40 % slower than in two fixed halves). gemvMaxParts caps the sets
// at four: these passes are bound by memory, not by cores.
func gemvSplit(r0, r1, parts int, fn func(t, q0, q1 int)) {
	threads := min(parts, runtime.GOMAXPROCS(0))
	gemm.ParallelFor(threads, threads, func(g int) {
		for t := g; t < parts; t += threads {
			q0, q1 := gemvPart(r0, r1, parts, t)
			fn(t, q0, q1)
		}
	})
}

// gemvPart is part t of rows r0..r1−1 cut into parts: boundaries on
// whole four-row groups counted from r0, the remainder in the last part.
func gemvPart(r0, r1, parts, t int) (q0, q1 int) {
	groups := (r1 - r0) / 4
	q0 = r0 + 4*(t*groups/parts)
	q1 = r0 + 4*((t+1)*groups/parts)
	if t == parts-1 {
		q1 = r1
	}
	return q0, q1
}
