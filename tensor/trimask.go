package tensor

// TriMask returns a copy of the matrices a (..., m, n) with their strictly
// lower triangle, diagonal and strictly upper triangle multiplied by lower,
// diag and upper: Tril is (1, 1, 0), Triu (0, 1, 1), and Murray's Φ of the
// Cholesky derivative (1, ½, 0). No mask matrix is built. It panics with a
// *Error when a has fewer than 2 dimensions.
func TriMask(a *Tensor, lower, diag, upper float64) *Tensor {
	return TriMaskTo(nil, a, lower, diag, upper)
}

// TriMaskTo is TriMask writing into dst, which must be contiguous with a's
// shape and dtype; dst may be a itself. A nil dst allocates. It returns dst.
func TriMaskTo(dst, a *Tensor, lower, diag, upper float64) *Tensor {
	const op = "TriMask"
	if a == nil {
		Fail(op, "nil operand")
	}
	if len(a.shape) < 2 {
		Fail(op, "operand %v is not a matrix (want rank >= 2)", describe(a))
	}
	dst = prepareDst(op, dst, a.dtype, a.shape, a)
	if !dst.IsContiguous() {
		Fail(op, "destination %v is not contiguous", describe(dst))
	}
	src := a
	if !a.IsContiguous() || (dst != a && sharesStorage(dst, a)) {
		CopyInto(dst, a)
		src = dst // masked in place
	}
	if dst.dev != nil || src.dev != nil {
		gpuTriMask(dst, src, lower, diag, upper)
		return dst
	}
	r, c := a.shape[len(a.shape)-2], a.shape[len(a.shape)-1]
	if a.dtype == Float32 {
		triMaskKernel(dst.Float32s(), src.Float32s(), r, c, float32(lower), float32(diag), float32(upper))
	} else {
		triMaskKernel(dst.Float64s(), src.Float64s(), r, c, lower, diag, upper)
	}
	return dst
}

// triMaskKernel sets dst = x·w for a stack of r×c matrices, w being lower,
// diag or upper by the element's position; dst may be x.
// The rows go to the goroutines in blocks (parallelRange), each row in
// up to three vector passes.
func triMaskKernel[T Float](dst, x []T, r, c int, lower, diag, upper T) {
	if r*c == 0 {
		return
	}
	rows := len(dst) / (r * c) * r
	parallelRange(rows, max(1, parallelElemMin/c), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := k % r
			row, xr := dst[k*c:(k+1)*c], x[k*c:(k+1)*c]
			d := min(i, c)
			mulScalarRun(row[:d], xr[:d], lower, 0)
			if i < c {
				row[i] = xr[i] * diag
				mulScalarRun(row[i+1:], xr[i+1:], upper, 0)
			}
		}
	})
}
