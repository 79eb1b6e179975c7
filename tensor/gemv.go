package tensor

// gemv computes the plain products that are matrix-vector products,
// c (m×1) = op(A)·b or c (1×n) = a·op(B), through the four-row kernels
// (rowsDotFast, rowsCombineFast): GEMM would pack
// the whole matrix, a copy as large as the product's one reading of it,
// and pad the vector out to its register tiles (at n = 1000 a float64
// A·x took 620 µs through GEMM, 359 µs as plain row dot products, 150-180
// µs through the symmetric product's kernel and 134 µs through dots4,
// one core of the Zen 3). It reports false, computing nothing, where it does not apply:
// a vector that is not contiguous, a depth below 2, or a product that is
// not a matrix-vector one.
func gemv[T Float](c, A, B []T, oa, ob matOperand, m, n, k int, accumulate bool) bool {
	if k < 2 {
		return false
	}
	a, b := A[oa.t.offset:], B[ob.t.offset:]
	// The matrix, read as rows (dots with the vector) or as a combination
	// of its rows (the vector's entries as weights), and the length of the
	// result.
	var mat, x []T
	var ld, rows, cols int
	var combine bool
	switch {
	case n == 1 && m > 1:
		if !ob.trans && ob.ld != 1 { // the column op(B) is strided
			return false
		}
		x, mat, ld = b[:k], a, oa.ld
		if oa.trans { // A is stored k×m: c = Σ_p x_p·A(p, :)
			combine, rows, cols = true, k, m
		} else { // c_i = A(i, :)·x
			rows, cols = m, k
		}
	case m == 1 && n > 1:
		if oa.trans && oa.ld != 1 { // the row op(A) is strided
			return false
		}
		x, mat, ld = a[:k], b, ob.ld
		if ob.trans { // B is stored n×k: c_j = B(j, :)·x
			rows, cols = n, k
		} else { // c = Σ_p x_p·B(p, :)
			combine, rows, cols = true, k, n
		}
	default:
		return false
	}
	size := m * n
	out := c[:size]
	if accumulate { // c + product, as GEMM with β = 1 adds
		out = workGet[T](size)
		defer workPut(out)
	}
	if combine {
		rowsCombineFast(mat, ld, 0, rows, 0, cols, x, out)
	} else {
		rowsDotFast(mat, ld, 0, rows, 0, cols, x, out)
	}
	if accumulate {
		for i, v := range out {
			c[i] += v
		}
	}
	return true
}
