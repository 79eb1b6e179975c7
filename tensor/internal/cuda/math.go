//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"slices"
)

// Param sets dst[i] = op(x[i]; p, q) for i < n; op is one of ParamOps:
// "pow_scalar" (x^p, math.Pow's special cases), "leaky_relu" (x where
// x > 0, else p·x), "elu" (x where x > 0, else p·(eˣ − 1)) and "clamp"
// (Go's min(max(x, p), q): NaN stays NaN; p > q is an error, as
// tensor.Clamp panics) and "polygamma" (ψ⁽ᵖ⁾(x), p a whole number ≥ 1,
// as tensor.Polygamma). q is unused but by clamp. p and q are rounded to
// dt once, as tensor's paramOp rounds them. dst may be x.
func (k *Kernels) Param(op string, dt DType, n int, dst, x *Buffer, p, q float64) error {
	if !slices.Contains(ParamOps, op) {
		return fmt.Errorf("cuda: Param: no kernel %q (have %v)", op, ParamOps)
	}
	if n < 0 {
		return fmt.Errorf("cuda: %s: negative length %d", op, n)
	}
	if op == "clamp" && p > q {
		return fmt.Errorf("cuda: clamp: lower bound %g exceeds upper bound %g", p, q)
	}
	if op == "polygamma" && (p < 1 || p > 1<<20 || p != float64(int(p))) {
		return fmt.Errorf("cuda: polygamma: the order %g must be a whole number from 1", p)
	}
	if err := fits(op, dt, n, dst, x); err != nil || n == 0 {
		return err
	}
	return k.launch(op, dt, elemGrid(n), n, dst, x, scalarArg(dt, p), scalarArg(dt, q))
}

// ParamBinary sets the contiguous dst of shape to op(a, b; p) elementwise,
// a and b read with the strides given as in Binary; op is one of
// ParamBinaryOps: "leaky_relu_grad" (a where b > 0, else a·p: the
// vector-Jacobian product of LeakyRelu with slope p at b with a, as
// tensor.LeakyReluGrad(v, x, slope), p rounded to dt once).
func (k *Kernels) ParamBinary(op string, dt DType, shape []int, dst, a *Buffer, aStrides []int, b *Buffer, bStrides []int, p float64) error {
	if !slices.Contains(ParamBinaryOps, op) {
		return fmt.Errorf("cuda: ParamBinary: no kernel %q (have %v)", op, ParamBinaryOps)
	}
	if !dt.valid() || a == nil || b == nil {
		return fmt.Errorf("cuda: %s: invalid dtype or nil operand", op)
	}
	s, n, err := newStridesSpan(shape, aStrides, bStrides, spanOf(a, dt), spanOf(b, dt))
	if err != nil {
		return err
	}
	if err := fits(op+" (a, b)", dt, 0, a, b); err != nil { // their alignment
		return err
	}
	if err := fits(op, dt, n, dst); err != nil || n == 0 {
		return err
	}
	return k.launch(op, dt, elemGrid(n), n, dst, a, b, s, scalarArg(dt, p))
}

// strides3Arg has the layout of struct Strides3 in kernels/math.cu: the
// strides of Where's three operands, passed by value.
type strides3Arg struct {
	ndim  int64
	shape [MaxDims]int64
	c     [MaxDims]int64
	a     [MaxDims]int64
	b     [MaxDims]int64
}

// Where sets the contiguous dst of shape to a where cond != 0 and to b
// elsewhere (a NaN cond counts as true, as tensor.Where), the three read
// with their strides (0 broadcasts; BroadcastStrides makes them for
// contiguous operands). Up to MaxDims dimensions.
func (k *Kernels) Where(dt DType, shape []int, dst, cond *Buffer, cStrides []int, a *Buffer, aStrides []int, b *Buffer, bStrides []int) error {
	if !dt.valid() || cond == nil || a == nil || b == nil {
		return fmt.Errorf("cuda: Where: invalid dtype %d or nil operand", dt)
	}
	// The (cond, a) and (b, b) pairs check every operand's strides and extent.
	ca, n, err := newStridesSpan(shape, cStrides, aStrides, spanOf(cond, dt), spanOf(a, dt))
	if err != nil {
		return fmt.Errorf("cuda: Where (cond, a): %w", err)
	}
	bb, _, err := newStridesSpan(shape, bStrides, bStrides, spanOf(b, dt), spanOf(b, dt))
	if err != nil {
		return fmt.Errorf("cuda: Where (b): %w", err)
	}
	if err := fits("where (cond, a, b)", dt, 0, cond, a, b); err != nil { // their alignment
		return err
	}
	if err := fits("where", dt, n, dst); err != nil || n == 0 {
		return err
	}
	s := &strides3Arg{ndim: ca.ndim, shape: ca.shape, c: ca.a, a: ca.b, b: bb.a}
	return k.launch("where", dt, elemGrid(n), n, dst, cond, a, b, s)
}

// CopyStrided writes x, read with xStrides (0 broadcasts), into the view
// of dst with dstStrides over shape: element (i₀, …) goes to dst's
// element Σ i_d·dstStrides[d]. No dstStrides[d] may be 0 where shape[d] >
// 1 (two elements would go to one place); a destination view whose
// elements overlap otherwise, or that overlaps x, is the caller's
// problem. A view that starts inside a buffer is passed as Buffer.Slice.
func (k *Kernels) CopyStrided(dt DType, shape []int, dst *Buffer, dstStrides []int, x *Buffer, xStrides []int) error {
	if !dt.valid() || x == nil || dst == nil {
		return fmt.Errorf("cuda: CopyStrided: invalid dtype %d or nil operand", dt)
	}
	if len(dstStrides) == len(shape) {
		for d, st := range dstStrides {
			if st == 0 && shape[d] > 1 {
				return fmt.Errorf("cuda: CopyStrided: destination stride %d of dimension %d (size %d) would write %d elements to one place", st, d, shape[d], shape[d])
			}
		}
	}
	s, n, err := newStridesSpan(shape, xStrides, dstStrides, spanOf(x, dt), spanOf(dst, dt))
	if err != nil {
		return fmt.Errorf("cuda: CopyStrided (x, dst): %w", err)
	}
	if err := fits("copy_strided", dt, 0, dst, x); err != nil || n == 0 { // their alignment
		return err
	}
	return k.launch("copy_strided", dt, elemGrid(n), n, dst, x, s)
}
