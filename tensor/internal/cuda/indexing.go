//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"slices"
	"unsafe"
)

// scalarArg is s as the kernel of dt takes it: rounded to float32 once for
// F32, as the CPU's float32 kernels round their scalar parameter.
func scalarArg(dt DType, s float64) any {
	if dt == F32 {
		return float32(s)
	}
	return s
}

// Fill sets dst[i] = v for i < n (v rounded to dt).
func (k *Kernels) Fill(dt DType, n int, dst *Buffer, v float64) error {
	if n < 0 {
		return fmt.Errorf("cuda: Fill: negative length %d", n)
	}
	if err := fits("fill", dt, n, dst); err != nil || n == 0 {
		return err
	}
	return k.launch("fill", dt, elemGrid(n), n, dst, scalarArg(dt, v))
}

// Scalar sets dst[i] = op(x[i], s) for i < n; op is one of ScalarOps
// ("add_scalar": x + s, "mul_scalar": x·s, s rounded to dt first, as
// tensor.AddScalar and tensor.MulScalar do). dst may be x.
func (k *Kernels) Scalar(op string, dt DType, n int, dst, x *Buffer, s float64) error {
	if !slices.Contains(ScalarOps, op) {
		return fmt.Errorf("cuda: Scalar: no kernel %q (have %v)", op, ScalarOps)
	}
	if n < 0 {
		return fmt.Errorf("cuda: %s: negative length %d", op, n)
	}
	if err := fits(op, dt, n, dst, x); err != nil || n == 0 {
		return err
	}
	return k.launch(op, dt, elemGrid(n), n, dst, x, scalarArg(dt, s))
}

// Copy sets the contiguous dst of shape to the strided operand x: element
// (i₀, …) of dst is x's element Σ i_d·xStrides[d], so a stride of 0
// broadcasts x along a dimension, permuted strides transpose it and a
// negative one reverses it (reading before x's pointer, within the buffer
// x was sliced from). Up to MaxDims dimensions; dst must not overlap x. A
// view that starts inside a buffer is passed as Buffer.Slice.
func (k *Kernels) Copy(dt DType, shape []int, dst, x *Buffer, xStrides []int) error {
	if !dt.valid() || x == nil {
		return fmt.Errorf("cuda: Copy: invalid dtype %d or nil operand", dt)
	}
	s, n, err := newStridesSpan(shape, xStrides, make([]int, len(shape)), spanOf(x, dt), span{0, 1})
	if err != nil {
		return err
	}
	if err := fits("copy (x)", dt, 0, x); err != nil { // its alignment
		return err
	}
	if err := fits("copy", dt, n, dst); err != nil || n == 0 {
		return err
	}
	return k.launch("copy", dt, elemGrid(n), n, dst, x, s)
}

// checkAxis checks the sizes of a gather or scatter over (outer, axis,
// inner) with indices idx, and returns the element counts of the indexed
// side, outer·len(idx)·inner, and of the full side, outer·axis·inner.
func checkAxis(op string, outer, axis, inner int, idx []int) (picked, full int, err error) {
	if outer < 0 || axis < 0 || inner < 0 {
		return 0, 0, fmt.Errorf("cuda: %s: sizes (outer %d, axis %d, inner %d) must be non-negative", op, outer, axis, inner)
	}
	for i, v := range idx {
		if v < 0 || v >= axis {
			return 0, 0, fmt.Errorf("cuda: %s: index %d (idx[%d]) is out of range [0, %d)", op, v, i, axis)
		}
	}
	return outer * len(idx) * inner, outer * axis * inner, nil
}

// uploadIndices copies idx, as int64, into a buffer from the Driver's
// pool; the caller releases it once the kernel reading it is queued.
// That is safe although the kernel may not have run yet: every copy and
// launch of the package goes to the default stream, in order, so whatever
// later reuses the buffer from the pool writes it only after the kernel.
func (k *Kernels) uploadIndices(idx []int) (*Buffer, error) {
	v := make([]int64, len(idx))
	for i, x := range idx {
		v[i] = int64(x)
	}
	b, err := k.d.Alloc(8 * len(v))
	if err != nil {
		return nil, err
	}
	err = k.d.do(func() error {
		return check("cuMemcpyHtoD", k.d.api.memcpyHtoD(b.ptr, unsafe.Pointer(&v[0]), uintptr(8*len(v))))
	})
	if err != nil {
		k.d.Release(b)
		return nil, err
	}
	return b, nil
}

// indexed launches gather or scatter_add over the n > 0 elements of the
// indexed side with the indices uploaded.
func (k *Kernels) indexed(op string, dt DType, n int, out, in *Buffer, idx []int, axis, inner int) error {
	ib, err := k.uploadIndices(idx)
	if err != nil {
		return err
	}
	defer k.d.Release(ib) // safe once queued: see uploadIndices
	return k.launch(op, dt, elemGrid(n), n, out, in, ib, len(idx), axis, inner)
}

// Gather sets dst, contiguous (outer, len(idx), inner), to the entries idx
// of the middle axis of x, contiguous (outer, axis, inner): dst[o, i, j] =
// x[o, idx[i], j], as tensor.IndexSelect. Indices may repeat; one outside
// [0, axis) is an error naming it, checked on the host before any work is
// queued. dst must not overlap x.
func (k *Kernels) Gather(dt DType, outer, axis, inner int, dst, x *Buffer, idx []int) error {
	n, full, err := checkAxis("Gather", outer, axis, inner, idx)
	if err != nil {
		return err
	}
	if err := fits("gather (x)", dt, full, x); err != nil {
		return err
	}
	if err := fits("gather", dt, n, dst); err != nil || n == 0 {
		return err
	}
	return k.indexed("gather", dt, n, dst, x, idx, axis, inner)
}

// ScatterAdd adds src, contiguous (outer, len(idx), inner), into the
// entries idx of the middle axis of dst, contiguous (outer, axis, inner):
// dst[o, idx[i], j] += src[o, i, j], the reverse of Gather (PyTorch's
// index_add_). Repeated indices accumulate through atomicAdd, in an order
// that is unspecified and may change between runs, so where indices
// repeat the float rounding of the sum is unspecified too, as in
// PyTorch's index_add_ on CUDA; with distinct indices each element gets
// one addition and the result is exact to the bit (but float32 atomic
// additions on global memory flush subnormal operands and results to
// zero, whatever the compiler's flags: NVIDIA, 2025, CUDA C++ Programming
// Guide, "Floating-Point Standard"). An index outside
// [0, axis) is an error naming it, checked on the host before any work is
// queued. dst must not overlap src.
func (k *Kernels) ScatterAdd(dt DType, outer, axis, inner int, dst *Buffer, idx []int, src *Buffer) error {
	n, full, err := checkAxis("ScatterAdd", outer, axis, inner, idx)
	if err != nil {
		return err
	}
	if err := fits("scatter_add (dst)", dt, full, dst); err != nil {
		return err
	}
	if err := fits("scatter_add (src)", dt, n, src); err != nil || n == 0 {
		return err
	}
	return k.indexed("scatter_add", dt, n, dst, src, idx, axis, inner)
}

// NonFinite reports whether any of the n elements of x is NaN, +Inf or
// −Inf. It waits for the kernels queued before it and for its own result,
// and reports their failures.
func (k *Kernels) NonFinite(dt DType, n int, x *Buffer) (bool, error) {
	return k.NonFiniteAll([]DType{dt}, []int{n}, []*Buffer{x})
}

// NonFiniteAll is NonFinite over several buffers (xs[i] holding ns[i]
// elements of dts[i]) with one wait: every check sets one flag, read back
// once, so an optimiser checks all its gradients for the price of one
// round trip.
func (k *Kernels) NonFiniteAll(dts []DType, ns []int, xs []*Buffer) (bool, error) {
	if len(dts) != len(xs) || len(ns) != len(xs) {
		return false, fmt.Errorf("cuda: NonFiniteAll: %d dtypes and %d lengths for %d buffers", len(dts), len(ns), len(xs))
	}
	for i, x := range xs {
		if ns[i] < 0 {
			return false, fmt.Errorf("cuda: NonFinite: negative length %d", ns[i])
		}
		if err := fits("non_finite", dts[i], ns[i], x); err != nil {
			return false, err
		}
	}
	flag, err := k.d.Alloc(4)
	if err != nil {
		return false, err
	}
	defer k.d.Release(flag)
	if err := k.d.Zero(flag, 4); err != nil {
		return false, err
	}
	for i, x := range xs {
		if ns[i] == 0 {
			continue
		}
		if err := k.launch("non_finite", dts[i], elemGrid(ns[i]), ns[i], flag, x); err != nil {
			return false, err
		}
	}
	var found uint32
	err = k.d.do(func() error {
		return check("cuMemcpyDtoH", k.d.api.memcpyDtoH(unsafe.Pointer(&found), flag.ptr, 4))
	})
	return found != 0, err
}
