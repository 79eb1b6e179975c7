package tensor

import (
	"math"
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// Blocked Householder tridiagonalisation (LAPACK's dsytrd/dlatrd, lower) and
// the blocked application of Q = H(0)…H(n−2) from its reflectors (dormtr
// through compact WY). The matrices here are column-major: a[r+c*n] is
// A(r, c). The input is symmetric, so a row-major copy of it is the same
// thing, and a column-major matrix of eigenvectors as columns is, row-major,
// one eigenvector a row, as Eigh's sort reads them.

// eighBlock is the panel width of the blocked reduction and of the blocks of
// reflectors applied at once.
const eighBlock = 32

// ormtrBlock is the number of reflectors applied at once by ormtrLower: a
// wider block makes the GEMMs' inner dimension larger and the passes over
// the eigenvectors fewer.
const ormtrBlock = 64

// eighBlockedMin is the order below which the unblocked tred2 is used.
const eighBlockedMin = 64

// colGemm computes C = alpha·op(A)·op(B) + beta·C on column-major operands
// through the row-major GEMM (a column-major matrix read row-major is its
// transpose, so Cᵀ = op(B)ᵀ·op(A)ᵀ).
func colGemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	gemmT(tB, tA, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc)
}

// sytrdLower reduces the symmetric n×n column-major a, of which only the
// lower triangle is read and kept up to date, to tridiagonal form Qᵀ·A·Q = T. On return d holds T's diagonal, e[i] (i < n−1) its
// subdiagonal T(i+1, i), and column i of a below row i+1 and tau[i] the
// Householder reflector H(i) = I − tau·v·vᵀ with v(i+1) = 1, Q = H(0)…H(n−2).
func sytrdLower[T Float](n int, a, d, e, tau []T) {
	nb := eighBlock
	w := workGet[T](n * nb)
	clear(w)
	scratch := make([]T, n)
	x, y := workGet[T](2*nb*n), workGet[T](2*nb*n)
	defer workPut(w)
	defer workPut(x)
	defer workPut(y)
	for i := 0; i < n; i += nb {
		b := min(nb, n-i)
		m := n - i
		ai := a[i+i*n:]
		latrdLower(m, b, ai, n, e[i:], tau[i:], w, m, scratch)
		if b < m {
			syr2kLower(m-b, b, a[(i+b)+i*n:], n, w[b:], m, x, y, a[(i+b)+(i+b)*n:], n)
		}
		for j := i; j < i+b; j++ {
			if j+1 < n {
				a[j+1+j*n] = e[j]
			}
			d[j] = a[j+j*n]
		}
	}
}

// syr2kBlock is the width of the column blocks of the trailing update.
const syr2kBlock = 96

// syr2kLower sets the lower triangle of the m×m column-major c to
// C − V·Wᵀ − W·Vᵀ for the m×k v and w (dsyr2k): with X = [V W] and
// Y = [W V] that is C − X·Yᵀ, one GEMM of inner dimension 2k per block of
// columns, each from its diagonal down, so that only about half of the
// full product is computed. x and y hold 2k·m values each.
func syr2kLower[T Float](m, k int, v []T, ldv int, w []T, ldw int, x, y, c []T, ldc int) {
	x, y = x[:2*k*m], y[:2*k*m]
	for j := 0; j < k; j++ {
		copy(x[j*m:(j+1)*m], v[j*ldv:j*ldv+m])
		copy(y[(k+j)*m:(k+j+1)*m], v[j*ldv:j*ldv+m])
		copy(x[(k+j)*m:(k+j+1)*m], w[j*ldw:j*ldw+m])
		copy(y[j*m:(j+1)*m], w[j*ldw:j*ldw+m])
	}
	blocks := func(c0, c1 int) {
		for b0 := c0; b0 < c1; b0 += syr2kBlock {
			cw := min(syr2kBlock, c1-b0)
			gemmSerialT(true, false, cw, m-b0, 2*k, -1, y[b0:], m, x[b0:], m, 1, c[b0+b0*ldc:], ldc)
		}
	}
	if m*m*k < 2*reflApplySplit {
		blocks(0, m)
		return
	}
	// One part a core, of about equal area on whole blocks, each a run of
	// single-threaded GEMMs on one goroutine: splitting each block's small
	// GEMM between the cores cost a fork and a join per block, and ran the
	// update at 30-40 GFLOP/s of useful work at m = 968 on the Zen 3. Each
	// entry's arithmetic is the same however the columns are grouped.
	p := min(runtime.GOMAXPROCS(0), (m+syr2kBlock-1)/syr2kBlock)
	if p < 2 {
		blocks(0, m)
		return
	}
	// Columns 0..c hold the area c·m − c²/2 of the triangle's m²/2: part t
	// ends where that is (t+1)/p of it, c = m·(1 − √(1 − (t+1)/p)),
	// rounded up to a block.
	bound := func(t int) int {
		if t >= p {
			return m
		}
		c := float64(m) * (1 - math.Sqrt(1-float64(t)/float64(p)))
		return min(m, (int(c)+syr2kBlock-1)/syr2kBlock*syr2kBlock)
	}
	gemm.ParallelFor(p, p, func(t int) { blocks(bound(t), bound(t+1)) })
}

// latrdLower reduces the first nb columns of the m×m column-major a (leading
// dimension lda, lower triangle) and returns in w (m×nb, leading dimension ldw) the matrix W
// such that the trailing block's update is A −= V·Wᵀ + W·Vᵀ (dlatrd).
func latrdLower[T Float](m, nb int, a []T, lda int, e, tau, w []T, ldw int, scratch []T) {
	col := func(x []T, ld, c, r0, r1 int) []T { return x[r0+c*ld : r1+c*ld] }
	cw, ca := make([]T, nb), make([]T, nb)
	for i := 0; i < nb; i++ {
		ai := col(a, lda, i, i, m)
		// A(i:m, i) −= A(i:m, :i)·W(i, :i)ᵀ + W(i:m, :i)·A(i, :i)ᵀ
		for j := 0; j < i; j++ {
			cw[j], ca[j] = -w[i+j*ldw], -a[i+j*lda]
		}
		colsAxpy(a[i:], lda, i, cw, ai)
		colsAxpy(w[i:], ldw, i, ca, ai)
		if i == m-1 {
			tau[i] = 0
			continue
		}
		v := col(a, lda, i, i+1, m)
		tau[i], e[i] = larfg(v)
		v[0] = 1
		wi := col(w, ldw, i, i+1, m)
		// W(i+1:m, i) = A(i+1:m, i+1:m)·v, the block still as at the
		// panel's start; only its lower triangle is kept up to date.
		symvLower(m-i-1, a[(i+1)+(i+1)*lda:], lda, v, wi, scratch)
		if i > 0 {
			// W(i+1:m, i) −= A·(Wᵀv) + W·(Aᵀv) over the panel's first i columns.
			colsDot(w[i+1:], ldw, i, v, cw)
			colsDot(a[i+1:], lda, i, v, ca)
			for j := 0; j < i; j++ {
				cw[j], ca[j] = -cw[j], -ca[j]
			}
			colsAxpy(a[i+1:], lda, i, cw, wi)
			colsAxpy(w[i+1:], ldw, i, ca, wi)
		}
		t := tau[i]
		for k := range wi {
			wi[k] *= t
		}
		alpha := -T(0.5) * t * dotContig(wi, v)
		axpy(alpha, v, wi)
	}
}

// larfg generates the reflector H = I − tau·u·uᵀ, u = (1, x[1:]/(x0−beta)),
// with H·x = (beta, 0, …): it overwrites x[1:] with u[1:] and returns tau
// and beta (dlarfg).
func larfg[T Float](x []T) (tau, beta T) {
	alpha := x[0]
	xnorm := norm2(x[1:])
	if xnorm == 0 {
		return 0, alpha
	}
	beta = hypotT(alpha, xnorm)
	if alpha >= 0 {
		beta = -beta
	}
	tau = (beta - alpha) / beta
	s := 1 / (alpha - beta)
	for k := 1; k < len(x); k++ {
		x[k] *= s
	}
	return tau, beta
}

// norm2 returns the Euclidean norm of x. The plain sum of squares (one
// unrolled pass, dotContig) is used when it lies where no square can have
// overflowed or lost anything that shows in its rounding; otherwise the
// entries are scaled by the largest first, as dnrm2 does. The scaled form
// divided every entry in a dependent chain: 4.6 ms of the 58 ms reduction
// at n = 1000 on the Zen 3.
func norm2[T Float](x []T) T {
	ss := dotContig(x, x)
	if ss >= norm2SafeMin[T]() && ss <= maxFinite[T]() {
		return sqrtT(ss)
	}
	var scale T
	for _, y := range x {
		scale = max(scale, absT(y))
	}
	if scale == 0 || scale > maxFinite[T]() { // all zeros, or an infinite entry
		return scale
	}
	ss = 0
	for _, y := range x {
		y /= scale // not ·(1/scale): that overflows for a subnormal scale
		ss += y * y
	}
	return scale * sqrtT(ss)
}

// norm2SafeMin is the least sum of squares that norm2 takes as it is: a
// square that underflowed is then below the sum's rounding unit (the
// smallest normal number times 2^(mantissa bits + 2)).
func norm2SafeMin[T Float]() T {
	if dtypeOf[T]() == Float32 {
		return T(math.Ldexp(1, -126+26))
	}
	return T(math.Ldexp(1, -1022+55))
}

// ormtrLower overwrites the n×n column-major q with Q·q, Q = H(0)…H(n−2)
// from the reflectors sytrdLower left in a and tau, applying blocks of
// eighBlock reflectors, last block first, as I − V·T·Vᵀ through GEMM
// (dormtr/dlarft).
func ormtrLower[T Float](n int, a, tau, q []T) {
	nr := n - 1 // reflectors H(0)…H(n−2)
	if nr <= 0 {
		return
	}
	nb := ormtrBlock
	vbuf := workGet[T](n * nb)
	tbuf, gbuf := workGet[T](nb*nb), workGet[T](nb*nb)
	defer workPut(tbuf)
	defer workPut(gbuf)
	ybuf := workGet[T](nb * n)
	y2 := workGet[T](nb * n)
	defer workPut(vbuf)
	defer workPut(ybuf)
	defer workPut(y2)
	for s := ((nr - 1) / nb) * nb; s >= 0; s -= nb {
		k := min(nb, nr-s)
		r0 := s + 1 // first row touched by the block
		m := n - r0
		// V (m×k): column j is the reflector of H(s+j), zeros above its 1.
		v := vbuf[:m*k]
		clear(v)
		for j := 0; j < k; j++ {
			c := s + j
			v[j+j*m] = 1
			copy(v[j+1+j*m:(j+1)*m], a[c+2+c*n:n+c*n])
		}
		// T upper triangular with I − V·T·Vᵀ = H(s)…H(s+k−1); the inner
		// products vₚ·vⱼ come from one GEMM (G = VᵀV, both triangles)
		// rather than k²/2 dot products.
		tt, g := tbuf[:k*k], gbuf[:k*k]
		gemmT(false, true, k, k, m, 1, v, m, v, m, 0, g, k)
		clear(tt)
		for j := 0; j < k; j++ {
			tj := tau[s+j]
			for p := 0; p < j; p++ {
				tt[p+j*k] = -tj * g[p*k+j]
			}
			// T(0:j, j) = T(0:j, 0:j)·T(0:j, j), upper triangular, in place.
			for p := 0; p < j; p++ {
				var acc T
				for r := p; r < j; r++ {
					acc += tt[p+r*k] * tt[r+j*k]
				}
				tt[p+j*k] = acc
			}
			tt[j+j*k] = tj
		}
		// The eigenvectors (columns of q) are split between the cores,
		// each part updated by three single-threaded GEMMs.
		qs := q[r0:]
		per := max(16, reflApplySplit/(2*m*k+1)) &^ 15
		linalgParallel(n, per, func(c0, c1 int) {
			nc := c1 - c0
			y, z := ybuf[c0*k:c1*k], y2[c0*k:c1*k]
			gemmSerialT(false, true, nc, k, m, 1, qs[c0*n:], n, v, m, 0, y, k)   // Yᵀ = Q_partᵀ·V
			gemmSerialT(false, false, nc, k, k, 1, y, k, tt, k, 0, z, k)         // Zᵀ = Yᵀ·Tᵀ (tt, column-major T, read row-major is Tᵀ)
			gemmSerialT(false, false, nc, m, k, -1, z, k, v, m, 1, qs[c0*n:], n) // Q_partᵀ −= Zᵀ·Vᵀ
		})
	}
}
