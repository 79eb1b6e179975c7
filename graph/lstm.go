package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// The LSTM cell (Hochreiter and Schmidhuber 1997, "Long short-term
// memory") as one op: the composite (split the gates, three sigmoids, two
// tanh, four products and a sum, then the same again backwards, with a
// scatter of each gate's cotangent into the whole gate tensor) makes
// about thirty passes over memory per step; lstm_cell reads the gates and
// the cell state once and writes the packed state [h' | c'], and its VJP
// is one lstm_cell_grad op that writes the gates' and c's cotangents in
// one pass. The rules of lstm_cell_grad (second derivatives) are written
// as composites of elementwise ops.

func init() {
	Register(lstmCellOp{})
	Register(lstmCellGradOp{})
}

// lstmCellOp computes [h' | c'] (rows…, 2H) from the input projection xp
// (rows…, 4H), the recurrent projection hp (rows…, 4H) and the cell state
// c (rows…, H); the gates are xp + hp in PyTorch's order i, f, g, o.
type lstmCellOp struct{}

func (lstmCellOp) Name() string { return "lstm_cell" }

func (lstmCellOp) Arity() int { return 3 }

func (lstmCellOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	xp, hp, c := in[0], in[1], in[2]
	dst := g.AllocUninit(c.DType(), widened(g, c.Shape(), 2)...)
	if kern.DeviceCell("lstm_cell", dst, in) {
		return dst
	}
	if c.DType() == tensor.Float32 {
		lstmRows(g, cellRuns32, dst, xp, hp, c)
	} else {
		lstmRows(g, cellRuns64, dst, xp, hp, c)
	}
	return dst
}

func (lstmCellOp) check(in []*Node) { checkCell("lstm_cell", in[2], in, []int{4, 4, 1}) }

func (lstmCellOp) VJP(out, ct *Node, needs []bool) []*Node {
	xp, hp, c := out.inputs[0], out.inputs[1], out.inputs[2]
	h := c.Shape()[c.Dim()-1]
	d := apply(lstmCellGradOp{}, ct, xp, hp, c)
	da := Slice(d, -1, 0, 4*h, 1)
	res := make([]*Node, 3)
	if needs[0] {
		res[0] = da
	}
	if needs[1] {
		res[1] = da
	}
	if needs[2] {
		res[2] = Slice(d, -1, 4*h, 5*h, 1)
	}
	return res
}

func (lstmCellOp) JVP(out *Node, t []*Node) *Node {
	p := lstmPrimal(out.inputs[0], out.inputs[1], out.inputs[2])
	dh, dc := p.tangent(tadd(t[0], t[1]), t[2])
	return packTangents(p.c, dh, dc)
}

func (o lstmCellOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return batchRows(b, o, in, axes)
}

// LSTMCell returns the new hidden and cell states h' and c' (rows…, H) of
// an LSTM step from the input projection xp = x·W_ihᵀ + b_ih (rows…, 4H),
// the recurrent projection hp = h·W_hhᵀ + b_hh (rows…, 4H; any split of
// the gates' pre-activations between xp and hp gives the same result) and
// the cell state c (rows…, H):
//
//	i, f, g, o = σ, σ, tanh, σ of xp + hp (PyTorch's gate order)
//	c' = f∘c + i∘g,  h' = o∘tanh(c')
//
// A nil hp or c is zeros. h' and c' are the two halves of one op's output
// (views, with rows strided 2H apart). It panics with a *tensor.Error
// naming the shapes unless xp and hp are (rows…, 4H) and c (rows…, H) of
// one float dtype.
func LSTMCell(xp, hp, c *Node) (h2, c2 *Node) {
	checkNodes("lstm_cell", xp)
	if c == nil {
		s := xp.Shape()
		if len(s) == 0 || s[len(s)-1]%4 != 0 {
			tensor.Fail("lstm_cell", "input projection %s is not (rows…, 4H)", Describe(xp))
		}
		c = zerosNode(xp, s[len(s)-1]/4)
	}
	if hp == nil {
		hp = zerosNode(xp, xp.Shape()[xp.Dim()-1])
	}
	checkNodes("lstm_cell", xp, hp, c)
	in := []*Node{xp, hp, c}
	lstmCellOp{}.check(in)
	out := apply(lstmCellOp{}, in...)
	h := c.Shape()[c.Dim()-1]
	return Slice(out, -1, 0, h, 1), Slice(out, -1, h, 2*h, 1)
}

// lstmCellGradOp is the VJP of lstm_cell: given ct = [dh' | dc']
// (rows…, 2H) and the cell's operands xp, hp, c, it returns [da | dc]
// (rows…, 5H), the cotangent of the gates' pre-activations (xp's and hp's
// both) and of c.
type lstmCellGradOp struct{}

func (lstmCellGradOp) Name() string { return "lstm_cell_grad" }

func (lstmCellGradOp) Arity() int { return 4 }

func (lstmCellGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	ct, xp, hp, c := in[0], in[1], in[2], in[3]
	dst := g.AllocUninit(c.DType(), widened(g, c.Shape(), 5)...)
	if kern.DeviceCell("lstm_cell_grad", dst, in) {
		return dst
	}
	if c.DType() == tensor.Float32 {
		lstmGradRows(g, cellRuns32, dst, ct, xp, hp, c)
	} else {
		lstmGradRows(g, cellRuns64, dst, ct, xp, hp, c)
	}
	return dst
}

func (lstmCellGradOp) check(in []*Node) {
	checkCell("lstm_cell_grad", in[3], in, []int{2, 4, 4, 1})
}

// The op is linear in ct, so its VJP in ct is the cell's JVP; the VJP in
// xp, hp and c is the gradient of ⟨ct, J·w⟩ for the cell's Jacobian J and
// the cotangent w = (ȧ, ċ), which with e = dc' + dh'·o·(1 − k²),
// k = tanh c', ċ' = J's c-row applied to w and
// q = (1 − k²)·(dh'·σ'(a_o)·ȧ_o − 2·dh'·o·k·ċ') is
//
//	da_o = σ'(a_o)·(dh'·k·(1 − 2o)·ȧ_o + dh'·(1 − k²)·ċ')
//	da_i = σ'(a_i)·(q·g + e·((1 − 2i)·ȧ_i·g + (1 − g²)·ȧ_g))
//	da_f = σ'(a_f)·(q·c + e·((1 − 2f)·ȧ_f·c + ċ))
//	da_g = (1 − g²)·(q·i + e·(σ'(a_i)·ȧ_i − 2·i·g·ȧ_g))
//	dc = q·f + e·σ'(a_f)·ȧ_f
func (lstmCellGradOp) VJP(out, w *Node, needs []bool) []*Node {
	ct, xp, hp, c := out.inputs[0], out.inputs[1], out.inputs[2], out.inputs[3]
	p := lstmPrimal(xp, hp, c)
	h := p.h
	ws := Split(w, -1, h, h, h, h, h)
	res := make([]*Node, 4)
	if needs[0] {
		dh, dc := p.tangent(Slice(w, -1, 0, 4*h, 1), ws[4])
		res[0] = packTangents(p.c, dh, dc)
	}
	if !needs[1] && !needs[2] && !needs[3] {
		return res
	}
	u, v := Slice(ct, -1, 0, h, 1), Slice(ct, -1, h, 2*h, 1)
	wi, wf, wg, wo, wc := ws[0], ws[1], ws[2], ws[3], ws[4]
	e := Add(v, TanhGrad(Mul(u, p.o), p.k))
	si, sf := SigmoidGrad(wi, p.ai), SigmoidGrad(wf, p.af)
	cdot := tadd(Mul(sf, c), Mul(p.f, wc), Mul(si, p.g), Mul(p.i, TanhGrad(wg, p.g)))
	uo := Mul(u, p.o)
	q := TanhGrad(Sub(Mul(u, SigmoidGrad(wo, p.ao)), MulScalar(Mul(uo, Mul(p.k, cdot)), 2)), p.k)
	dao := SigmoidGrad(Add(Mul(Mul(u, p.k), Mul(oneMinus2(p.o), wo)), TanhGrad(Mul(u, cdot), p.k)), p.ao)
	dai := SigmoidGrad(Add(Mul(q, p.g), Mul(e, Add(Mul(oneMinus2(p.i), Mul(wi, p.g)), TanhGrad(wg, p.g)))), p.ai)
	daf := SigmoidGrad(Add(Mul(q, c), Mul(e, Add(Mul(oneMinus2(p.f), Mul(wf, c)), wc))), p.af)
	dag := TanhGrad(Add(Mul(q, p.i), Mul(e, Sub(si, MulScalar(Mul(Mul(p.i, p.g), wg), 2)))), p.g)
	da := Concat(-1, dai, daf, dag, dao)
	if needs[1] {
		res[1] = da
	}
	if needs[2] {
		res[2] = da
	}
	if needs[3] {
		res[3] = Add(Mul(q, p.f), Mul(e, sf))
	}
	return res
}

// The JVP differentiates each output of the op (see lstmGradRows) along
// the tangents: with i̇ = σ'(a_i)·ȧ_i and so on, ċ' = ḟ·c + f·ċ + i̇·g + i·ġ,
// k̇ = (1 − k²)·ċ' and ė = d(dc') + (d(dh')·o + dh'·ȯ)·(1 − k²) − 2·dh'·o·k·k̇.
func (lstmCellGradOp) JVP(out *Node, t []*Node) *Node {
	ct, c := out.inputs[0], out.inputs[3]
	p := lstmPrimal(out.inputs[1], out.inputs[2], c)
	h := p.h
	u, v := Slice(ct, -1, 0, h, 1), Slice(ct, -1, h, 2*h, 1)
	var du, dv, ai, af, ag, ao *Node
	if t[0] != nil {
		du, dv = Slice(t[0], -1, 0, h, 1), Slice(t[0], -1, h, 2*h, 1)
	}
	if da := tadd(t[1], t[2]); da != nil {
		a := Split(da, -1, h, h, h, h)
		ai, af, ag, ao = a[0], a[1], a[2], a[3]
	}
	di, df, dg, do := tsg(ai, p.ai), tsg(af, p.af), ttg(ag, p.g), tsg(ao, p.ao)
	dc2 := tadd(tmul(df, c), tmul(p.f, t[3]), tmul(di, p.g), tmul(p.i, dg))
	dk := ttg(dc2, p.k)
	uo := Mul(u, p.o)
	e := Add(v, TanhGrad(uo, p.k))
	de := tadd(dv, ttg(tmul(du, p.o), p.k), ttg(tmul(u, do), p.k), tscale(tmul(uo, tmul(p.k, dk)), -2))
	ddi := tsg(tadd(tmul(de, p.g), tmul(e, dg), tmul(e, tmul(p.g, tmul(oneMinus2(p.i), ai)))), p.ai)
	ddf := tsg(tadd(tmul(de, c), tmul(e, t[3]), tmul(e, tmul(c, tmul(oneMinus2(p.f), af)))), p.af)
	ddg := tadd(ttg(tadd(tmul(de, p.i), tmul(e, di)), p.g), tscale(tmul(Mul(e, Mul(p.i, p.g)), dg), -2))
	ddo := tsg(tadd(tmul(du, p.k), tmul(u, dk), tmul(u, tmul(p.k, tmul(oneMinus2(p.o), ao)))), p.ao)
	ddc := tadd(tmul(de, p.f), tmul(e, df))
	return packTangents(c, ddi, ddf, ddg, ddo, ddc)
}

func (o lstmCellGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return batchRows(b, o, in, axes)
}

// LSTMCellGrad returns the vector-Jacobian product of LSTMCell: given
// ct = [dh' | dc'] (rows…, 2H) and the cell's operands xp, hp (rows…, 4H)
// and c (rows…, H), the cotangents [da | dc] (rows…, 5H) of the gates'
// pre-activations (xp's and hp's alike) and of c, in one pass. It panics
// with a *tensor.Error naming the shapes when they do not fit.
func LSTMCellGrad(ct, xp, hp, c *Node) *Node {
	checkNodes("lstm_cell_grad", ct, xp, hp, c)
	in := []*Node{ct, xp, hp, c}
	lstmCellGradOp{}.check(in)
	return apply(lstmCellGradOp{}, in...)
}

// lstmParts is the LSTM cell as a composite of elementwise ops, for the
// rules: pre-activations, gates, c' and k = tanh c'.
type lstmParts struct {
	ai, af, ag, ao, i, f, g, o, c, c2, k *Node
	h                                    int
}

func lstmPrimal(xp, hp, c *Node) lstmParts {
	h := c.Shape()[c.Dim()-1]
	a := Split(Add(xp, hp), -1, h, h, h, h)
	p := lstmParts{ai: a[0], af: a[1], ag: a[2], ao: a[3], c: c, h: h}
	p.i, p.f, p.g, p.o = Sigmoid(a[0]), Sigmoid(a[1]), Tanh(a[2]), Sigmoid(a[3])
	p.c2 = Add(Mul(p.f, c), Mul(p.i, p.g))
	p.k = Tanh(p.c2)
	return p
}

// tangent returns the cell's tangents (ḣ', ċ') along the pre-activations'
// tangent da (rows…, 4H) and c's tangent dc, either nil for zero.
func (p lstmParts) tangent(da, dc *Node) (dh, dc2 *Node) {
	var di, df, dg, do *Node
	if da != nil {
		a := Split(da, -1, p.h, p.h, p.h, p.h)
		di, df, dg, do = SigmoidGrad(a[0], p.ai), SigmoidGrad(a[1], p.af), TanhGrad(a[2], p.g), SigmoidGrad(a[3], p.ao)
	}
	dc2 = tadd(tmul(df, p.c), tmul(p.f, dc), tmul(di, p.g), tmul(p.i, dg))
	dh = tadd(tmul(do, p.k), tmul(p.o, ttg(dc2, p.k)))
	return dh, dc2
}

// checkCell checks a fused cell's operands: one float dtype, the same
// leading (row) axes, and last axes of widths[k]·H for the state s's H.
func checkCell(op string, s *Node, in []*Node, widths []int) {
	dt := s.DType()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		tensor.Fail(op, "operands %s: want float32 or float64", Describe(in...))
	}
	if s.Dim() == 0 {
		tensor.Fail(op, "operands %s: the state must have a last axis of H features", Describe(in...))
	}
	rows, h := s.Shape()[:s.Dim()-1], s.Shape()[s.Dim()-1]
	for k, x := range in {
		if x.DType() != dt || x.Dim() != s.Dim() || !slices.Equal(x.Shape()[:x.Dim()-1], rows) || x.Shape()[x.Dim()-1] != widths[k]*h {
			tensor.Fail(op, "operands %s do not fit: want rows (…, %d) of widths %v×%d", Describe(in...), h, widths, h)
		}
	}
}

// widened returns shape with its last axis multiplied by k, in graph
// memory.
func widened(g *Graph, shape []int, k int) []int {
	s := g.AllocInts(len(shape))
	copy(s, shape)
	s[len(s)-1] *= k
	return s
}

// zerosNode returns a constant of zeros shaped like x but with n features
// on its last axis, in memory the graph recycles.
func zerosNode(x *Node, n int) *Node {
	s := widened(x.g, x.Shape(), 1)
	s[len(s)-1] = n
	return x.g.Const(x.g.Alloc(x.DType(), s...))
}

// batchRows is the batching rule of the fused cells, whose operands share
// their leading axes: the batch axis goes to the front of every operand
// (unbatched ones are broadcast) and becomes one more row axis.
func batchRows(b *Batching, op Op, in []*Node, axes []int) (*Node, int) {
	ins := make([]*Node, len(in))
	for i, x := range in {
		ins[i] = b.toFront(x, axes[i])
	}
	return Apply(op, ins...), 0
}

// packTangents concatenates tangent pieces along the last axis, zeros of
// like's shape standing for nil ones; it returns nil when all are nil.
func packTangents(like *Node, parts ...*Node) *Node {
	if !slices.ContainsFunc(parts, func(n *Node) bool { return n != nil }) {
		return nil
	}
	for i, p := range parts {
		if p == nil {
			parts[i] = like.g.Const(like.g.Alloc(like.DType(), like.Shape()...))
		}
	}
	return Concat(-1, parts...)
}

// The tangent arithmetic below treats nil as a symbolic zero.

func tadd(xs ...*Node) *Node {
	var s *Node
	for _, x := range xs {
		switch {
		case x == nil:
		case s == nil:
			s = x
		default:
			s = Add(s, x)
		}
	}
	return s
}

func tmul(a, b *Node) *Node {
	if a == nil || b == nil {
		return nil
	}
	return Mul(a, b)
}

func tscale(a *Node, s float64) *Node {
	if a == nil {
		return nil
	}
	return MulScalar(a, s)
}

func tsg(v, x *Node) *Node {
	if v == nil {
		return nil
	}
	return SigmoidGrad(v, x)
}

func ttg(v, y *Node) *Node {
	if v == nil {
		return nil
	}
	return TanhGrad(v, y)
}

// oneMinus2 returns 1 − 2y: σ(1 − σ) differentiated, divided by σ(1 − σ), at σ = y.
func oneMinus2(y *Node) *Node { return AddScalar(MulScalar(y, -2), 1) }
