package tensor

import "math"

// sqDistDirectMax is the number of features up to which SqDist sums the
// squared differences directly. Beyond it the expansion
// ‖a‖² + ‖b‖² − 2a·b puts the work in GEMM, at the price of rounding
// (clamped at zero) where the points nearly coincide.
const sqDistDirectMax = 32

// SqDist returns the pairwise squared Euclidean distances between the rows
// of a (n, d) and b (m, d): out[i, j] = Σₖ (a[i, k] − b[j, k])², shape
// (n, m). With up to 32 features the differences are summed directly, so
// the result is exact to rounding, never negative and exactly zero for
// equal rows; with more it goes through a matrix product, is clamped at
// zero, and its diagonal is set to zero when b is a itself. It panics with
// a *Error when an operand is not 2-D, the feature counts differ or the
// dtypes differ.
func SqDist(a, b *Tensor) *Tensor { return sqDist("SqDist", nil, a, b) }

// SqDistTo is SqDist writing into dst (nil allocates). dst must be
// contiguous with shape (n, m) and the operands' dtype, and must not
// overlap them.
func SqDistTo(dst, a, b *Tensor) *Tensor { return sqDist("SqDistTo", dst, a, b) }

func sqDist(op string, dst, a, b *Tensor) *Tensor {
	sameDType(op, a, b)
	if len(a.shape) != 2 || len(b.shape) != 2 || a.shape[1] != b.shape[1] {
		Fail(op, "need points (n, d) and (m, d) with the same d, got %s", describe(a, b))
	}
	out := prepareDst(op, dst, a.dtype, []int{a.shape[0], b.shape[0]}, a, b)
	if dst != nil {
		if !dst.IsContiguous() {
			Fail(op, "destination %s is not contiguous", describe(dst))
		}
		if sharesStorage(dst, a) || sharesStorage(dst, b) {
			Fail(op, "destination %s overlaps an operand: %s", describe(dst), describe(a, b))
		}
	}
	return sqDistTrusted(out, a, b)
}

// sqDistTrusted is SqDistTo after validation, the trusted kernel graph
// calls (internal/unchecked): a (n, d) and b (m, d) share out's dtype, and
// out is a contiguous (n, m) overlapping neither.
func sqDistTrusted(out, a, b *Tensor) *Tensor {
	n, m, d := a.shape[0], b.shape[0], a.shape[1]
	same := a == b
	if out.Size() == 0 {
		return out
	}
	if out.dev != nil || a.dev != nil || b.dev != nil {
		gpuSqDist(out, a, b, same)
		return out
	}
	if d > sqDistDirectMax {
		// ‖aᵢ‖² + ‖bⱼ‖² − 2aᵢ·bⱼ
		MatMulTTo(out, MulScalar(a, -2), b, false, true)
		AddTo(out, out, Sum(Square(a), []int{1}, true))
		AddTo(out, out, Reshape(Sum(Square(b), []int{1}, false), 1, m))
		ClampTo(out, out, 0, math.Inf(1))
		if same {
			for i := range n {
				out.SetAt(0, i, i)
			}
		}
		return out
	}
	// Features-major copies make the inner loop run along contiguous rows.
	at, bt := Transpose(a).Contiguous(), Transpose(b).Contiguous()
	if a.dtype == Float32 {
		sqDistDirect(storage[float32](at)[at.offset:], storage[float32](bt)[bt.offset:], storage[float32](out)[out.offset:], n, m, d)
	} else {
		sqDistDirect(storage[float64](at)[at.offset:], storage[float64](bt)[bt.offset:], storage[float64](out)[out.offset:], n, m, d)
	}
	return out
}

// sqDistDirect fills the n×m matrix out with Σₖ (a[k][i] − b[k][j])² for
// the feature-major a (d×n) and b (d×m), in parallel over rows.
func sqDistDirect[T Float](a, b, out []T, n, m, d int) {
	linalgParallel(n, max(1, triSplitWork/max(1, m*d)), func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			row := out[i*m : (i+1)*m]
			clear(row)
			for k := range d {
				ai := a[k*n+i]
				bk := b[k*m : (k+1)*m]
				for j, v := range bk {
					t := ai - v
					row[j] += t * t
				}
			}
		}
	})
}
