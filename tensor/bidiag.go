package tensor

// The two stages of the Golub–Kahan–Reinsch SVD (Golub and Van Loan 2013,
// Matrix Computations, 4th ed., §8.6): Householder reduction to upper bidiagonal
// form, then implicitly shifted QR sweeps on the bidiagonal matrix, whose
// plane rotations are accumulated into the singular vectors.

// bidiagSplitWork is the number of multiply-adds of one rank-one update
// below which splitting its rows over goroutines costs more than it saves.
const bidiagSplitWork = 1 << 15

// bidiagonalize reduces the row-major m×n matrix a (m ≥ n, overwritten)
// to B = Q_Bᵀ·A·P_B, upper bidiagonal with diagonal d (n) and
// superdiagonal e (n−1). It returns the left reflectors (Q_B = H₀⋯H_{n−1},
// vectors of length m) and the right ones (P_B = G₀⋯G_{n−2}, reflector k
// acting on coordinates k+1..n−1).
func bidiagonalize[T Float](m, n int, a, d, e []T) (left, right *reflectors[T]) {
	left = newReflectors[T](n, m, 0)
	right = newReflectors[T](max(n-1, 0), n, 1)
	bidiagonalizeFrom(0, m, n, a, d, e, left, right)
	return left, right
}

// bidiagonalizeFrom continues the reduction from row and column k0, the
// reflectors before it already in left and right.
func bidiagonalizeFrom[T Float](k0, m, n int, a, d, e []T, left, right *reflectors[T]) {
	x := make([]T, m)
	w := make([]T, n)
	for k := k0; k < n; k++ {
		// Left reflector from column k, rows k..m−1 (strided: gathered).
		col := x[:m-k]
		for i := range col {
			col[i] = a[(k+i)*n+k]
		}
		tau := householder(col)
		d[k] = col[0]
		col[0] = 1
		copy(left.vt[k*m+k:(k+1)*m], col)
		left.tau[k] = tau
		if tau != 0 && k+1 < n {
			// A[k:, k+1:] −= τ·v·(vᵀA[k:, k+1:]), row by row so that every
			// inner loop is contiguous.
			wk := w[:n-k-1]
			rowsCombine(a, n, k, m, k+1, col, wk)
			rowsRankOne(a, n, k, m, k+1, -tau, col, wk)
		}
		if k+1 >= n {
			continue
		}
		// Right reflector from row k, columns k+1..n−1 (contiguous).
		row := a[k*n+k+1 : (k+1)*n]
		tau = householder(row)
		e[k] = row[0]
		row[0] = 1
		copy(right.vt[k*n+k+1:(k+1)*n], row)
		right.tau[k] = tau
		if tau != 0 {
			// A[k+1:, k+1:] −= τ·(A[k+1:, k+1:]·v)·vᵀ.
			linalgParallel(m-k-1, max(1, bidiagSplitWork/(n-k)), func(i0, i1 int) {
				for i := k + 1 + i0; i < k+1+i1; i++ {
					ri := a[i*n+k+1 : (i+1)*n]
					axpy(-tau*dotContig(ri, row), row, ri)
				}
			})
		}
		row[0] = e[k]
	}
}

// rowsCombine sets w = Σᵢ v[i−r0]·A[i, c0:] over rows r0..r1−1 of the
// row-major a with n columns, in parallel over chunks of rows.
func rowsCombine[T Float](a []T, n, r0, r1, c0 int, v, w []T) {
	rows := r1 - r0
	p := 1
	if rows*(n-c0) >= 2*bidiagSplitWork {
		p = 2
	}
	parts := make([][]T, p)
	linalgParallel(p, 1, func(q0, q1 int) {
		for q := q0; q < q1; q++ {
			acc := w
			if q > 0 {
				acc = make([]T, len(w))
			}
			clear(acc)
			for i := r0 + q*rows/p; i < r0+(q+1)*rows/p; i++ {
				if vi := v[i-r0]; vi != 0 {
					axpy(vi, a[i*n+c0:(i+1)*n], acc)
				}
			}
			parts[q] = acc
		}
	})
	for _, part := range parts[1:] {
		axpy(1, part, w)
	}
}

// rowsRankOne sets A[i, c0:] += alpha·v[i−r0]·w for rows r0..r1−1.
func rowsRankOne[T Float](a []T, n, r0, r1, c0 int, alpha T, v, w []T) {
	linalgParallel(r1-r0, max(1, bidiagSplitWork/max(1, n-c0)), func(i0, i1 int) {
		for i := r0 + i0; i < r0+i1; i++ {
			if vi := v[i-r0]; vi != 0 {
				axpy(alpha*vi, w, a[i*n+c0:(i+1)*n])
			}
		}
	})
}

// planeRotations queues plane rotations of pairs of rows of an n×n
// row-major matrix zt: rotation (i, j, c, s) sets row i ← c·row i + s·row j
// and row j ← −s·row i + c·row j. Applied one at a time, each rotation
// streams two rows through the cache; queued and applied a block of
// columns at a time, the block stays in cache while every rotation passes
// over it, in the same order, with the same results.
type planeRotations[T Float] struct {
	i, j []int
	c, s []T
}

func newPlaneRotations[T Float](capacity int) *planeRotations[T] {
	return &planeRotations[T]{i: make([]int, 0, capacity), j: make([]int, 0, capacity),
		c: make([]T, 0, capacity), s: make([]T, 0, capacity)}
}

func (q *planeRotations[T]) add(n int, zt []T, i, j int, c, s T) {
	if s == 0 && c == 1 {
		return
	}
	if len(q.c) >= 16*n+64 {
		q.flush(n, zt)
	}
	q.i, q.j = append(q.i, i), append(q.j, j)
	q.c, q.s = append(q.c, c), append(q.s, s)
}

func (q *planeRotations[T]) flush(n int, zt []T) {
	if len(q.c) == 0 {
		return
	}
	linalgParallel(n, max(rotBlockCols, eighSplitWork/max(1, len(q.c))), func(k0, k1 int) {
		for b0 := k0; b0 < k1; b0 += rotBlockCols {
			b1 := min(b0+rotBlockCols, k1)
			for r, i := range q.i {
				j := q.j[r]
				c, s := q.c[r], -q.s[r] // rotBlocks' sign convention
				zi := zt[i*n+b0 : i*n+b1]
				zj := zt[j*n+b0 : j*n+b1]
				for x := rotBlocks(zi, zj, c, s); x < len(zi); x++ {
					f := zj[x]
					zj[x] = T(s*zi[x]) + T(c*f)
					zi[x] = T(c*zi[x]) - T(s*f)
				}
			}
		}
	})
	q.i, q.j, q.c, q.s = q.i[:0], q.j[:0], q.c[:0], q.s[:0]
}

// givens returns c, s, r with r = hypot(y, z), c = y/r, s = z/r, so that
// the rotation maps (y, z) to (r, 0).
func givens[T Float](y, z T) (c, s, r T) {
	if z == 0 {
		return 1, 0, y
	}
	r = hypotT(y, z)
	return y / r, z / r, r
}

// bidiagMaxSweeps bounds the QR sweeps per singular value; a few are
// normal (the iteration converges cubically).
const bidiagMaxSweeps = 40

// bidiagSVD diagonalises the n×n upper bidiagonal matrix with diagonal d
// and superdiagonal e by implicitly shifted QR sweeps, leaving the
// (signed, unsorted) singular values in d. Left rotations are applied to
// the rows of ut and right ones to the rows of vt (both n×n, holding the
// transposes of the accumulated U and V). It reports false if the
// iteration does not converge.
func bidiagSVD[T Float](n int, d, e, ut, vt []T) bool {
	if n <= 1 {
		return true
	}
	eps := epsT[T]()
	var bnorm T
	for i := 0; i < n; i++ {
		bnorm = max(bnorm, absT(d[i]))
		if i < n-1 {
			bnorm = max(bnorm, absT(e[i]))
		}
	}
	// Diagonal entries below thresh are set to zero (an absolute
	// perturbation of the size of the rounding already committed).
	thresh := eps * bnorm
	// The queues hold at most 16n+64 rotations before a flush: reserve
	// that once rather than growing by appends (two thirds of a 256×256
	// SVD's allocations).
	qu, qv := newPlaneRotations[T](16*n+64), newPlaneRotations[T](16*n+64)
	defer qu.flush(n, ut)
	defer qv.flush(n, vt)
	negligible := func(i int) bool {
		return absT(e[i]) <= eps*(absT(d[i])+absT(d[i+1])) || absT(e[i]) <= thresh*eps
	}
	sweeps := 0
	hi := n - 1
	for hi > 0 {
		if negligible(hi - 1) {
			e[hi-1] = 0
			hi--
			continue
		}
		lo := hi - 1
		for lo > 0 && !negligible(lo-1) {
			lo--
		}
		if lo > 0 {
			e[lo-1] = 0
		}
		// A zero on the diagonal splits the matrix after a chase of
		// rotations that zeroes its row's (or, for the last, its column's)
		// superdiagonal entry.
		zero := -1
		for i := lo; i <= hi; i++ {
			if absT(d[i]) <= thresh {
				d[i] = 0
				zero = i
				break
			}
		}
		if zero >= 0 {
			if zero < hi {
				chaseRow(n, d, e, ut, qu, zero, hi)
			} else {
				chaseColumn(n, d, e, vt, qv, lo, hi)
			}
			continue
		}
		if sweeps++; sweeps > bidiagMaxSweeps*n {
			return false
		}
		golubKahanStep(n, d, e, ut, vt, qu, qv, lo, hi)
	}
	return true
}

// chaseRow zeroes e[i] when d[i] = 0 (i < hi) by left rotations of row i
// with rows i+1..hi, which move the unwanted entry along row i.
func chaseRow[T Float](n int, d, e, ut []T, qu *planeRotations[T], i, hi int) {
	f := e[i]
	e[i] = 0
	for j := i + 1; j <= hi && f != 0; j++ {
		c, s, r := givens(d[j], f)
		d[j] = r
		qu.add(n, ut, j, i, c, s)
		if j < hi {
			f = -s * e[j]
			e[j] *= c
		}
	}
}

// chaseColumn zeroes e[hi−1] when d[hi] = 0 by right rotations of column
// hi with columns hi−1..lo, which move the unwanted entry up column hi.
func chaseColumn[T Float](n int, d, e, vt []T, qv *planeRotations[T], lo, hi int) {
	f := e[hi-1]
	e[hi-1] = 0
	for j := hi - 1; j >= lo && f != 0; j-- {
		c, s, r := givens(d[j], f)
		d[j] = r
		qv.add(n, vt, j, hi, c, s)
		if j > lo {
			f = -s * e[j-1]
			e[j-1] *= c
		}
	}
}

// golubKahanStep is one implicit QR sweep on the unreduced block lo..hi
// with the Wilkinson shift of BᵀB's trailing 2×2 block: a right rotation
// introduces a bulge that alternating left and right rotations chase down.
func golubKahanStep[T Float](n int, d, e, ut, vt []T, qu, qv *planeRotations[T], lo, hi int) {
	t11 := d[hi-1] * d[hi-1]
	if hi-1 > lo {
		t11 += e[hi-2] * e[hi-2]
	}
	t12 := d[hi-1] * e[hi-1]
	t22 := d[hi]*d[hi] + e[hi-1]*e[hi-1]
	mu := t22
	if t12 != 0 {
		delta := (t11 - t22) / 2
		h := hypotT(delta, t12)
		if delta < 0 {
			h = -h
		}
		mu = t22 - t12*(t12/(delta+h))
	}
	y := d[lo]*d[lo] - mu
	z := d[lo] * e[lo]
	for k := lo; k < hi; k++ {
		c, s, r := givens(y, z)
		if k > lo {
			e[k-1] = r
		}
		dk := c*d[k] + s*e[k]
		ek := -s*d[k] + c*e[k]
		bulge := s * d[k+1]
		dk1 := c * d[k+1]
		qv.add(n, vt, k, k+1, c, s)
		c, s, r = givens(dk, bulge)
		d[k] = r
		e[k] = c*ek + s*dk1
		d[k+1] = -s*ek + c*dk1
		qu.add(n, ut, k, k+1, c, s)
		if k < hi-1 {
			y = e[k]
			z = s * e[k+1]
			e[k+1] *= c
		}
	}
}
