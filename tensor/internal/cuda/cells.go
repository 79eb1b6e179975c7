//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
)

// CellOps are the fused recurrent cells of kernels/rnn.cu (Kernels.Cell).
var CellOps = []string{"lstm_cell", "lstm_cell_grad", "gru_cell", "gru_cell_grad"}

// cellWidths gives, per cell, the widths of its operands and of its
// output in units of the hidden size h.
var cellWidths = map[string]struct {
	in  []int
	out int
}{
	"lstm_cell":      {[]int{4, 4, 1}, 2},
	"lstm_cell_grad": {[]int{2, 4, 4, 1}, 5},
	"gru_cell":       {[]int{3, 3, 1}, 1},
	"gru_cell_grad":  {[]int{1, 3, 3, 1}, 7},
}

// RowOperand is an operand of a cell kernel: rows of contiguous units,
// row r starting RowStride elements after row r − 1 (0 repeats one row).
type RowOperand struct {
	Buf       *Buffer
	RowStride int
}

// Cell runs the fused recurrent cell op (one of CellOps) over rows rows of
// h hidden units, writing the contiguous (rows, W·h) dst, W the op's
// output width:
//
//   - "lstm_cell": in = xp, hp (4h wide, gates i, f, g, o), c (h); dst =
//     [h' | c'] (2h);
//   - "lstm_cell_grad": in = ct (2h), xp, hp, c; dst = [da | dc] (5h);
//   - "gru_cell": in = xp, hp (3h wide, gates r, z, n), h (h); dst = h';
//   - "gru_cell_grad": in = ct (h), xp, hp, h; dst = [dxp | dhp | dh] (7h).
//
// graph/lstm.go and graph/gru.go define the maths; the kernels do the
// CPU's operations in its order.
func (k *Kernels) Cell(op string, dt DType, rows, h int, dst *Buffer, in []RowOperand) error {
	w, ok := cellWidths[op]
	if !ok {
		return fmt.Errorf("cuda: Cell: no kernel %q (have %v)", op, CellOps)
	}
	if len(in) != len(w.in) {
		return fmt.Errorf("cuda: %s: %d operands, want %d", op, len(in), len(w.in))
	}
	if rows < 0 || h < 0 {
		return fmt.Errorf("cuda: %s: %d rows of %d units: sizes must be non-negative", op, rows, h)
	}
	if err := fits(op, dt, rows*h*w.out, dst); err != nil {
		return err
	}
	// The kernel's arguments: rows, h, dst, the operands' buffers (the
	// forward cells' unused d again: the state, stride 0), then their row
	// strides; an array, so that a launch allocates nothing for them.
	var args [3 + 2*4]any
	var st [4]int // the row strides (0 for the forward cells' d)
	args[0], args[1], args[2] = rows, h, dst
	na := len(in)
	if na == 3 {
		na = 4
	}
	for i, x := range in {
		if x.RowStride < 0 {
			return fmt.Errorf("cuda: %s: operand %d has the negative row stride %d", op, i, x.RowStride)
		}
		need := 0
		if rows > 0 && h > 0 {
			need = (rows-1)*x.RowStride + w.in[i]*h
		}
		if err := fits(op, dt, need, x.Buf); err != nil {
			return fits(fmt.Sprintf("%s (operand %d)", op, i), dt, need, x.Buf)
		}
		args[3+i], st[i] = x.Buf, x.RowStride
	}
	if len(in) == 3 {
		args[3+3] = in[2].Buf
	}
	// Boxed outside the loop, where the compiler keeps them on the stack.
	args[3+na], args[3+na+1], args[3+na+2], args[3+na+3] = st[0], st[1], st[2], st[3]
	if rows == 0 || h == 0 {
		return nil
	}
	return k.launch(op, dt, elemGrid(rows*h), args[:3+2*na]...)
}

// GammaOps are the functions of the incomplete gamma function in
// kernels/special.cu (Kernels.GammaPDeriv, Kernels.GammaPInv).
var GammaOps = []string{"gamma_p_deriv", "gamma_p_inv"}

// GammaPDeriv sets dst[i] = ∂ⁿ⁺ᵐP(a[i], x[i])/∂aⁿ∂xᵐ, P the regularised
// lower incomplete gamma function, as tensor.GammaPDeriv (in float64 for
// both dtypes): the series or continued fraction, the density, and
// five-point differences for the higher orders. n + m is at most 6.
func (k *Kernels) GammaPDeriv(dt DType, count int, dst, a, x *Buffer, n, m int) error {
	if n < 0 || m < 0 || n+m > 6 {
		return fmt.Errorf("cuda: gamma_p_deriv: orders (%d, %d): want n, m ≥ 0 and n + m ≤ 6", n, m)
	}
	if err := fits("gamma_p_deriv", dt, count, dst, a, x); err != nil || count == 0 {
		return err
	}
	return k.launch("gamma_p_deriv", dt, elemGrid(count), count, dst, a, x, n, m)
}

// GammaPInv sets dst[i] to z with P(a[i], z) = u[i], by Newton's method
// from z0[i], as tensor.GammaPInv (in float64 for both dtypes).
func (k *Kernels) GammaPInv(dt DType, count int, dst, a, u, z0 *Buffer) error {
	if err := fits("gamma_p_inv", dt, count, dst, a, u, z0); err != nil || count == 0 {
		return err
	}
	return k.launch("gamma_p_inv", dt, elemGrid(count), count, dst, a, u, z0)
}
