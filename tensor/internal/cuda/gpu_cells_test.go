//go:build linux && (amd64 || arm64)

package cuda_test

// Tests of kernels/rnn.cu, the fused LSTM and GRU cells and their
// vector-Jacobian products, against the same maths composed of package
// tensor's CPU operations in the order of graph's CPU kernels
// (graph/rnn_kernels.go, whose results are those of this composite bit
// for bit). The cells apply sigmoid and tanh (the CUDA Math API's expf and
// tanhf within 2 ulp, exp and tanh within 1 ulp; the CPU's within about
// 1 ulp) to values of order 1 and combine them in a few products and sums
// of magnitude below about 10, so each output is within 64 roundings of
// max(1, |CPU value|).

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// gate returns columns [k·h, (k+1)·h) of the rows of t.
func gate(t *tensor.Tensor, k, h int) *tensor.Tensor { return tensor.Slice(t, 1, k*h, (k+1)*h, 1) }

// lstmRef is the LSTM cell: [h' | c'].
func lstmRef(xp, hp, c *tensor.Tensor, h int) *tensor.Tensor {
	a := tensor.Add(xp, hp)
	i, f, g, o := tensor.Sigmoid(gate(a, 0, h)), tensor.Sigmoid(gate(a, 1, h)), tensor.Tanh(gate(a, 2, h)), tensor.Sigmoid(gate(a, 3, h))
	c2 := tensor.Add(tensor.Mul(f, c), tensor.Mul(i, g))
	return tensor.Concat(1, tensor.Mul(o, tensor.Tanh(c2)), c2)
}

// lstmGradRef is the LSTM cell's VJP: [da_i, da_f, da_g, da_o | dc].
func lstmGradRef(ct, xp, hp, c *tensor.Tensor, h int) *tensor.Tensor {
	a := tensor.Add(xp, hp)
	ai, af, ag, ao := gate(a, 0, h), gate(a, 1, h), gate(a, 2, h), gate(a, 3, h)
	i, f, g, o := tensor.Sigmoid(ai), tensor.Sigmoid(af), tensor.Tanh(ag), tensor.Sigmoid(ao)
	k := tensor.Tanh(tensor.Add(tensor.Mul(f, c), tensor.Mul(i, g)))
	u, w := gate(ct, 0, h), gate(ct, 1, h)
	e := tensor.Add(w, tensor.TanhGrad(tensor.Mul(u, o), k))
	return tensor.Concat(1, tensor.SigmoidGrad(tensor.Mul(e, g), ai), tensor.SigmoidGrad(tensor.Mul(e, c), af),
		tensor.TanhGrad(tensor.Mul(e, i), g), tensor.SigmoidGrad(tensor.Mul(u, k), ao), tensor.Mul(e, f))
}

// gruRef is the GRU cell: h'.
func gruRef(xp, hp, hs *tensor.Tensor, h int) *tensor.Tensor {
	r := tensor.Sigmoid(tensor.Add(gate(xp, 0, h), gate(hp, 0, h)))
	z := tensor.Sigmoid(tensor.Add(gate(xp, 1, h), gate(hp, 1, h)))
	n := tensor.Tanh(tensor.Add(gate(xp, 2, h), tensor.Mul(r, gate(hp, 2, h))))
	return tensor.Add(n, tensor.Mul(z, tensor.Sub(hs, n)))
}

// gruGradRef is the GRU cell's VJP: [dxp | dhp | dh].
func gruGradRef(ct, xp, hp, hs *tensor.Tensor, h int) *tensor.Tensor {
	ar, az := tensor.Add(gate(xp, 0, h), gate(hp, 0, h)), tensor.Add(gate(xp, 1, h), gate(hp, 1, h))
	r, z := tensor.Sigmoid(ar), tensor.Sigmoid(az)
	n := tensor.Tanh(tensor.Add(gate(xp, 2, h), tensor.Mul(r, gate(hp, 2, h))))
	uz := tensor.Mul(ct, z)
	dn := tensor.TanhGrad(tensor.Sub(ct, uz), n)
	dz := tensor.SigmoidGrad(tensor.Mul(ct, tensor.Sub(hs, n)), az)
	dr := tensor.SigmoidGrad(tensor.Mul(dn, gate(hp, 2, h)), ar)
	return tensor.Concat(1, dr, dz, dn, dr, dz, tensor.Mul(dn, r), uz)
}

// cellOperand is an operand of a cell test: the (rows, width·h) values
// and how the kernel reads them.
type cellOperand struct {
	buf    *cuda.Buffer
	view   *tensor.Tensor
	stride int
}

// stridedOperand uploads a (rows, width) operand laid out three ways by
// kind: 0 contiguous, 1 every row inside a wider row (row stride
// width + 3, starting at element 2), 2 one row repeated (row stride 0).
func stridedOperand(tb testing.TB, d *cuda.Driver, ty tensor.DType, kind, rows, width int, seed float64) cellOperand {
	switch kind {
	case 1:
		base := sample(ty, rows*(width+3), -2-seed, 2+seed, rows, width+3)
		v := tensor.Slice(base, 1, 2, 2+width, 1)
		return cellOperand{upload(tb, d, base), v, width + 3}
	case 2:
		row := sample(ty, width, -2-seed, 2+seed, 1, width)
		return cellOperand{upload(tb, d, row), tensor.Expand(row, rows, width), 0}
	}
	v := sample(ty, rows*width, -2-seed, 2+seed, rows, width)
	return cellOperand{upload(tb, d, v), v, width}
}

// TestCellKernels runs each cell on contiguous operands, on rows strided
// inside wider rows, and on repeated rows, against the composite.
func TestCellKernels(t *testing.T) {
	d, k := kernels(t)
	cells := []struct {
		op     string
		widths []int
		out    int
		ref    func(in []*tensor.Tensor, h int) *tensor.Tensor
	}{
		{"lstm_cell", []int{4, 4, 1}, 2, func(in []*tensor.Tensor, h int) *tensor.Tensor { return lstmRef(in[0], in[1], in[2], h) }},
		{"lstm_cell_grad", []int{2, 4, 4, 1}, 5, func(in []*tensor.Tensor, h int) *tensor.Tensor {
			return lstmGradRef(in[0], in[1], in[2], in[3], h)
		}},
		{"gru_cell", []int{3, 3, 1}, 1, func(in []*tensor.Tensor, h int) *tensor.Tensor { return gruRef(in[0], in[1], in[2], h) }},
		{"gru_cell_grad", []int{1, 3, 3, 1}, 7, func(in []*tensor.Tensor, h int) *tensor.Tensor {
			return gruGradRef(in[0], in[1], in[2], in[3], h)
		}},
	}
	if len(cells) != len(cuda.CellOps) {
		t.Fatalf("%d cells tested, %d kernels", len(cells), len(cuda.CellOps))
	}
	for _, c := range cells {
		for _, ty := range dtypes {
			for layout := range 3 {
				rows, h := 37, 11 // 407 threads: more than a block
				in := make([]*tensor.Tensor, len(c.widths))
				ops := make([]cuda.RowOperand, len(c.widths))
				for i, w := range c.widths {
					kind := 0
					if layout > 0 && i%2 == layout%2 { // alternate operands take the layout
						kind = layout
					}
					o := stridedOperand(t, d, ty, kind, rows, w*h, float64(i))
					defer d.Release(o.buf)
					in[i], ops[i] = o.view, cuda.RowOperand{Buf: o.buf.Slice(o.view.Offset() * ty.Size()), RowStride: o.stride}
				}
				out, err := d.Alloc(rows * c.out * h * ty.Size())
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Cell(c.op, dt(ty), rows, h, out, ops); err != nil {
					t.Fatalf("%s: %v", c.op, err)
				}
				want := c.ref(in, h)
				ws := want.Values()
				bound := make([]float64, len(ws))
				for i, w := range ws {
					bound[i] = 64 * eps(ty) * max(1, math.Abs(w))
				}
				what := fmt.Sprintf("%s %v layout %d", c.op, ty, layout)
				compareBound(t, what, download(t, d, out, ty, rows, c.out*h), want, bound)
				d.Release(out)
			}
		}
	}
}

// TestCellChecks: the operands must fit their buffers and the op exist.
func TestCellChecks(t *testing.T) {
	d, k := kernels(t)
	buf, _ := d.Alloc(4096)
	defer d.Release(buf)
	b := buf.Slice(buf.Bytes() - 4096)
	ok := []cuda.RowOperand{{b, 8}, {b, 8}, {b, 2}}
	if err := k.Cell("lstm_cell", cuda.F32, 4, 2, b, ok); err != nil {
		t.Fatalf("a fitting lstm_cell: %v", err)
	}
	for _, c := range []struct {
		op   string
		rows int
		in   []cuda.RowOperand
		want string
	}{
		{"rnn_cell", 4, ok, `no kernel "rnn_cell"`},
		{"lstm_cell", 4, ok[:2], "2 operands, want 3"},
		{"lstm_cell", 4, []cuda.RowOperand{{b, 8}, {b, -8}, {b, 2}}, "negative row stride"},
		{"lstm_cell", 200, []cuda.RowOperand{{b, 8}, {b, 0}, {b, 2}}, "operand 0"},
	} {
		err := k.Cell(c.op, cuda.F32, c.rows, 2, b, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Cell(%s, %d rows, %v) = %v, want an error containing %q", c.op, c.rows, c.in, err, c.want)
		}
	}
}
