package tensor

// The reverse-mode derivative of the Cholesky factorisation, computed by
// running the blocked factorisation backwards (Murray 2016, "Differentiation
// of the Cholesky decomposition", section 4). Each step of the recursive
// forward algorithm
//
//	L11 = chol(A11),  L21 = A21·L11⁻ᵀ,  L22 = chol(A22 − L21·L21ᵀ)
//
// is undone in reverse order on the cotangents, in place:
//
//	Ā22 = chol_rev(L22, L̄22)
//	L̄21 −= (Ā22 + Ā22ᵀ)·L21,  Ā21 = L̄21·L11⁻¹
//	L̄11 −= tril(Ā21ᵀ·L21),    Ā11 = chol_rev(L11, L̄11)
//
// which costs about 2n³/3 flops (the symbolic formula L⁻ᵀΦ(LᵀL̄)L⁻¹ needs
// about 2n³), nearly all of it in GEMM.

// cholGradBlock is the order below which the reverse sweep runs unblocked.
const cholGradBlock = 32

// CholeskyGrad returns Ā, the cotangent of the symmetric positive definite
// matrices A (..., n, n) given their lower Cholesky factors l = chol(A) and
// the cotangents lbar of those factors: the reverse-mode derivative of
// Cholesky. Only the lower triangles of l and lbar are read. Ā is
// symmetric and is the derivative with respect to the symmetric part of A:
// for a symmetric perturbation E, ⟨Ā, E⟩ = ⟨L̄, dL⟩ with dL the change of L
// along E. Batch axes broadcast. It panics with a *Error when l is not a
// stack of square matrices, the shapes do not fit or the dtypes differ.
func CholeskyGrad(l, lbar *Tensor) *Tensor { return choleskyGrad("CholeskyGrad", nil, l, lbar) }

// CholeskyGradTo is CholeskyGrad writing into dst (nil allocates). dst must
// be contiguous with the result's shape and dtype and must not overlap l; it
// may be lbar itself.
func CholeskyGradTo(dst, l, lbar *Tensor) *Tensor {
	return choleskyGrad("CholeskyGradTo", dst, l, lbar)
}

func choleskyGrad(op string, dst, l, lbar *Tensor) *Tensor {
	if len(lbar.shape) < 2 || lbar.shape[len(lbar.shape)-1] != lbar.shape[len(lbar.shape)-2] {
		Fail(op, "need square cotangents (..., n, n), got %s", describe(l, lbar))
	}
	x, n, _, batch := solveSetupTo(op, dst, l, lbar)
	if x.Size() == 0 {
		return x
	}
	if x.dev != nil || l.dev != nil {
		gpuCholeskyGrad(op, x, l, n)
		return x
	}
	l, ldl := rowMajor(l, n, n)
	offs := matrixOffsets(l, batch)
	if l.dtype == Float32 {
		choleskyGradBatch[float32](l, offs, ldl, x, n)
	} else {
		choleskyGradBatch[float64](l, offs, ldl, x, n)
	}
	return x
}

func choleskyGradBatch[T Float](l *Tensor, offs []int, ldl int, x *Tensor, n int) {
	L, X := storage[T](l), storage[T](x)
	X = X[x.offset : x.offset+x.Size()]
	// Small matrices run in parallel over the batch, large ones one after
	// the other with the parallelism inside GEMM.
	minChunk := max(1, gemmParallelWork/(n*n*n))
	if n*n*n >= gemmParallelWork {
		minChunk = len(offs)
	}
	linalgParallel(len(offs), minChunk, func(b0, b1 int) {
		work := getBuf[T]((n - n/2) * (n - n/2))
		for bi := b0; bi < b1; bi++ {
			g := X[bi*n*n : (bi+1)*n*n]
			cholGradLower(n, L[offs[bi]:], ldl, g, n, work)
			mirrorLower(g, n, n, 0.5, 1) // the symmetric cotangent: off-diagonal entries halved
		}
		putBuf(work)
	})
}

// cholGradLower overwrites the lower triangle of the n×n matrix g, holding
// L̄ on entry, with the cotangent of A's lower triangle (each entry of A
// below the diagonal counted once), for the n×n lower factor in l. Entries
// of g above the diagonal are neither read nor kept. work holds at least
// ⌈n/2⌉² elements.
func cholGradLower[T Float](n int, l []T, ldl int, g []T, ldg int, work []T) {
	if n <= cholGradBlock {
		cholGradUnblocked(n, l, ldl, g, ldg)
		return
	}
	n1 := n / 2
	n2 := n - n1
	l21, l22 := l[n1*ldl:], l[n1*ldl+n1:]
	g21, g22 := g[n1*ldg:], g[n1*ldg+n1:]
	cholGradLower(n2, l22, ldl, g22, ldg, work)
	// S = A22 − L21·L21ᵀ is read through its lower triangle, so L21 sees
	// the cotangent of S twice: L̄21 −= (S̄ + S̄ᵀ)·L21.
	f := work[:n2*n2]
	for i := 0; i < n2; i++ {
		copy(f[i*n2:i*n2+i+1], g22[i*ldg:i*ldg+i+1])
	}
	mirrorLower(f, n2, n2, 1, 2) // S + Sᵀ
	splitRows(n2, n2*n1*n2, func(r0, r1 int) {
		gemmSerialT(false, false, r1-r0, n1, n2, -1, f[r0*n2:], n2, l21, ldl, 1, g21[r0*ldg:], ldg)
	})
	trsmRightLower(n2, n1, l, ldl, g21, ldg)        // Ā21 = L̄21·L11⁻¹
	gemmLowerTN(n1, n2, g21, ldg, l21, ldl, g, ldg) // L̄11 −= tril(Ā21ᵀ·L21)
	cholGradLower(n1, l, ldl, g, ldg, work)
}

// cholGradUnblocked reverses the column-by-column factorisation
//
//	Lⱼⱼ = √(Aⱼⱼ − Σₖ<ⱼ Lⱼₖ²),  Lᵢⱼ = (Aᵢⱼ − Σₖ<ⱼ Lᵢₖ·Lⱼₖ)/Lⱼⱼ  (i > j)
//
// from the last column to the first; each entry's cotangent is complete
// once every later column has been undone. The rows below a pivot are
// undone four at a time in one pass over the columns before it: their
// rows of Ḡ each take a multiple of Lⱼ, and Ḡⱼ takes the sum of the four
// rows of L (two calls of axpy per entry cost more than their arithmetic
// at these orders, at most cholGradBlock).
func cholGradUnblocked[T Float](n int, l []T, ldl int, g []T, ldg int) {
	for j := n - 1; j >= 0; j-- {
		lj := l[j*ldl : j*ldl+j]
		gj := g[j*ldg : j*ldg+j]
		ljj := l[j*ldl+j]
		djj := g[j*ldg+j]
		i := j + 1
		for ; i+4 <= n; i += 4 {
			t0, t1 := g[i*ldg+j]/ljj, g[(i+1)*ldg+j]/ljj
			t2, t3 := g[(i+2)*ldg+j]/ljj, g[(i+3)*ldg+j]/ljj
			g[i*ldg+j], g[(i+1)*ldg+j], g[(i+2)*ldg+j], g[(i+3)*ldg+j] = t0, t1, t2, t3
			g0, g1 := g[i*ldg:i*ldg+j], g[(i+1)*ldg:(i+1)*ldg+j]
			g2, g3 := g[(i+2)*ldg:(i+2)*ldg+j], g[(i+3)*ldg:(i+3)*ldg+j]
			l0, l1 := l[i*ldl:i*ldl+j+1], l[(i+1)*ldl:(i+1)*ldl+j+1]
			l2, l3 := l[(i+2)*ldl:(i+2)*ldl+j+1], l[(i+3)*ldl:(i+3)*ldl+j+1]
			m0, m1, m2, m3 := l0[:len(lj)], l1[:len(lj)], l2[:len(lj)], l3[:len(lj)]
			g0, g1, g2, g3, gj := g0[:len(lj)], g1[:len(lj)], g2[:len(lj)], g3[:len(lj)], gj[:len(lj)]
			for p, v := range lj {
				g0[p] -= t0 * v
				g1[p] -= t1 * v
				g2[p] -= t2 * v
				g3[p] -= t3 * v
				gj[p] -= (t0*m0[p] + t1*m1[p]) + (t2*m2[p] + t3*m3[p])
			}
			djj -= (t0*l0[j] + t1*l1[j]) + (t2*l2[j] + t3*l3[j])
		}
		for ; i < n; i++ {
			t := g[i*ldg+j] / ljj
			g[i*ldg+j] = t
			axpy(-t, lj, g[i*ldg:i*ldg+j])
			axpy(-t, l[i*ldl:i*ldl+j], gj)
			djj -= t * l[i*ldl+j]
		}
		a := djj / (2 * ljj)
		g[j*ldg+j] = a
		axpy(-2*a, lj, gj)
	}
}

// trsmRightLower overwrites the m×n matrix B with X solving X·L = B for the
// n×n lower triangular L: the last block column of X comes first, since
// X·L mixes each column of X only into itself and the columns before it.
// Blocks of B's independent rows go to the goroutines (splitRows).
func trsmRightLower[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	splitRows(m, m*n*n/2, func(r0, r1 int) { trsmRightLowerSerial(r1-r0, n, l, ldl, b[r0*ldb:], ldb) })
}

// trsmRightLowerSerial is trsmRightLower on the calling goroutine.
func trsmRightLowerSerial[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if n <= triBlock {
		trsmRightLowerSmall(m, n, l, ldl, b, ldb)
		return
	}
	n1 := n / 2
	n2 := n - n1
	trsmRightLowerSerial(m, n2, l[n1*ldl+n1:], ldl, b[n1:], ldb)
	// X1·L11 = B1 − X2·L21
	gemmSerialT(false, false, m, n1, n2, -1, b[n1:], ldb, l[n1*ldl:], ldl, 1, b, ldb)
	trsmRightLowerSerial(m, n1, l, ldl, b, ldb)
}

// gemmLowerTN subtracts Aᵀ·B from the n×n matrix C for k×n matrices A and
// B, where only C's lower triangle is wanted: blocks wholly above the
// diagonal are skipped (about half the work); diagonal blocks of up to
// syrkBlock are updated whole, so entries above the diagonal get garbage.
// Blocks of rows of equal work go to the goroutines, as in syrkLower.
func gemmLowerTN[T Float](n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	splitTriangle(n, n*n*k/2, func(r0, r1 int) {
		if r0 > 0 {
			gemmSerialT(true, false, r1-r0, r0, k, -1, a[r0:], lda, b, ldb, 1, c[r0*ldc:], ldc)
		}
		gemmLowerTNSerial(r1-r0, k, a[r0:], lda, b[r0:], ldb, c[r0*ldc+r0:], ldc)
	})
}

// gemmLowerTNSerial is gemmLowerTN on the calling goroutine.
func gemmLowerTNSerial[T Float](n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if n <= syrkBlock {
		gemmSerialT(true, false, n, n, k, -1, a, lda, b, ldb, 1, c, ldc)
		return
	}
	n1 := n / 2
	gemmLowerTNSerial(n1, k, a, lda, b, ldb, c, ldc)
	// C21 −= A2ᵀ·B1, A2 and B1 being column blocks.
	gemmSerialT(true, false, n-n1, n1, k, -1, a[n1:], lda, b, ldb, 1, c[n1*ldc:], ldc)
	gemmLowerTNSerial(n-n1, k, a[n1:], lda, b[n1:], ldb, c[n1*ldc+n1:], ldc)
}

// trsmRightLowerSmall is trsmRightLower by substitution for a narrow L
// (n ≤ triBlock), four rows of B at a time so that every entry of L
// loaded serves four independent sums, from the last column back:
// x_j = (b_j − Σ_{p>j} x_p·L_pj)/L_jj, with L's columns below the
// diagonal first copied into rows (on Bᵀ with one call of axpy per entry
// of L, as before, the calls cost more than their arithmetic). It is
// trsmRightLowerTSmall's loop over the solved suffix of a row instead of
// the prefix: one function for both, with the direction a parameter, ran
// 12-18 % slower (more live values in the loop over columns).
func trsmRightLowerSmall[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	var lt [triBlock * triBlock]T // lt[j·n+p] = L[p][j] for p > j
	for j := range n {
		for p := j + 1; p < n; p++ {
			lt[j*n+p] = l[p*ldl+j]
		}
	}
	r := 0
	for ; r+4 <= m; r += 4 {
		x0 := b[r*ldb : r*ldb+n]
		x1 := b[(r+1)*ldb : (r+1)*ldb+n]
		x2 := b[(r+2)*ldb : (r+2)*ldb+n]
		x3 := b[(r+3)*ldb : (r+3)*ldb+n]
		for j := n - 1; j >= 0; j-- {
			c := lt[j*n+j+1 : j*n+n]
			y0, y1, y2, y3 := x0[j+1:][:len(c)], x1[j+1:][:len(c)], x2[j+1:][:len(c)], x3[j+1:][:len(c)]
			s0, s1, s2, s3 := x0[j], x1[j], x2[j], x3[j]
			for p, v := range c {
				s0 -= v * y0[p]
				s1 -= v * y1[p]
				s2 -= v * y2[p]
				s3 -= v * y3[p]
			}
			d := l[j*ldl+j]
			x0[j], x1[j], x2[j], x3[j] = s0/d, s1/d, s2/d, s3/d
		}
	}
	// The last rows alone, with the four-row loop's arithmetic: a row's
	// result must not depend on whether it fell in a group of four, as
	// the rows are split between goroutines (splitRows).
	for ; r < m; r++ {
		x := b[r*ldb : r*ldb+n]
		for j := n - 1; j >= 0; j-- {
			c := lt[j*n+j+1 : j*n+n]
			y := x[j+1:][:len(c)]
			s := x[j]
			for p, v := range c {
				s -= v * y[p]
			}
			x[j] = s / l[j*ldl+j]
		}
	}
}
