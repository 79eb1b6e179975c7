package tensor

import "fmt"

// Eigh, QR and SVD on a GPU through cuSOLVER's syevd, geqrf/orgqr and
// gesvd, one matrix of a batch at a time. cuSOLVER works on column-major
// matrices, so each operand is copied transposed (a row-major matrix read
// column-major is its transpose) and the factors come back through
// transposed views; the CPU's sign conventions (R's diagonal
// non-negative, each vᵢ's entry of largest magnitude positive) are then
// applied with elementwise kernels.

// gpuFinite returns an error wrapping ErrNotFinite naming the first of
// the nb contiguous matrices of size elems in t that has a NaN or an
// infinity, or nil.
func gpuFinite(op string, t *Tensor, nb, elems int) error {
	be, dt := t.dev.be, devDType(t.dtype)
	bad, err := be.NonFinite(dt, nb*elems, t.mem())
	gpuCheck(op, err)
	for bi := 0; bad && bi < nb; bi++ {
		b, err := be.NonFinite(dt, elems, memAt(t, t.offset+bi*elems))
		gpuCheck(op, err)
		if b {
			return fmt.Errorf("tensor.%s: matrix %d: %w", op, bi, ErrNotFinite)
		}
	}
	return nil
}

// notConverged returns an error for the first matrix whose info is
// positive, or nil.
func notConverged(op, call string, info []int32) error {
	for bi, v := range info {
		if v > 0 {
			return fmt.Errorf("tensor.%s: matrix %d: did not converge (cuSOLVER %s info %d)", op, bi, call, v)
		}
	}
	return nil
}

// signs returns, on t's device, −1 where x < 0 and 1 elsewhere.
func signs(x *Tensor) *Tensor {
	zero, one := Scalar(x.dtype, 0).To(x.Device()), Scalar(x.dtype, 1).To(x.Device())
	return Where(Less(x, zero), Neg(one), one)
}

// gpuEigh is Eigh on a GPU.
func gpuEigh(a *Tensor, n int) (w, v *Tensor, err error) {
	const op = "Eigh"
	defer alive(a)
	st := sameDevice(op, a)
	batch := a.shape[:len(a.shape)-2]
	nb := shapeSize(batch)
	w = newUninitOn(op, a.Device(), a.dtype, append(cloneInts(batch), n)...)
	v = newUninitOn(op, a.Device(), a.dtype, a.shape...)
	if nb == 0 || n == 0 {
		return w, v, nil
	}
	z := newUninitOn(op, a.Device(), a.dtype, a.shape...)
	defer z.release()
	gpuCopy(op, z, a)
	gpuKeepLower(z, n, 1) // only the lower triangle counts, NaNs above too
	if err := gpuFinite(op, z, nb, n*n); err != nil {
		return nil, nil, err
	}
	info := newInfoWords(op, st.be, nb)
	defer info.free()
	for bi := range nb {
		gpuCheck(op, st.be.Syevd(devDType(a.dtype), n, memAt(z, bi*n*n), memAt(w, bi*n), info.at(bi)))
	}
	if err := notConverged(op, "syevd", info.read(op, nb)); err != nil {
		return nil, nil, err
	}
	gpuCopy(op, v, Transpose(z)) // the eigenvectors are z's rows
	return w, v, nil
}

// rectDiag is the diagonals of t's batched r×c matrices, (batch..., k).
func rectDiag(t *Tensor, k int) *Tensor {
	nb := len(t.shape) - 2
	d := *t
	d.shape = append(cloneInts(t.shape[:nb]), k)
	d.strides = append(cloneInts(t.strides[:nb]), t.strides[nb]+t.strides[nb+1])
	return &d
}

// withShape returns t's shape with the last two axes replaced by r, c.
func withShape(t *Tensor, r, c int) []int {
	return append(cloneInts(t.shape[:len(t.shape)-2]), r, c)
}

// gpuQR is QR on a GPU, a holding at least one element.
func gpuQR(a *Tensor, m, n int) (q, r *Tensor, err error) {
	const op = "QR"
	defer alive(a)
	st := sameDevice(op, a)
	k, nb := min(m, n), a.Size()/(m*n)
	dev, dt := a.Device(), devDType(a.dtype)
	work := newUninitOn(op, dev, a.dtype, withShape(a, n, m)...) // column-major m×n
	defer work.release()
	gpuCopy(op, work, Transpose(a))
	if err := gpuFinite(op, work, nb, m*n); err != nil {
		return nil, nil, err
	}
	rt := newUninitOn(op, dev, a.dtype, withShape(a, n, k)...) // column-major k×n
	defer rt.release()
	tau := newUninitOn(op, dev, a.dtype, nb*k)
	defer tau.release()
	info := newInfoWords(op, st.be, nb)
	defer info.free()
	for bi := range nb {
		gpuCheck(op, st.be.QR(dt, m, n, memAt(work, bi*m*n), memAt(rt, bi*k*n), memAt(tau, bi*k), info.at(bi)))
	}
	r = newUninitOn(op, dev, a.dtype, withShape(a, k, n)...)
	gpuCopy(op, r, Transpose(rt))
	q = newUninitOn(op, dev, a.dtype, withShape(a, m, k)...)
	gpuCopy(op, q, Transpose(Slice(work, len(a.shape)-2, 0, k, 1)))
	// R's diagonal non-negative: flip rows of R and columns of Q.
	sg := signs(rectDiag(r, k))
	defer sg.release()
	MulTo(r, r, Reshape(sg, withShape(r, k, 1)...))
	MulTo(q, q, Reshape(sg, withShape(q, 1, k)...))
	return q, r, nil
}

// gpuSVD is SVD on a GPU, a holding at least one element. gesvd needs a
// tall matrix: A (m ≥ n) is passed as its column-major copy, and a wide
// A as itself, which read column-major is the tall Aᵀ = V·S·Uᵀ.
func gpuSVD(a *Tensor, m, n int) (u, s, v *Tensor, err error) {
	const op = "SVD"
	defer alive(a)
	st := sameDevice(op, a)
	tall, k, nb := m >= n, min(m, n), a.Size()/(m*n)
	big := max(m, n)
	dev, dt := a.Device(), devDType(a.dtype)
	work := newUninitOn(op, dev, a.dtype, withShape(a, k, big)...) // column-major big×k
	defer work.release()
	if tall {
		gpuCopy(op, work, Transpose(a))
	} else {
		gpuCopy(op, work, a)
	}
	if err := gpuFinite(op, work, nb, m*n); err != nil {
		return nil, nil, nil, err
	}
	s = newUninitOn(op, dev, a.dtype, append(cloneInts(a.shape[:len(a.shape)-2]), k)...)
	ub := newUninitOn(op, dev, a.dtype, withShape(a, k, big)...) // column-major big×k
	defer ub.release()
	vt := newUninitOn(op, dev, a.dtype, withShape(a, k, k)...) // column-major Vᵀ: V row-major
	info := newInfoWords(op, st.be, nb)
	defer info.free()
	for bi := range nb {
		gpuCheck(op, st.be.Gesvd(dt, big, k, memAt(work, bi*m*n), memAt(s, bi*k), memAt(ub, bi*big*k), memAt(vt, bi*k*k), info.at(bi)))
	}
	if err := notConverged(op, "gesvd", info.read(op, nb)); err != nil {
		vt.release()
		return nil, nil, nil, err
	}
	left := newUninitOn(op, dev, a.dtype, withShape(a, big, k)...)
	gpuCopy(op, left, Transpose(ub))
	u, v = left, vt
	if !tall {
		u, v = vt, left
	}
	flipToVDevice(u, v)
	return u, s, v, nil
}

// flipToVDevice is flipToV on a GPU: each pair (uᵢ, vᵢ) negated where
// vᵢ's entry of largest magnitude is negative (with two such entries of
// opposite signs, exactly tied, it keeps the pair as it is; the CPU takes
// the first).
func flipToVDevice(u, v *Tensor) {
	ax := []int{len(v.shape) - 2}
	av := Abs(v)
	defer av.release()
	top := Max(av, ax, true)
	defer top.release()
	eq := Equal(av, top)
	defer eq.release()
	at := Sum(Mul(eq, v), ax, true)
	defer at.release()
	sg := signs(at)
	defer sg.release()
	MulTo(v, v, sg)
	MulTo(u, u, sg)
}
