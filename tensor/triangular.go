package tensor

import (
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// Triangular solves. The kernels work on row-major matrices given as a
// slice starting at element (0, 0) and a leading dimension, and recurse by
// halving the triangle so that almost all of the work is done by GEMM; only
// blocks of at most triBlock rows fall back to substitution.

// triBlock is the order below which triangular solves use substitution.
// Substitution runs at a fraction of GEMM's speed, so the blocks are kept
// small; below about 16 the overhead of GEMM calls wins instead.
const triBlock = 16

// TriSolve solves op(A)·X = B for X, where A is triangular (lower or upper
// as the flag says) and op(A) is A or Aᵀ as trans says. a has shape
// (..., n, n); b has shape (..., n, k) for k right-hand sides, or is 1-D of
// length n for one. The leading (batch) dimensions of a and b broadcast.
// Only the selected triangle of A is read, the rest is ignored. A zero on
// the diagonal gives infinities or NaNs in the result rather than an error.
// TriSolve panics with a *Error when a is not square, the shapes do not
// fit or the dtypes differ.
func TriSolve(a, b *Tensor, lower, trans bool) *Tensor {
	return triSolveSteps("TriSolve", nil, a, b, triStep{lower: lower, trans: trans})
}

// CholeskySolve returns A⁻¹·B given the lower Cholesky factor l of A
// (A = L·Lᵀ), by the two triangular solves L·Y = B and Lᵀ·X = Y. Shapes and
// panics are as for TriSolve.
func CholeskySolve(l, b *Tensor) *Tensor {
	return triSolveSteps("CholeskySolve", nil, l, b, triStep{lower: true}, triStep{lower: true, trans: true})
}

// TriSolveTo is TriSolve writing X into dst (nil allocates), so a loop
// solving systems of fixed size need not allocate. dst must be contiguous
// with the result's shape and dtype and must not overlap a; it may be b
// itself, which is then overwritten.
func TriSolveTo(dst, a, b *Tensor, lower, trans bool) *Tensor {
	return triSolveSteps("TriSolveTo", dst, a, b, triStep{lower: lower, trans: trans})
}

// CholeskySolveTo is CholeskySolve writing X into dst (nil allocates), with
// dst as for TriSolveTo.
func CholeskySolveTo(dst, l, b *Tensor) *Tensor {
	return triSolveSteps("CholeskySolveTo", dst, l, b, triStep{lower: true}, triStep{lower: true, trans: true})
}

// triStep is one triangular solve applied in place to the right-hand sides.
type triStep struct{ lower, trans bool }

func triSolveSteps(op string, dst, a, b *Tensor, steps ...triStep) *Tensor {
	x, n, k, batch := solveSetupTo(op, dst, a, b)
	if x.Size() == 0 {
		return x
	}
	if x.dev != nil || a.dev != nil {
		gpuTriSolve(op, x, a, n, k, batch, steps)
		return x
	}
	// A transposed view (such as Transpose(l)) is solved in place as its
	// storage's transpose: the lower triangle of Mᵀ is the upper one of M.
	nd := len(a.shape)
	tr, ld, ok := layoutOf(n, n, a.strides[nd-2], a.strides[nd-1])
	if !ok {
		a = a.Clone()
		tr, ld = false, n
	}
	if tr {
		flipped := make([]triStep, len(steps))
		for i, s := range steps {
			flipped[i] = triStep{lower: !s.lower, trans: !s.trans}
		}
		steps = flipped
	}
	offs := matrixOffsets(a, batch)
	if a.dtype == Float32 {
		triSolveBatch[float32](a, offs, ld, x, n, k, steps)
	} else {
		triSolveBatch[float64](a, offs, ld, x, n, k, steps)
	}
	return x
}

func triSolveBatch[T Float](a *Tensor, offs []int, lda int, x *Tensor, n, k int, steps []triStep) {
	A, X := storage[T](a), storage[T](x)
	linalgParallel(len(offs), max(1, triSplitWork/(n*n*k)), func(b0, b1 int) {
		for bi := b0; bi < b1; bi++ {
			xb := X[bi*n*k : (bi+1)*n*k]
			for _, s := range steps {
				trsmLeft(s.lower, s.trans, false, n, k, A[offs[bi]:], lda, xb, k)
			}
		}
	})
}

// solveSetup checks the operands of a solve with a square (..., n, n) and b
// (..., n, k) or (n,), and returns a fresh contiguous copy of b broadcast
// to the batch (with the result's shape), n, k and the batch shape.
func solveSetup(op string, a, b *Tensor) (x *Tensor, n, k int, batch []int) {
	return solveSetupTo(op, nil, a, b)
}

// solveSetupTo is solveSetup copying b into dst instead when dst is not
// nil; dst must be contiguous, shaped like the result and apart from a.
func solveSetupTo(op string, dst, a, b *Tensor) (x *Tensor, n, k int, batch []int) {
	sameDType(op, a, b)
	n = checkSquare(op, a)
	abatch := a.shape[:len(a.shape)-2]
	if len(b.shape) == 0 || (len(b.shape) == 1 && b.shape[0] != n) || (len(b.shape) >= 2 && b.shape[len(b.shape)-2] != n) {
		Fail(op, "right-hand side does not fit the matrix: %s (want (..., %d, k) or (%d,))", describe(a, b), n, n)
	}
	if len(b.shape) == 1 {
		batch = cloneInts(abatch)
		k = 1
		x = solveDst(op, dst, a, b, append(cloneInts(batch), n))
		return x, n, k, batch
	}
	k = b.shape[len(b.shape)-1]
	batch = BroadcastShapes(op, abatch, b.shape[:len(b.shape)-2])
	x = solveDst(op, dst, a, b, append(cloneInts(batch), n, k))
	return x, n, k, batch
}

// solveDst returns dst (checked) or a new tensor of the given shape,
// holding a copy of b broadcast to it.
func solveDst(op string, dst, a, b *Tensor, shape []int) *Tensor {
	x := prepareDst(op, dst, a.dtype, shape, a, b)
	if dst != nil {
		if !dst.IsContiguous() {
			Fail(op, "destination %s is not contiguous", describe(dst))
		}
		if sharesStorage(dst, a) {
			Fail(op, "destination %s overlaps the matrix %s", describe(dst), describe(a))
		}
		if dst == b {
			return x
		}
		if sharesStorage(dst, b) {
			b = b.Clone()
		}
	}
	CopyInto(x, b)
	return x
}

// checkSquare panics unless t has at least 2 dimensions and its last two
// are equal; it returns their size.
func checkSquare(op string, t *Tensor) int {
	nd := len(t.shape)
	if nd < 2 || t.shape[nd-1] != t.shape[nd-2] {
		Fail(op, "need a square matrix or a batch of them (..., n, n), got %s", describe(t))
	}
	return t.shape[nd-1]
}

// matrixOffsets returns the storage offset of the trailing matrix of t for
// each index of batch, in row-major order; t's leading dimensions broadcast
// to batch.
func matrixOffsets(t *Tensor, batch []int) []int {
	nb := shapeSize(batch)
	offs := make([]int, nb)
	if nb == 0 {
		return offs
	}
	tb := len(t.shape) - 2
	lead := len(batch) - tb
	str := make([]int, len(batch))
	for i := range batch {
		if j := i - lead; j >= 0 && t.shape[j] != 1 {
			str[i] = t.strides[j]
		}
	}
	idx := make([]int, len(batch))
	off := t.offset
	for bi := range offs {
		offs[bi] = off
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d]++
			off += str[d]
			if idx[d] < batch[d] {
				break
			}
			off -= str[d] * batch[d]
			idx[d] = 0
		}
	}
	return offs
}

// trsmLeft overwrites the n×k matrix B with the solution X of op(A)·X = B,
// where A is n×n lower or upper triangular and op(A) is A or Aᵀ. With unit
// set the diagonal of A is taken to be 1 and not read.
func trsmLeft[T Float](lower, trans, unit bool, n, k int, a []T, lda int, b []T, ldb int) {
	if n == 0 || k == 0 {
		return
	}
	if k <= trsvMaxCols {
		trsvCols(lower, trans, unit, n, k, a, lda, b, ldb)
		return
	}
	if n <= triBlock {
		// Columns of X are independent: split wide right-hand sides so the
		// substitution does not leave the other cores idle between GEMMs.
		linalgParallel(k, triSplitWork/n, func(j0, j1 int) {
			trsmLeftSmall(lower, trans, unit, n, j1-j0, a, lda, b[j0:], ldb)
		})
		return
	}
	n1 := n / 2
	n2 := n - n1
	a22 := a[n1*lda+n1:]
	b2 := b[n1*ldb:]
	if lower != trans { // op(A) is lower triangular: forward
		trsmLeft(lower, trans, unit, n1, k, a, lda, b, ldb)
		if !trans { // op(A)21 = A21
			gemmT(false, false, n2, k, n1, -1, a[n1*lda:], lda, b, ldb, 1, b2, ldb)
		} else { // op(A)21 = A12ᵀ
			gemmT(true, false, n2, k, n1, -1, a[n1:], lda, b, ldb, 1, b2, ldb)
		}
		trsmLeft(lower, trans, unit, n2, k, a22, lda, b2, ldb)
		return
	}
	// op(A) is upper triangular: backward.
	trsmLeft(lower, trans, unit, n2, k, a22, lda, b2, ldb)
	if !trans { // op(A)12 = A12
		gemmT(false, false, n1, k, n2, -1, a[n1:], lda, b2, ldb, 1, b, ldb)
	} else { // op(A)12 = A21ᵀ
		gemmT(true, false, n1, k, n2, -1, a[n1*lda:], lda, b2, ldb, 1, b, ldb)
	}
	trsmLeft(lower, trans, unit, n1, k, a, lda, b, ldb)
}

// trsmLeftSmall is trsmLeft by row-oriented substitution: each row of X is
// its row of B minus multiples of the rows already solved.
func trsmLeftSmall[T Float](lower, trans, unit bool, n, k int, a []T, lda int, b []T, ldb int) {
	at := func(i, j int) T {
		if trans {
			return a[j*lda+i]
		}
		return a[i*lda+j]
	}
	solveRow := func(i, p0, p1 int) {
		xi := b[i*ldb : i*ldb+k]
		for p := p0; p < p1; p++ {
			if m := at(i, p); m != 0 {
				axpy(-m, b[p*ldb:p*ldb+k], xi)
			}
		}
		if !unit {
			d := at(i, i)
			for j := range xi {
				xi[j] /= d
			}
		}
	}
	if lower != trans {
		for i := 0; i < n; i++ {
			solveRow(i, 0, i)
		}
		return
	}
	for i := n - 1; i >= 0; i-- {
		solveRow(i, i+1, n)
	}
}

// axpy sets y += alpha·x for equal-length x and y.
func axpy[T Float](alpha T, x, y []T) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y4, x4 := y[i:i+4:i+4], x[i:i+4:i+4]
		y4[0] += alpha * x4[0]
		y4[1] += alpha * x4[1]
		y4[2] += alpha * x4[2]
		y4[3] += alpha * x4[3]
	}
	for ; i < len(y); i++ {
		y[i] += alpha * x[i]
	}
}

// trsmRightLowerT overwrites the m×n matrix B with X solving X·Lᵀ = B for
// the n×n lower triangular L (the panel solve of a Cholesky factorisation:
// L21 = A21·L11⁻ᵀ). Rows of B are independent: blocks of them go to the
// goroutines (splitRows), each solved by the serial recursion.
func trsmRightLowerT[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	splitRows(m, m*n*n/2, func(r0, r1 int) { trsmRightLowerTSerial(r1-r0, n, l, ldl, b[r0*ldb:], ldb) })
}

// trsmRightLowerTSerial is trsmRightLowerT on the calling goroutine.
func trsmRightLowerTSerial[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	if m == 0 || n == 0 {
		return
	}
	if n <= triBlock {
		trsmRightLowerTSmall(m, n, l, ldl, b, ldb)
		return
	}
	n1 := n / 2
	n2 := n - n1
	trsmRightLowerTSerial(m, n1, l, ldl, b, ldb)
	// X2·L22ᵀ = B2 − X1·L21ᵀ
	gemmSerialT(false, true, m, n2, n1, -1, b, ldb, l[n1*ldl:], ldl, 1, b[n1:], ldb)
	trsmRightLowerTSerial(m, n2, l[n1*ldl+n1:], ldl, b[n1:], ldb)
}

// trsmRightLowerTSmall is trsmRightLowerT by substitution along each row,
// four rows at a time so that every entry of L loaded serves four
// independent sums.
func trsmRightLowerTSmall[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	r := 0
	for ; r+4 <= m; r += 4 {
		x0 := b[r*ldb : r*ldb+n]
		x1 := b[(r+1)*ldb : (r+1)*ldb+n]
		x2 := b[(r+2)*ldb : (r+2)*ldb+n]
		x3 := b[(r+3)*ldb : (r+3)*ldb+n]
		for j := 0; j < n; j++ {
			lj := l[j*ldl : j*ldl+j]
			a0, a1, a2, a3 := x0[:len(lj)], x1[:len(lj)], x2[:len(lj)], x3[:len(lj)]
			s0, s1, s2, s3 := x0[j], x1[j], x2[j], x3[j]
			for p, v := range lj {
				s0 -= v * a0[p]
				s1 -= v * a1[p]
				s2 -= v * a2[p]
				s3 -= v * a3[p]
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
		for j := 0; j < n; j++ {
			lj := l[j*ldl : j*ldl+j]
			a := x[:len(lj)]
			s := x[j]
			for p, v := range lj {
				s -= v * a[p]
			}
			x[j] = s / l[j*ldl+j]
		}
	}
}

// triSplitWork is roughly the number of multiply-adds below which splitting
// a substitution over goroutines costs more than it saves.
const triSplitWork = 1 << 16

// linalgParallel calls fn on contiguous chunks covering [0, n), up to
// GOMAXPROCS of them, in parallel when n is at least twice minChunk, else
// once on the calling goroutine. The chunks depend on n, minChunk and
// GOMAXPROCS only; they are claimed in order by the calling goroutine and
// GEMM's polling helpers (gemm.ParallelFor), so on a busy machine, where
// a helper may not be scheduled for milliseconds, the caller goes on to
// do the chunks no helper has claimed instead of waiting for them.
func linalgParallel(n, minChunk int, fn func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n/max(1, minChunk))
	if p < 2 {
		fn(0, n)
		return
	}
	gemm.ParallelFor(p, p, func(i int) { fn(i*n/p, (i+1)*n/p) })
}
