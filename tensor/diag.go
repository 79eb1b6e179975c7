package tensor

// Diagonal returns the diagonals of the square matrices a (..., n, n) as a
// new contiguous (..., n) tensor (a copy, not a view). It panics with a
// *Error when a has fewer than 2 dimensions or its last two differ.
func Diagonal(a *Tensor) *Tensor { return DiagonalTo(nil, a) }

// DiagonalTo is Diagonal writing into dst, which must be (..., n) with a's
// dtype and must not overlap a; a nil dst allocates. It returns dst.
func DiagonalTo(dst, a *Tensor) *Tensor {
	const op = "Diagonal"
	if a == nil {
		Fail(op, "nil operand")
	}
	n := checkSquare(op, a)
	nb := len(a.shape) - 2
	shape := append(cloneInts(a.shape[:nb]), n)
	dst = prepareDst(op, dst, a.dtype, shape, a)
	if sharesStorage(dst, a) {
		Fail(op, "destination %v overlaps the operand %v", describe(dst), describe(a))
	}
	return diagonalTrusted(dst, a)
}

// diagonalTrusted is DiagonalTo after validation, the trusted kernel graph
// calls (internal/unchecked): a is (..., n, n), dst is (..., n) of a's
// dtype and does not overlap a.
func diagonalTrusted(dst, a *Tensor) *Tensor {
	if dst.dev != nil || a.dev != nil {
		gpuDiagonal(dst, a)
		return dst
	}
	nb := len(a.shape) - 2
	n := a.shape[nb+1]
	if a.dtype == Float32 {
		diagonalKernel[float32](dst, a, nb, n)
	} else {
		diagonalKernel[float64](dst, a, nb, n)
	}
	return dst
}

// diagonalKernel copies the diagonal of each of a's nb-batched n×n
// matrices into the matching row of dst.
func diagonalKernel[T Float](dst, a *Tensor, nb, n int) {
	D, A := storage[T](dst), storage[T](a)
	ds, as := dst.strides[nb], a.strides[nb]+a.strides[nb+1]
	walk(a.shape[:nb], 2, [maxOperands]int{dst.offset, a.offset}, [maxOperands][]int{dst.strides[:nb], a.strides[:nb]},
		func(o [maxOperands]int, cnt int, s [maxOperands]int) {
			for r := 0; r < cnt; r++ {
				p, q := o[0]+r*s[0], o[1]+r*s[1]
				for i := 0; i < n; i++ {
					D[p] = A[q]
					p += ds
					q += as
				}
			}
		})
}

// AddDiag returns a + diag(d): a copy of the square matrices a (..., n, n)
// with d added to their diagonals. d is a scalar (0-d), added to every
// diagonal element, or (..., n), whose leading axes broadcast with a's
// batch axes; the result has the broadcast shape (..., n, n). It touches
// the n² elements once (a copy) plus n additions per matrix, where
// Add(a, Mul(d, Eye)) builds and streams through two more n×n matrices.
// It panics with a *Error when the dtypes differ or the shapes do not fit.
func AddDiag(a, d *Tensor) *Tensor { return AddDiagTo(nil, a, d) }

// AddDiagTo is AddDiag writing into dst, which must have the result's
// shape and dtype; a nil dst allocates. dst may be a itself (when a has
// the result's shape), which adds d in place and writes only the diagonal.
// It returns dst.
func AddDiagTo(dst, a, d *Tensor) *Tensor {
	const op = "AddDiag"
	if a == nil || d == nil {
		Fail(op, "nil operand")
	}
	sameDType(op, a, d)
	shape, n := addDiagShape(op, a, d)
	dst = prepareDst(op, dst, a.dtype, shape, a, d)
	// d is read after dst is written, so it must not share dst's storage;
	// a may only be dst itself, in which case the copy is skipped.
	checkOverlap(op, dst, a)
	if sharesStorage(dst, d) {
		Fail(op, "destination %v overlaps the diagonal operand %v", describe(dst), describe(d))
	}
	if !sharesStorage(dst, a) { // else dst is a's very view (checkOverlap)
		CopyInto(dst, a)
	}
	return addDiagKernels(dst, d, n)
}

// addDiagTrusted is AddDiagTo after validation, the trusted kernel graph
// calls (internal/unchecked): a (..., n, n) and the diagonal d ((), or
// (..., n)) share dst's dtype, their batch axes broadcast to dst's, which
// is (..., n, n), and dst overlaps neither.
func addDiagTrusted(dst, a, d *Tensor) *Tensor {
	copyTrusted(dst, expandTrusted(a, dst.shape))
	return addDiagKernels(dst, d, dst.shape[len(dst.shape)-1])
}

// addDiagKernels adds d to the diagonals of dst, which holds a's copy.
func addDiagKernels(dst, d *Tensor, n int) *Tensor {
	if dst.dev != nil || d.dev != nil {
		gpuAddDiag(dst, d)
		return dst
	}
	nb := len(dst.shape) - 2
	dv := expandTrusted(d, append(cloneInts(dst.shape[:nb]), n))
	if dst.dtype == Float32 {
		addDiagKernel[float32](dst, dv, nb, n)
	} else {
		addDiagKernel[float64](dst, dv, nb, n)
	}
	return dst
}

// addDiagShape checks AddDiag's operands and returns the result's shape
// and the matrices' size n.
func addDiagShape(op string, a, d *Tensor) ([]int, int) {
	if len(a.shape) < 2 || a.shape[len(a.shape)-1] != a.shape[len(a.shape)-2] {
		Fail(op, "need square matrices (..., n, n) and a diagonal (), (n,) or (..., n), got %s", describe(a, d))
	}
	nb := len(a.shape) - 2
	n := a.shape[nb+1]
	if len(d.shape) == 0 {
		return cloneInts(a.shape), n
	}
	if d.shape[len(d.shape)-1] != n {
		Fail(op, "diagonal %v does not fit the %d×%d matrices: %s", fmtShape(d.shape), n, n, describe(a, d))
	}
	ab, db := a.shape[:nb], d.shape[:len(d.shape)-1]
	if !Broadcastable(ab, db) {
		Fail(op, "batch axes of the matrices and the diagonal do not broadcast: %s", describe(a, d))
	}
	return append(BroadcastShapes(op, ab, db), n, n), n
}

// addDiagKernel adds row b of dv (..., n) to the diagonal of matrix b of
// dst (..., n, n); dv may be a broadcast view.
func addDiagKernel[T Float](dst, dv *Tensor, nb, n int) {
	D, V := storage[T](dst), storage[T](dv)
	ds, vs := dst.strides[nb]+dst.strides[nb+1], dv.strides[nb]
	walk(dst.shape[:nb], 2, [maxOperands]int{dst.offset, dv.offset}, [maxOperands][]int{dst.strides[:nb], dv.strides[:nb]},
		func(o [maxOperands]int, cnt int, s [maxOperands]int) {
			for r := 0; r < cnt; r++ {
				p, q := o[0]+r*s[0], o[1]+r*s[1]
				for i := 0; i < n; i++ {
					D[p] += V[q]
					p += ds
					q += vs
				}
			}
		})
}
