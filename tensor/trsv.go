package tensor

// Triangular solves with up to four right-hand sides. The recursion of
// trsmLeft turns a vector into products one column wide and leaves of
// one-element axpy calls (0.15-0.24 ms at order 500, 1-1.6 GFLOP/s); here the
// substitution runs four rows at a time on the vector kernels of the
// matrix-vector products, reading each row of A once: with op(A) = A as
// four dot products of rows with the solved part of x (dots4), with
// op(A) = Aᵀ as one update of the unsolved part by four rows (axpy4),
// and a 4×4 triangle by plain substitution in between.

// trsvMaxCols is the most right-hand sides solved one at a time by trsv:
// at order 500 on the Zen 3, two columns took 65 µs that way against
// 190-235 µs through trsmLeft's recursion, four 106-118 against 197-294,
// and eight about as long either way.
const trsvMaxCols = 4

// trsvCols solves op(A)·X = B for the k ≤ trsvMaxCols columns of the n×k
// matrix B (leading dimension ldb) one at a time, each gathered into a
// contiguous vector for trsv (in place when B is one contiguous column).
func trsvCols[T Float](lower, trans, unit bool, n, k int, a []T, lda int, b []T, ldb int) {
	if k == 1 && ldb == 1 {
		trsv(lower, trans, unit, n, a, lda, b)
		return
	}
	x := getBuf[T](n)
	for c := range k {
		for i := range x {
			x[i] = b[i*ldb+c]
		}
		trsv(lower, trans, unit, n, a, lda, x)
		for i, v := range x {
			b[i*ldb+c] = v
		}
	}
	putBuf(x)
}

// trsv overwrites the vector x (n elements, contiguous) with the solution
// of op(A)·x = b (b its entries on entry), for A n×n lower or upper
// triangular (leading dimension lda) and op(A) = A or Aᵀ; with unit the
// diagonal of A is taken to be 1 and not read.
func trsv[T Float](lower, trans, unit bool, n int, a []T, lda int, x []T) {
	x = x[:n]
	at := func(i, j int) T { // op(A)[i][j]
		if trans {
			return a[j*lda+i]
		}
		return a[i*lda+j]
	}
	// block solves rows i0 … i0+nb−1 of op(A) (a triangle), whose
	// contributions from outside the block are already subtracted, in the
	// order of the substitution.
	block := func(i0, nb int, forward bool) {
		for s := range nb {
			k := s
			if !forward {
				k = nb - 1 - s
			}
			i := i0 + k
			v := x[i]
			if forward {
				for q := range k {
					v -= at(i, i0+q) * x[i0+q]
				}
			} else {
				for q := k + 1; q < nb; q++ {
					v -= at(i, i0+q) * x[i0+q]
				}
			}
			if !unit {
				v /= at(i, i)
			}
			x[i] = v
		}
	}
	forward := lower != trans // op(A) lower triangular
	switch {
	case !trans && forward: // rows of L: x_i −= L[i, :i]·x[:i]
		i := 0
		for ; i+4 <= n; i += 4 {
			var dots [4]T
			dots4(a[i*lda:], lda, x[:i], &dots)
			for k, d := range dots {
				x[i+k] -= d
			}
			block(i, 4, true)
		}
		for ; i < n; i++ {
			x[i] -= dotContig(a[i*lda:i*lda+i], x[:i])
			block(i, 1, true)
		}
	case !trans: // rows of U from the last: x_i −= U[i, i+1:]·x[i+1:]
		i := n
		for ; i >= 4; i -= 4 {
			var dots [4]T
			dots4(a[(i-4)*lda+i:], lda, x[i:], &dots)
			for k, d := range dots {
				x[i-4+k] -= d
			}
			block(i-4, 4, false)
		}
		for i--; i >= 0; i-- {
			x[i] -= dotContig(a[i*lda+i+1:i*lda+n], x[i+1:])
			block(i, 1, false)
		}
	case forward: // Uᵀ: solve a block, then x[i+4:] −= Σₖ xₖ·U[k, i+4:]
		i := 0
		for ; i+4 <= n; i += 4 {
			block(i, 4, true)
			alpha := [4]T{-x[i], -x[i+1], -x[i+2], -x[i+3]}
			axpy4(a[i*lda+i+4:], lda, x[i+4:], &alpha)
		}
		for ; i < n; i++ {
			block(i, 1, true)
			axpy(-x[i], a[i*lda+i+1:i*lda+n], x[i+1:])
		}
	default: // Lᵀ from the last: solve a block, then x[:i] −= Σₖ xₖ·L[k, :i]
		i := n
		for ; i >= 4; i -= 4 {
			block(i-4, 4, false)
			alpha := [4]T{-x[i-4], -x[i-3], -x[i-2], -x[i-1]}
			axpy4(a[(i-4)*lda:], lda, x[:i-4], &alpha)
		}
		for i--; i >= 0; i-- {
			block(i, 1, false)
			axpy(-x[i], a[i*lda:i*lda+i], x[:i])
		}
	}
}
