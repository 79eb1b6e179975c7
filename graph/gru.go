package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// The GRU cell (Cho et al. 2014, "Learning phrase representations using
// RNN encoder-decoder for statistical machine translation") as one op,
// as lstm.go does for the LSTM. The reset gate multiplies the recurrent
// projection of the candidate (PyTorch's form), so the op takes the input
// and recurrent projections separately.

func init() {
	Register(gruCellOp{})
	Register(gruCellGradOp{})
}

// gruCellOp computes h' (rows…, H) from the input projection xp (rows…,
// 3H), the recurrent projection hp (rows…, 3H), biases included, and the
// state h (rows…, H); gates r, z, n.
type gruCellOp struct{}

func (gruCellOp) Name() string { return "gru_cell" }

func (gruCellOp) Arity() int { return 3 }

func (gruCellOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	xp, hp, h := in[0], in[1], in[2]
	dst := g.AllocUninit(h.DType(), h.Shape()...)
	if kern.DeviceCell("gru_cell", dst, in) {
		return dst
	}
	if h.DType() == tensor.Float32 {
		gruRows(g, cellRuns32, dst, xp, hp, h)
	} else {
		gruRows(g, cellRuns64, dst, xp, hp, h)
	}
	return dst
}

func (gruCellOp) check(in []*Node) { checkCell("gru_cell", in[2], in, []int{3, 3, 1}) }

func (gruCellOp) VJP(out, ct *Node, needs []bool) []*Node {
	xp, hp, h := out.inputs[0], out.inputs[1], out.inputs[2]
	n := h.Shape()[h.Dim()-1]
	d := apply(gruCellGradOp{}, ct, xp, hp, h)
	res := make([]*Node, 3)
	if needs[0] {
		res[0] = Slice(d, -1, 0, 3*n, 1)
	}
	if needs[1] {
		res[1] = Slice(d, -1, 3*n, 6*n, 1)
	}
	if needs[2] {
		res[2] = Slice(d, -1, 6*n, 7*n, 1)
	}
	return res
}

func (gruCellOp) JVP(out *Node, t []*Node) *Node {
	p := gruPrimal(out.inputs[0], out.inputs[1], out.inputs[2])
	return p.tangent(t[0], t[1], t[2])
}

func (o gruCellOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return batchRows(b, o, in, axes)
}

// GRUCell returns the new state h' (rows…, H) of a GRU step from the
// input projection xp = x·W_ihᵀ + b_ih (rows…, 3H), the recurrent
// projection hp = h·W_hhᵀ + b_hh (rows…, 3H) and the state h (rows…, H),
// gates in PyTorch's order r, z, n:
//
//	r, z = σ(xp_r + hp_r), σ(xp_z + hp_z),  n = tanh(xp_n + r∘hp_n)
//	h' = (1 − z)∘n + z∘h
//
// It panics with a *tensor.Error naming the shapes unless xp and hp are
// (rows…, 3H) and h (rows…, H) of one float dtype.
func GRUCell(xp, hp, h *Node) *Node {
	checkNodes("gru_cell", xp, hp, h)
	in := []*Node{xp, hp, h}
	gruCellOp{}.check(in)
	return apply(gruCellOp{}, in...)
}

// gruCellGradOp is the VJP of gru_cell: given ct = dh' (rows…, H) and
// the cell's operands, it returns [dxp | dhp | dh] (rows…, 7H).
type gruCellGradOp struct{}

func (gruCellGradOp) Name() string { return "gru_cell_grad" }

func (gruCellGradOp) Arity() int { return 4 }

func (gruCellGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	ct, xp, hp, h := in[0], in[1], in[2], in[3]
	dst := g.AllocUninit(h.DType(), widened(g, h.Shape(), 7)...)
	if kern.DeviceCell("gru_cell_grad", dst, in) {
		return dst
	}
	if h.DType() == tensor.Float32 {
		gruGradRows(g, cellRuns32, dst, ct, xp, hp, h)
	} else {
		gruGradRows(g, cellRuns64, dst, ct, xp, hp, h)
	}
	return dst
}

func (gruCellGradOp) check(in []*Node) {
	checkCell("gru_cell_grad", in[3], in, []int{1, 3, 3, 1})
}

// The op is linear in ct, so its VJP in ct is the cell's JVP along the
// cotangent w = (ẋp, ḣp, ḣ); in the other operands it is the gradient of
// s = ⟨ct, J·w⟩. With ȧ_r, ȧ_z the gates' tangents, ȧ_n = ẋp_n +
// σ'(a_r)·ȧ_r·hp_n + r·ḣp_n and P = dh'·(1 − z)·(1 − n²):
//
//	da_z = σ'(a_z)·dh'·((1 − 2z)·ȧ_z·(h − n) + ḣ − (1 − n²)·ȧ_n)
//	da_n = (1 − n²)·(−2·n·dh'·(1 − z)·ȧ_n − dh'·σ'(a_z)·ȧ_z)
//	da_r = σ'(a_r)·(da_n·hp_n + P·((1 − 2r)·ȧ_r·hp_n + ḣp_n))
//	dxp = (da_r, da_z, da_n), dhp = (da_r, da_z, da_n·r + P·σ'(a_r)·ȧ_r),
//	dh = dh'·σ'(a_z)·ȧ_z
func (gruCellGradOp) VJP(out, w *Node, needs []bool) []*Node {
	ct, xp, hp, h := out.inputs[0], out.inputs[1], out.inputs[2], out.inputs[3]
	p := gruPrimal(xp, hp, h)
	n := p.h0
	ws := Split(w, -1, n, n, n, n, n, n, n)
	res := make([]*Node, 4)
	if needs[0] {
		res[0] = p.tangent(Slice(w, -1, 0, 3*n, 1), Slice(w, -1, 3*n, 6*n, 1), ws[6])
	}
	if !needs[1] && !needs[2] && !needs[3] {
		return res
	}
	u := ct
	ar, az := Add(ws[0], ws[3]), Add(ws[1], ws[4])
	sr, sz := SigmoidGrad(ar, p.ar), SigmoidGrad(az, p.az)
	an := tadd(ws[2], Mul(sr, p.hn), Mul(p.r, ws[5]))
	uz1 := Sub(u, Mul(u, p.z))
	pp := TanhGrad(uz1, p.n)
	hn := Sub(h, p.n)
	daz := SigmoidGrad(Mul(u, Sub(Add(Mul(oneMinus2(p.z), Mul(az, hn)), ws[6]), TanhGrad(an, p.n))), p.az)
	dan := TanhGrad(Neg(Add(MulScalar(Mul(p.n, Mul(uz1, an)), 2), Mul(u, sz))), p.n)
	dar := SigmoidGrad(Add(Mul(dan, p.hn), Mul(pp, Add(Mul(oneMinus2(p.r), Mul(ar, p.hn)), ws[5]))), p.ar)
	if needs[1] {
		res[1] = Concat(-1, dar, daz, dan)
	}
	if needs[2] {
		res[2] = Concat(-1, dar, daz, Add(Mul(dan, p.r), Mul(pp, sr)))
	}
	if needs[3] {
		res[3] = Mul(u, sz)
	}
	return res
}

// The JVP differentiates each output of the op (see gruGradRows) along
// the tangents, with P = da_n as above.
func (gruCellGradOp) JVP(out *Node, t []*Node) *Node {
	u, h := out.inputs[0], out.inputs[3]
	p := gruPrimal(out.inputs[1], out.inputs[2], h)
	n := p.h0
	var xr, xz, xn, hr, hz, hn *Node
	if t[1] != nil {
		x := Split(t[1], -1, n, n, n)
		xr, xz, xn = x[0], x[1], x[2]
	}
	if t[2] != nil {
		x := Split(t[2], -1, n, n, n)
		hr, hz, hn = x[0], x[1], x[2]
	}
	du, dh := t[0], t[3]
	ar, az := tadd(xr, hr), tadd(xz, hz)
	dr, dz := tsg(ar, p.ar), tsg(az, p.az)
	dn := ttg(tadd(xn, tmul(dr, p.hn), tmul(p.r, hn)), p.n)
	uz1 := Sub(u, Mul(u, p.z))
	pp := TanhGrad(uz1, p.n)
	var duz1 *Node
	if du != nil {
		duz1 = Sub(du, Mul(du, p.z))
	}
	ddn := tadd(ttg(tadd(duz1, tscale(tmul(u, dz), -1)), p.n), tscale(tmul(Mul(uz1, p.n), dn), -2))
	hmn := Sub(h, p.n)
	ddz := tsg(tadd(tmul(du, hmn), tmul(u, tadd(dh, tscale(dn, -1))), tmul(Mul(u, hmn), tmul(oneMinus2(p.z), az))), p.az)
	ddr := tsg(tadd(tmul(ddn, p.hn), tmul(pp, hn), tmul(Mul(pp, p.hn), tmul(oneMinus2(p.r), ar))), p.ar)
	ddhn := tadd(tmul(ddn, p.r), tmul(pp, dr))
	ddh := tadd(tmul(du, p.z), tmul(u, dz))
	return packTangents(h, ddr, ddz, ddn, ddr, ddz, ddhn, ddh)
}

func (o gruCellGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return batchRows(b, o, in, axes)
}

// GRUCellGrad returns the vector-Jacobian product of GRUCell: given
// ct = dh' (rows…, H) and the cell's operands xp, hp (rows…, 3H) and h
// (rows…, H), the cotangents [dxp | dhp | dh] (rows…, 7H) in one pass. It
// panics with a *tensor.Error naming the shapes when they do not fit.
func GRUCellGrad(ct, xp, hp, h *Node) *Node {
	checkNodes("gru_cell_grad", ct, xp, hp, h)
	in := []*Node{ct, xp, hp, h}
	gruCellGradOp{}.check(in)
	return apply(gruCellGradOp{}, in...)
}

// gruParts is the GRU cell as a composite of elementwise ops, for the
// rules.
type gruParts struct {
	ar, az, r, z, n, hn, h *Node
	h0                     int
}

func gruPrimal(xp, hp, h *Node) gruParts {
	n := h.Shape()[h.Dim()-1]
	x, p := Split(xp, -1, n, n, n), Split(hp, -1, n, n, n)
	g := gruParts{ar: Add(x[0], p[0]), az: Add(x[1], p[1]), hn: p[2], h: h, h0: n}
	g.r, g.z = Sigmoid(g.ar), Sigmoid(g.az)
	g.n = Tanh(Add(x[2], Mul(g.r, g.hn)))
	return g
}

// tangent returns ḣ' along the tangents of xp, hp and h (nil for zero):
// ḣ' = ṅ·(1 − z) + ż·(h − n) + z·ḣ.
func (g gruParts) tangent(dxp, dhp, dh *Node) *Node {
	n := g.h0
	var xr, xz, xn, hr, hz, hn *Node
	if dxp != nil {
		x := Split(dxp, -1, n, n, n)
		xr, xz, xn = x[0], x[1], x[2]
	}
	if dhp != nil {
		x := Split(dhp, -1, n, n, n)
		hr, hz, hn = x[0], x[1], x[2]
	}
	dr, dz := tsg(tadd(xr, hr), g.ar), tsg(tadd(xz, hz), g.az)
	dn := ttg(tadd(xn, tmul(dr, g.hn), tmul(g.r, hn)), g.n)
	var d1 *Node
	if dn != nil {
		d1 = Sub(dn, Mul(dn, g.z))
	}
	return tadd(d1, tmul(dz, Sub(g.h, g.n)), tmul(g.z, dh))
}
