package tensor

import "math"

// Matrix helpers on a GPU composed from the copy and elementwise kernels:
// a diagonal is a strided view, a triangular mask a product with a
// factor matrix made on the host.

// diagView is the diagonals of t's batched n×n matrices as a (batch..., n)
// view of t.
func diagView(t *Tensor) *Tensor {
	nb := len(t.shape) - 2
	v := *t
	v.shape = append(cloneInts(t.shape[:nb]), t.shape[nb+1])
	v.strides = append(cloneInts(t.strides[:nb]), t.strides[nb]+t.strides[nb+1])
	return &v
}

// gpuDiagonal is diagonalTrusted on a GPU.
func gpuDiagonal(dst, a *Tensor) {
	defer alive(dst, a)
	gpuCopy("Diagonal", dst, diagView(a))
}

// gpuAddDiag adds d (broadcast to the diagonals' shape) to the diagonals
// of dst, which holds a's copy.
func gpuAddDiag(dst, d *Tensor) {
	defer alive(dst, d)
	dv := diagView(dst)
	gpuBinary("Add", dv, dv, expandTrusted(d, dv.shape))
}

// gpuTriMask sets dst = src·w for src's stacked r×c matrices, w lower
// below the diagonal, diag on it and upper above.
func gpuTriMask(dst, src *Tensor, lower, diag, upper float64) {
	defer alive(dst, src)
	r, c := src.shape[len(src.shape)-2], src.shape[len(src.shape)-1]
	w := New(src.dtype, r, c)
	for i := range r {
		for j := range c {
			v := upper
			if j < i {
				v = lower
			} else if j == i {
				v = diag
			}
			w.setFlat(i*c+j, v)
		}
	}
	wd := w.To(dst.Device())
	defer wd.release()
	gpuBinary("Mul", dst, src, expandTrusted(wd, src.shape))
}

// gpuSqDist is sqDistTrusted on a GPU: ‖aᵢ‖² + ‖bⱼ‖² − 2aᵢ·bⱼ through a
// product, clamped at 0, with a zero diagonal when a is b.
func gpuSqDist(out, a, b *Tensor, same bool) {
	defer alive(out, a, b)
	m := b.shape[0]
	MatMulTTo(out, MulScalar(a, -2), b, false, true)
	AddTo(out, out, Sum(Square(a), []int{1}, true))
	AddTo(out, out, Reshape(Sum(Square(b), []int{1}, false), 1, m))
	ClampTo(out, out, 0, math.Inf(1))
	if same {
		diagView(out).Fill(0)
	}
}

// gpuSymmetrizeLower sets out to x's lower triangle mirrored above the
// diagonal: where(j ≤ i, x, xᵀ), through a scratch tensor since out may
// be x.
func gpuSymmetrizeLower(out, x *Tensor, n int) {
	defer alive(out, x)
	const op = "SymmetrizeLower"
	cond := New(x.dtype, n, n)
	for i := range n {
		for j := 0; j <= i; j++ {
			cond.setFlat(i*n+j, 1)
		}
	}
	cd := cond.To(out.Device())
	defer cd.release()
	nd := len(x.shape)
	perm := make([]int, nd)
	for i := range perm {
		perm[i] = i
	}
	perm[nd-2], perm[nd-1] = nd-1, nd-2
	tmp := newUninitOn(op, out.Device(), x.dtype, x.shape...)
	defer tmp.release()
	gpuWhere(tmp, expandTrusted(cd, x.shape), x, permuteTrusted(x, perm))
	gpuCopy(op, out, tmp)
}
