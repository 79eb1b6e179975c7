package tensor

// Products of a lower triangular matrix with a general one. Like the
// triangular solves, the kernels recurse by halving the triangle so that
// almost all of the work is done by GEMM: op(L)·B takes n²k flops instead
// of a dense product's 2n²k, and the variant that keeps only the lower
// triangle of a square result about half that again.

// trmmBlock is the order below which the products use plain loops.
const trmmBlock = 32

// TriMatMul returns op(L)·B, where L is the lower triangle (diagonal
// included) of the matrices in l (..., n, n) and op(L) is L, or Lᵀ when
// transL is set; b is (..., n, k) and the batch axes broadcast. Only the
// lower triangle of l is read, and the product costs half the flops of
// MatMul. It panics with a *Error when l is not square, the shapes do not
// fit or the dtypes differ.
func TriMatMul(l, b *Tensor, transL bool) *Tensor {
	return triMatMul("TriMatMul", nil, l, b, transL, false)
}

// TriMatMulTo is TriMatMul writing into dst (nil allocates). dst must be
// contiguous, have the result's shape and dtype, and not overlap l or b.
func TriMatMulTo(dst, l, b *Tensor, transL bool) *Tensor {
	return triMatMul("TriMatMulTo", dst, l, b, transL, false)
}

// TriMatMulLower returns the lower triangle (diagonal included, zeros above)
// of op(L)·B for square B (..., n, n), with L and op as for TriMatMul. The
// entries above the diagonal are not computed, so it costs about a quarter
// of the flops of MatMul. It panics like TriMatMul, and also when b is not
// square.
func TriMatMulLower(l, b *Tensor, transL bool) *Tensor {
	return triMatMul("TriMatMulLower", nil, l, b, transL, true)
}

// TriMatMulLowerTo is TriMatMulLower writing into dst (nil allocates), with
// dst as for TriMatMulTo.
func TriMatMulLowerTo(dst, l, b *Tensor, transL bool) *Tensor {
	return triMatMul("TriMatMulLowerTo", dst, l, b, transL, true)
}

func triMatMul(op string, dst, l, b *Tensor, transL, lowerOut bool) *Tensor {
	sameDType(op, l, b)
	n := checkSquare(op, l)
	if len(b.shape) < 2 || b.shape[len(b.shape)-2] != n {
		Fail(op, "operands do not fit: %s (want (..., %d, %d) and (..., %d, k))", describe(l, b), n, n, n)
	}
	k := b.shape[len(b.shape)-1]
	if lowerOut && k != n {
		Fail(op, "need a square right operand (..., %d, %d), got %s", n, n, describe(l, b))
	}
	batch := BroadcastShapes(op, l.shape[:len(l.shape)-2], b.shape[:len(b.shape)-2])
	shape := append(cloneInts(batch), n, k)
	out := prepareDst(op, dst, l.dtype, shape, l, b)
	if dst != nil {
		if !dst.IsContiguous() {
			Fail(op, "destination %s is not contiguous", describe(dst))
		}
		if sharesStorage(dst, l) || sharesStorage(dst, b) {
			Fail(op, "destination %s overlaps an operand: %s", describe(dst), describe(l, b))
		}
	}
	if out.Size() == 0 {
		return out
	}
	if out.dev != nil || l.dev != nil || b.dev != nil {
		gpuTriMatMul(op, out, l, b, n, k, batch, transL, lowerOut)
		return out
	}
	// Both operands are read as row-major matrices.
	l, lda := rowMajor(l, n, n)
	b, ldb := rowMajor(b, n, k)
	loffs, boffs := matrixOffsets(l, batch), matrixOffsets(b, batch)
	if l.dtype == Float32 {
		triMatMulBatch[float32](l, loffs, lda, b, boffs, ldb, out, n, k, transL, lowerOut)
	} else {
		triMatMulBatch[float64](l, loffs, lda, b, boffs, ldb, out, n, k, transL, lowerOut)
	}
	return out
}

func triMatMulBatch[T Float](l *Tensor, loffs []int, lda int, b *Tensor, boffs []int, ldb int, out *Tensor, n, k int, trans, lowerOut bool) {
	L, B, C := storage[T](l), storage[T](b), storage[T](out)
	C = C[out.offset : out.offset+out.Size()]
	clear(C)
	for bi := range loffs {
		c := C[bi*n*k : (bi+1)*n*k]
		trmmLower(trans, lowerOut, n, k, L[loffs[bi]:], lda, B[boffs[bi]:], ldb, c, k)
		if lowerOut { // the recursion leaves partial sums above the diagonal
			for i := 0; i < n; i++ {
				clear(c[i*k+i+1 : (i+1)*k])
			}
		}
	}
}

// trmmLower adds op(L)·B to the n×k matrix C, L being the n×n lower
// triangle of a and op(L) L or Lᵀ. With lowerOut set (and k == n) only the
// lower triangle of C is guaranteed; entries above the diagonal may hold
// partial sums.
func trmmLower[T Float](trans, lowerOut bool, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if n == 0 || k == 0 {
		return
	}
	if n <= trmmBlock {
		trmmLowerSmall(trans, lowerOut, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	n1 := n / 2
	n2 := n - n1
	a21, a22 := a[n1*lda:], a[n1*lda+n1:]
	b2, c2 := b[n1*ldb:], c[n1*ldc:]
	if !lowerOut {
		if !trans { // C1 += L11 B1; C2 += L21 B1 + L22 B2
			trmmLower(false, false, n1, k, a, lda, b, ldb, c, ldc)
			gemmT(false, false, n2, k, n1, 1, a21, lda, b, ldb, 1, c2, ldc)
			trmmLower(false, false, n2, k, a22, lda, b2, ldb, c2, ldc)
			return
		}
		// C1 += L11ᵀ B1 + L21ᵀ B2; C2 += L22ᵀ B2
		trmmLower(true, false, n1, k, a, lda, b, ldb, c, ldc)
		gemmT(true, false, n1, k, n2, 1, a21, lda, b2, ldb, 1, c, ldc)
		trmmLower(true, false, n2, k, a22, lda, b2, ldb, c2, ldc)
		return
	}
	// Square blocks: C11 and C22 are needed in their lower triangles only,
	// C21 in full, C12 not at all.
	b12, b21, b22 := b[n1:], b2, b2[n1:]
	c21, c22 := c2, c2[n1:]
	if !trans {
		// C11 += L11 B11; C21 += L21 B11 + L22 B21; C22 += L21 B12 + L22 B22
		trmmLower(false, true, n1, n1, a, lda, b, ldb, c, ldc)
		gemmT(false, false, n2, n1, n1, 1, a21, lda, b, ldb, 1, c21, ldc)
		trmmLower(false, false, n2, n1, a22, lda, b21, ldb, c21, ldc)
		gemmT(false, false, n2, n2, n1, 1, a21, lda, b12, ldb, 1, c22, ldc)
		trmmLower(false, true, n2, n2, a22, lda, b22, ldb, c22, ldc)
		return
	}
	// C11 += L11ᵀ B11 + L21ᵀ B21; C21 += L22ᵀ B21; C22 += L22ᵀ B22
	trmmLower(true, true, n1, n1, a, lda, b, ldb, c, ldc)
	gemmT(true, false, n1, n1, n2, 1, a21, lda, b21, ldb, 1, c, ldc)
	trmmLower(true, false, n2, n1, a22, lda, b21, ldb, c21, ldc)
	trmmLower(true, true, n2, n2, a22, lda, b22, ldb, c22, ldc)
}

// trmmLowerSmall is trmmLower by rows: row i of C gains L[i][p]·B[p] for
// p ≤ i (or L[p][i]·B[p] for p ≥ i when transposed), over the first i+1
// columns only when just the lower triangle is wanted.
func trmmLowerSmall[T Float](trans, lowerOut bool, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	for i := 0; i < n; i++ {
		w := k
		if lowerOut {
			w = min(k, i+1)
		}
		ci := c[i*ldc : i*ldc+w]
		if !trans {
			for p := 0; p <= i; p++ {
				if m := a[i*lda+p]; m != 0 {
					axpy(m, b[p*ldb:p*ldb+w], ci)
				}
			}
			continue
		}
		for p := i; p < n; p++ {
			if m := a[p*lda+i]; m != 0 {
				axpy(m, b[p*ldb:p*ldb+w], ci)
			}
		}
	}
}

// SymmetrizeLower returns the symmetric matrices whose lower triangle
// (diagonal included) is that of the matrices in x (..., n, n): the lower
// triangle is copied and mirrored above the diagonal, which is not read.
// It panics with a *Error when x is not a stack of square matrices.
func SymmetrizeLower(x *Tensor) *Tensor { return SymmetrizeLowerTo(nil, x) }

// SymmetrizeLowerTo is SymmetrizeLower writing into dst (nil allocates).
// dst must be contiguous with x's shape and dtype; it may be x itself.
func SymmetrizeLowerTo(dst, x *Tensor) *Tensor {
	const op = "SymmetrizeLower"
	n := checkSquare(op, x)
	out := prepareDst(op, dst, x.dtype, x.shape, x)
	if dst != nil && !dst.IsContiguous() {
		Fail(op, "destination %s is not contiguous", describe(dst))
	}
	if out.Size() == 0 {
		return out
	}
	if out.dev != nil || x.dev != nil {
		gpuSymmetrizeLower(out, x, n)
		return out
	}
	if out != x {
		CopyInto(out, x) // contiguous copy; the mirror then works in place
	}
	if out.dtype == Float32 {
		symLowerKernel(storage[float32](out)[out.offset:out.offset+out.Size()], n)
	} else {
		symLowerKernel(storage[float64](out)[out.offset:out.offset+out.Size()], n)
	}
	return out
}

// symLowerKernel mirrors the strict lower triangle of each n×n matrix in x
// onto its upper one.
func symLowerKernel[T Float](x []T, n int) {
	for m := 0; m+n*n <= len(x); m += n * n {
		mirrorLower(x[m:m+n*n], n, n, 1, 1)
	}
}

// mirrorLower scales the strict lower triangle of the n×n matrix a
// (leading dimension lda) by off and its diagonal by diag, and copies the
// scaled strict lower triangle onto the upper one. It works in square
// tiles so that the transposed writes stay in cache. Blocks of rows of
// equal area go to the goroutines (splitTriangle): a block reads and
// writes only below the diagonal in its own rows and above it in its own
// columns, so no two blocks touch one entry.
func mirrorLower[T Float](a []T, n, lda int, off, diag T) {
	splitTriangle(n, n*n, func(r0, r1 int) { mirrorLowerRows(a, r0, r1, lda, off) })
	if diag != 1 {
		for i := 0; i < n; i++ {
			a[i*lda+i] *= diag
		}
	}
}

// mirrorLowerRows is mirrorLower's off-diagonal pass for rows [r0, r1),
// in tiles of 64 × 64 that keep the rows written across in the L1 cache,
// and within a tile in blocks of 4 × 4 read as four rows and written as
// four (entry by entry, the transposed writes were half of the time of
// CholeskyGrad at order 500's final pass, 2 ns an entry).
func mirrorLowerRows[T Float](a []T, r0, r1, lda int, off T) {
	const tile = 64
	for ib := r0; ib < r1; ib += tile {
		ie := min(ib+tile, r1)
		for jb := 0; jb < ie; jb += tile {
			i := ib
			for ; i+4 <= ie; i += 4 {
				j := jb
				for ; j+4 <= min(jb+tile, i); j += 4 {
					mirror4x4(a, i, j, lda, off)
				}
				for k := range 4 {
					for jj := j; jj < min(jb+tile, i+k); jj++ {
						v := a[(i+k)*lda+jj] * off
						a[(i+k)*lda+jj] = v
						a[jj*lda+i+k] = v
					}
				}
			}
			for ; i < ie; i++ {
				for j := jb; j < min(jb+tile, i); j++ {
					v := a[i*lda+j] * off
					a[i*lda+j] = v
					a[j*lda+i] = v
				}
			}
		}
	}
}

// mirror4x4 scales the 4 × 4 block of a at rows i…, columns j… (below the
// diagonal: j+3 < i) by off and writes its transpose at rows j…, columns i….
func mirror4x4[T Float](a []T, i, j, lda int, off T) {
	x0 := a[i*lda+j : i*lda+j+4 : i*lda+j+4]
	x1 := a[(i+1)*lda+j : (i+1)*lda+j+4 : (i+1)*lda+j+4]
	x2 := a[(i+2)*lda+j : (i+2)*lda+j+4 : (i+2)*lda+j+4]
	x3 := a[(i+3)*lda+j : (i+3)*lda+j+4 : (i+3)*lda+j+4]
	if off != 1 {
		for q := range 4 {
			x0[q] *= off
			x1[q] *= off
			x2[q] *= off
			x3[q] *= off
		}
	}
	for q := range 4 {
		y := a[(j+q)*lda+i : (j+q)*lda+i+4 : (j+q)*lda+i+4]
		y[0], y[1], y[2], y[3] = x0[q], x1[q], x2[q], x3[q]
	}
}

// rowMajor returns t and the leading dimension of its trailing r×c
// matrices when they are stored row-major, else a contiguous copy of t
// (such layouts are rare where the kernels need row-major operands).
func rowMajor(t *Tensor, r, c int) (*Tensor, int) {
	nd := len(t.shape)
	if tr, ld, ok := layoutOf(r, c, t.strides[nd-2], t.strides[nd-1]); ok && !tr {
		return t, ld
	}
	t = t.Clone()
	_, ld, _ := layoutOf(r, c, t.strides[nd-2], t.strides[nd-1])
	return t, ld
}
