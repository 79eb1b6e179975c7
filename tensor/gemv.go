package tensor

// gemv computes the plain products that are matrix-vector products,
// c (m×1) = op(A)·b or c (1×n) = a·op(B), through the four-row kernels of
// the symmetric product (rowsDotFast, rowsCombineFast): GEMM would pack
// the whole matrix, a copy as large as the product's one reading of it,
// and pad the vector out to its register tiles (at n = 1000 a float64
// A·x took 620 µs through GEMM, 359 µs as plain row dot products, 150-180
// µs here). It reports false, computing nothing, where it does not apply:
// a vector that is not contiguous, a depth below 2, or a product that is
// not a matrix-vector one.
func gemv[T Float](c, A, B []T, oa, ob matOperand, m, n, k int) bool {
	if k < 2 {
		return false
	}
	a, b := A[oa.t.offset:], B[ob.t.offset:]
	switch {
	case n == 1 && m > 1:
		if !ob.trans && ob.ld != 1 { // the column op(B) is strided
			return false
		}
		x := b[:k]
		if oa.trans { // A is stored k×m: c = Σ_p x_p·A(p, :)
			work := workGet[T](m)
			defer workPut(work)
			rowsCombineFast(a, oa.ld, 0, k, 0, m, x, c[:m], work)
		} else { // c_i = A(i, :)·x
			rowsDotFast(a, oa.ld, 0, m, 0, k, x, c[:m])
		}
	case m == 1 && n > 1:
		if oa.trans && oa.ld != 1 { // the row op(A) is strided
			return false
		}
		x := a[:k]
		if ob.trans { // B is stored n×k: c_j = B(j, :)·x
			rowsDotFast(b, ob.ld, 0, n, 0, k, x, c[:n])
		} else { // c = Σ_p x_p·B(p, :)
			work := workGet[T](n)
			defer workPut(work)
			rowsCombineFast(b, ob.ld, 0, k, 0, n, x, c[:n], work)
		}
	default:
		return false
	}
	return true
}
