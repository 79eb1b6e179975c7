package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// The kernels of the fused recurrent cells (lstm.go, gru.go). Each walks
// the rows of its operands (every axis but the last is a row) and, per
// row, calls tensor's vector kernels for runs (kern.Run32/Run64: the
// AVX2 sigmoid and tanh and the arithmetic, the portable code in float64
// or without AVX2) on the row's gate segments, so one row's gates, states
// and temporaries stay in the L1 cache and each operand is read once.
// Operands may be views whose rows have any stride (a step's slice of a
// whole sequence's input projection, the h' or c' half of a packed
// state); the result is a fresh contiguous buffer.

// cellRuns holds the run kernels the cells use, for one dtype.
type cellRuns[T float32 | float64] struct {
	add, sub, mul, sigmoid, tanh, sigmoidGrad, tanhGrad func(d, x, y []T)
	data                                                func(*tensor.Tensor) []T
}

var (
	cellRuns32 = newCellRuns(kern.Run32, kern.Data32)
	cellRuns64 = newCellRuns(kern.Run64, kern.Data64)
)

func newCellRuns[T float32 | float64](run func(string, float64) func(d, x, y []T), data func(*tensor.Tensor) []T) *cellRuns[T] {
	return &cellRuns[T]{add: run("Add", 0), sub: run("Sub", 0), mul: run("Mul", 0),
		sigmoid: run("Sigmoid", 0), tanh: run("Tanh", 0),
		sigmoidGrad: run("SigmoidGrad", 0), tanhGrad: run("TanhGrad", 0), data: data}
}

// rowView reads a tensor as rows of its last axis: row r starts at
// off + r·stride of data.
type rowView[T float32 | float64] struct {
	data        []T
	off, stride int
}

func (v rowView[T]) row(r, n int) []T {
	b := v.off + r*v.stride
	return v.data[b : b+n : b+n]
}

// rowsOf returns t's rows, copying t into a graph buffer first when its
// rows are not evenly strided.
func rowsOf[T float32 | float64](g *Graph, k *cellRuns[T], t *tensor.Tensor) rowView[T] {
	rs, ok := kern.RowStride(t)
	if !ok {
		c := g.AllocUninit(t.DType(), t.Shape()...)
		kern.Copy(c, t)
		t, rs = c, t.Shape()[t.Dim()-1]
	}
	return rowView[T]{k.data(t), t.Offset(), rs}
}

// lstmRows computes the LSTM cell for every row: dst (rows, 2H) gets
// [h' | c'] from the gate pre-activations xp + hp (rows, 4H, gates i, f,
// g, o) and c (rows, H), in the operations of the composite (Add, Sigmoid,
// Tanh, Mul), so the bits are those of the unfused graph.
func lstmRows[T float32 | float64](g *Graph, k *cellRuns[T], dst, xp, hp, c *tensor.Tensor) {
	h := c.Shape()[c.Dim()-1]
	rows := c.Size() / max(h, 1)
	if h == 0 || rows == 0 {
		return
	}
	x, p, cs := rowsOf(g, k, xp), rowsOf(g, k, hp), rowsOf(g, k, c)
	d := rowView[T]{k.data(dst), dst.Offset(), 2 * h}
	s := k.data(g.AllocUninit(dst.DType(), 5*h))
	a, t := s[:4*h], s[4*h:5*h]
	i, f, gg, o := a[:h], a[h:2*h], a[2*h:3*h], a[3*h:]
	for r := range rows {
		k.add(a, x.row(r, 4*h), p.row(r, 4*h))
		k.sigmoid(a[:2*h], a[:2*h], nil)
		k.tanh(gg, gg, nil)
		k.sigmoid(o, o, nil)
		out := d.row(r, 2*h)
		h2, c2 := out[:h], out[h:]
		k.mul(t, f, cs.row(r, h))
		k.mul(c2, i, gg)
		k.add(c2, t, c2)
		k.tanh(t, c2, nil)
		k.mul(h2, o, t)
	}
}

// lstmGradRows computes, for every row, the cotangents of the LSTM cell's
// gate pre-activations and of c given ct (rows, 2H) = [dh' | dc']: dst
// (rows, 5H) gets [da_i, da_f, da_g, da_o | dc]. It recomputes the gates
// from xp + hp rather than keeping them from the forward pass.
//
//	e = dc' + dh'·o·(1 − tanh²c'),  da_o = dh'·tanh c'·σ'(a_o)
//	da_i = e·g·σ'(a_i),  da_f = e·c·σ'(a_f),  da_g = e·i·(1 − g²),  dc = e·f
func lstmGradRows[T float32 | float64](g *Graph, k *cellRuns[T], dst, ct, xp, hp, c *tensor.Tensor) {
	h := c.Shape()[c.Dim()-1]
	rows := c.Size() / max(h, 1)
	if h == 0 || rows == 0 {
		return
	}
	v, x, p, cs := rowsOf(g, k, ct), rowsOf(g, k, xp), rowsOf(g, k, hp), rowsOf(g, k, c)
	d := rowView[T]{k.data(dst), dst.Offset(), 5 * h}
	s := k.data(g.AllocUninit(dst.DType(), 12*h))
	a, y := s[:4*h], s[4*h:8*h]
	c2, th, t, e := s[8*h:9*h], s[9*h:10*h], s[10*h:11*h], s[11*h:12*h]
	i, f, gg, o := y[:h], y[h:2*h], y[2*h:3*h], y[3*h:]
	for r := range rows {
		k.add(a, x.row(r, 4*h), p.row(r, 4*h))
		k.sigmoid(y[:2*h], a[:2*h], nil)
		k.tanh(gg, a[2*h:3*h], nil)
		k.sigmoid(o, a[3*h:], nil)
		cr := cs.row(r, h)
		k.mul(t, f, cr)
		k.mul(c2, i, gg)
		k.add(c2, t, c2)
		k.tanh(th, c2, nil)
		ctr := v.row(r, 2*h)
		u, w := ctr[:h], ctr[h:]
		out := d.row(r, 5*h)
		k.mul(t, u, o)
		k.tanhGrad(t, t, th)
		k.add(e, w, t)
		k.mul(t, u, th)
		k.sigmoidGrad(out[3*h:4*h], t, a[3*h:])
		k.mul(t, e, gg)
		k.sigmoidGrad(out[:h], t, a[:h])
		k.mul(t, e, cr)
		k.sigmoidGrad(out[h:2*h], t, a[h:2*h])
		k.mul(t, e, i)
		k.tanhGrad(out[2*h:3*h], t, gg)
		k.mul(out[4*h:], e, f)
	}
}

// gruRows computes the GRU cell for every row: dst (rows, H) gets h' from
// the input projection xp and the recurrent projection hp (rows, 3H, gates
// r, z, n, biases included) and h (rows, H), as the composite does:
//
//	r, z = σ(xp_r + hp_r), σ(xp_z + hp_z),  n = tanh(xp_n + r·hp_n)
//	h' = n + z·(h − n)
func gruRows[T float32 | float64](g *Graph, k *cellRuns[T], dst, xp, hp, hs *tensor.Tensor) {
	h := hs.Shape()[hs.Dim()-1]
	rows := hs.Size() / max(h, 1)
	if h == 0 || rows == 0 {
		return
	}
	x, p, hv := rowsOf(g, k, xp), rowsOf(g, k, hp), rowsOf(g, k, hs)
	d := rowView[T]{k.data(dst), dst.Offset(), h}
	s := k.data(g.AllocUninit(dst.DType(), 4*h))
	a, n, t := s[:2*h], s[2*h:3*h], s[3*h:4*h]
	rg, z := a[:h], a[h:]
	for r := range rows {
		xr, pr := x.row(r, 3*h), p.row(r, 3*h)
		k.add(a, xr[:2*h], pr[:2*h])
		k.sigmoid(a, a, nil)
		k.mul(t, rg, pr[2*h:])
		k.add(t, xr[2*h:], t)
		k.tanh(n, t, nil)
		k.sub(t, hv.row(r, h), n)
		k.mul(t, z, t)
		k.add(d.row(r, h), n, t)
	}
}

// gruGradRows computes, for every row, the GRU cell's cotangents given
// ct (rows, H) = dh': dst (rows, 7H) gets [dxp (3H) | dhp (3H) | dh (H)]:
//
//	da_n = dh'·(1 − z)·(1 − n²),  da_z = dh'·(h − n)·σ'(a_z),
//	da_r = da_n·hp_n·σ'(a_r),  dxp = (da_r, da_z, da_n),
//	dhp = (da_r, da_z, da_n·r),  dh = dh'·z
func gruGradRows[T float32 | float64](g *Graph, k *cellRuns[T], dst, ct, xp, hp, hs *tensor.Tensor) {
	h := hs.Shape()[hs.Dim()-1]
	rows := hs.Size() / max(h, 1)
	if h == 0 || rows == 0 {
		return
	}
	v, x, p, hv := rowsOf(g, k, ct), rowsOf(g, k, xp), rowsOf(g, k, hp), rowsOf(g, k, hs)
	d := rowView[T]{k.data(dst), dst.Offset(), 7 * h}
	s := k.data(g.AllocUninit(dst.DType(), 6*h))
	a, y, n, t := s[:2*h], s[2*h:4*h], s[4*h:5*h], s[5*h:6*h]
	rg, z := y[:h], y[h:]
	for r := range rows {
		xr, pr, hr := x.row(r, 3*h), p.row(r, 3*h), hv.row(r, h)
		k.add(a, xr[:2*h], pr[:2*h])
		k.sigmoid(y, a, nil)
		k.mul(t, rg, pr[2*h:])
		k.add(t, xr[2*h:], t)
		k.tanh(n, t, nil)
		u := v.row(r, h)
		out := d.row(r, 7*h)
		dxr, dxz, dxn := out[:h], out[h:2*h], out[2*h:3*h]
		k.mul(t, u, z)
		copy(out[6*h:], t) // dh = dh'·z
		k.sub(t, u, t)
		k.tanhGrad(dxn, t, n)
		k.sub(t, hr, n)
		k.mul(t, u, t)
		k.sigmoidGrad(dxz, t, a[h:])
		k.mul(t, dxn, pr[2*h:])
		k.sigmoidGrad(dxr, t, a[:h])
		copy(out[3*h:5*h], out[:2*h])
		k.mul(out[5*h:6*h], dxn, rg)
	}
}
