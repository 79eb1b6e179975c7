package tensor

import "math"

// The symmetric matrix-vector product of the blocked tridiagonal reduction
// (LAPACK's dsymv, lower): only the lower triangle is read, and each
// column once, both as a column (its part of A·x below the diagonal) and,
// by symmetry, as a row (the dot product that gives the entry at its
// diagonal). That halves the memory traffic of a product over the full
// matrix, which is what limits it.

// symvSplitMin is the order from which symvLower splits its columns
// between two goroutines: on the Zen 3 (2 cores, GEMM's polling helpers)
// the split took 10.7-11.7 µs against 9.3 alone at m = 256, broke even at
// 320 and took 13.9 against 20.4 µs at 400.
const symvSplitMin = 320

// symvLower sets y = A·x for the m×m symmetric A whose lower triangle is
// held column-major in a (leading dimension lda). scratch holds at least
// m values; the two halves of the columns run on their own goroutines
// when the product is large enough to be worth it.
func symvLower[T Float](m int, a []T, lda int, x, y, scratch []T) {
	clear(y[:m])
	if m < symvSplitMin {
		symvRange(m, 0, m, a, lda, x, y)
		return
	}
	// Column j costs m−j rows: split the triangle into two equal areas.
	split := int(float64(m) * (1 - 1/math.Sqrt2))
	split -= split % 4
	y2 := scratch[:m]
	clear(y2)
	linalgParallel(2, 1, func(p0, p1 int) {
		for p := p0; p < p1; p++ {
			if p == 0 {
				symvRange(m, 0, split, a, lda, x, y)
			} else {
				symvRange(m, split, m, a, lda, x, y2)
			}
		}
	})
	axpy(1, y2[split:m], y[split:m])
}

// symvRange adds to y the contributions of columns c0..c1−1 of the lower
// triangle of A (and of their mirror images above the diagonal).
func symvRange[T Float](m, c0, c1 int, a []T, lda int, x, y []T) {
	j := c0
	for ; j+4 <= c1; j += 4 {
		// The 4×4 diagonal block, from its lower triangle, summed in
		// registers: adding each product into y[j+p] in memory made a
		// chain of sixteen dependent stores and loads, which took more
		// time than the rest of the group's columns at m = 200.
		x0, x1, x2, x3 := x[j], x[j+1], x[j+2], x[j+3]
		l0 := a[j+j*lda : j+j*lda+4] // column j from the diagonal down
		l1 := a[j+(j+1)*lda+1 : j+(j+1)*lda+4]
		l2 := a[j+(j+2)*lda+2 : j+(j+2)*lda+4]
		l3 := a[j+3+(j+3)*lda]
		dots := [4]T{
			(l0[0]*x0 + l0[1]*x1) + (l0[2]*x2 + l0[3]*x3),
			(l0[1]*x0 + l1[0]*x1) + (l1[1]*x2 + l1[2]*x3),
			(l0[2]*x0 + l1[1]*x1) + (l2[0]*x2 + l2[1]*x3),
			(l0[3]*x0 + l1[2]*x1) + (l2[1]*x2 + l3*x3),
		}
		if r0 := j + 4; r0 < m {
			alpha := [4]T{x0, x1, x2, x3}
			cols := a[r0+j*lda:]
			xs, ys := x[r0:m], y[r0:m]
			done := symvCols(cols, lda, xs, ys, &alpha, &dots)
			symvColsScalar(cols[done:], lda, xs[done:], ys[done:], &alpha, &dots)
		}
		for k := range 4 {
			y[j+k] += dots[k]
		}
	}
	for ; j < c1; j++ {
		col := a[j+j*lda : m+j*lda]
		y[j] += col[0] * x[j]
		var s T
		xj := x[j]
		for r := 1; r < len(col); r++ {
			s += col[r] * x[j+r]
			y[j+r] += col[r] * xj
		}
		y[j] += s
	}
}

// symvColsScalar sets y[i] += Σₖ alpha[k]·a[k·lda+i] and dots[k] +=
// Σᵢ a[k·lda+i]·x[i] for the four columns of a and every i < len(y): the
// tail that symvCols leaves, as its two halves' tails.
func symvColsScalar[T Float](a []T, lda int, x, y []T, alpha, dots *[4]T) {
	n := len(y)
	dotColsScalar(a, lda, x[:n], dots)
	axpyColsScalar(a, lda, y, alpha)
}

// dotColsScalar adds Σᵢ a[k·lda+i]·x[i] to dots[k] for the four vectors
// of a, over every i < len(x): the tail that dotCols leaves.
func dotColsScalar[T Float](a []T, lda int, x []T, dots *[4]T) {
	n := len(x)
	if n == 0 {
		return
	}
	c0, c1, c2, c3 := a[:n], a[lda:lda+n], a[2*lda:2*lda+n], a[3*lda:3*lda+n]
	var s0, s1, s2, s3 T
	for i, xi := range x {
		s0 += c0[i] * xi
		s1 += c1[i] * xi
		s2 += c2[i] * xi
		s3 += c3[i] * xi
	}
	dots[0] += s0
	dots[1] += s1
	dots[2] += s2
	dots[3] += s3
}

// axpyColsScalar sets y[i] += Σₖ alpha[k]·a[k·lda+i] for every i < len(y),
// in symvColsScalar's arithmetic: the tail that axpyCols leaves.
func axpyColsScalar[T Float](a []T, lda int, y []T, alpha *[4]T) {
	n := len(y)
	if n == 0 {
		return
	}
	c0, c1, c2, c3 := a[:n], a[lda:lda+n], a[2*lda:2*lda+n], a[3*lda:3*lda+n]
	for i := range y {
		y[i] += (alpha[0]*c0[i] + alpha[1]*c1[i]) + (alpha[2]*c2[i] + alpha[3]*c3[i])
	}
}

// dots4 adds to dots[k] the dot product of a[k·lda:][:len(x)] with x for
// k < 4: the vector kernel, then the scalar tail.
func dots4[T Float](a []T, lda int, x []T, dots *[4]T) {
	done := dotCols(a, lda, x, dots)
	dotColsScalar(a[done:], lda, x[done:], dots)
}

// axpy4 sets y += Σₖ alpha[k]·a[k·lda:][:len(y)] for k < 4: the vector
// kernel, then the scalar tail.
func axpy4[T Float](a []T, lda int, y []T, alpha *[4]T) {
	done := axpyCols(a, lda, y, alpha)
	axpyColsScalar(a[done:], lda, y[done:], alpha)
}

// colsDot sets out[j] = a_j·x for the ncols vectors a_j = a[j·lda:][:len(x)],
// four at a time.
func colsDot[T Float](a []T, lda, ncols int, x, out []T) {
	n := len(x)
	j := 0
	if n >= 16 {
		for ; j+4 <= ncols; j += 4 {
			var dots [4]T
			dots4(a[j*lda:], lda, x, &dots)
			copy(out[j:j+4], dots[:])
		}
	}
	for ; j < ncols; j++ {
		out[j] = dotContig(a[j*lda:j*lda+n], x)
	}
}

// colsAxpy sets y += Σⱼ coef[j]·a_j for the ncols vectors a_j =
// a[j·lda:][:len(y)], four at a time.
func colsAxpy[T Float](a []T, lda, ncols int, coef, y []T) {
	n := len(y)
	j := 0
	if n >= 16 {
		for ; j+4 <= ncols; j += 4 {
			alpha := [4]T{coef[j], coef[j+1], coef[j+2], coef[j+3]}
			axpy4(a[j*lda:], lda, y, &alpha)
		}
	}
	for ; j < ncols; j++ {
		axpy(coef[j], a[j*lda:j*lda+n], y)
	}
}
