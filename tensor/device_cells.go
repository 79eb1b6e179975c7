package tensor

import "github.com/gradus-ml/gradus/tensor/internal/devices"

// The fused recurrent cells of package graph (graph/lstm.go, graph/gru.go)
// on a GPU. Their CPU kernels live in graph, on tensor's run kernels; on a
// GPU graph calls deviceCell (internal/unchecked's DeviceCell), which
// hands the rows to the device's cell kernel.

// deviceCell runs the cell op ("lstm_cell", "lstm_cell_grad", "gru_cell",
// "gru_cell_grad") into dst from the operands in, whose last operand is
// the state (rows…, H): false, doing nothing, when dst and every operand
// live on the CPU. The operands' rows may have any stride; those whose
// rows are not evenly strided are copied first.
func deviceCell(op string, dst *Tensor, in []*Tensor) bool {
	onCPU := dst.dev == nil
	for _, t := range in {
		onCPU = onCPU && t.dev == nil
	}
	if onCPU {
		return false
	}
	defer alive(dst)
	defer alive(in...)
	st := sameDevice(op, append([]*Tensor{dst}, in...)...)
	s := in[len(in)-1]
	h := s.shape[len(s.shape)-1]
	if h == 0 || s.Size() == 0 {
		return true
	}
	rows := s.Size() / h
	views := make([]devices.View, len(in))
	for i, t := range in {
		rs, ok := cellRowStride(t)
		if !ok {
			c, done := contiguousOperand(op, t)
			defer done()
			t, rs = c, t.shape[len(t.shape)-1]
		}
		views[i] = devices.View{Mem: t.mem(), Strides: []int{rs}}
	}
	intoContiguous(op, dst, func(out *Tensor) {
		gpuCheck(op, st.be.Cell(op, devDType(dst.dtype), rows, h, out.mem(), views))
	})
	return true
}

// cellRowStride returns the stride between consecutive rows of t (every axis
// but the last flattened) when its last axis is contiguous and its
// leading axes collapse into one, and false otherwise.
func cellRowStride(t *Tensor) (int, bool) {
	s, st := t.shape, t.strides
	n := len(s)
	if n == 0 || (s[n-1] > 1 && st[n-1] != 1) {
		return 0, false
	}
	rs, span := -1, 1
	for i := n - 2; i >= 0; i-- {
		if s[i] == 1 {
			continue
		}
		if rs < 0 {
			rs = st[i]
		} else if st[i] != rs*span {
			return 0, false
		}
		span *= s[i]
	}
	if rs < 0 {
		rs = s[n-1]
	}
	return rs, rs >= 0
}
