package graph

import (
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// The fused scaled-dot-product attention (tensor.AttentionPacked; Dao et
// al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention
// with IO-Awareness", and Dao 2023, "FlashAttention-2"): the scores
// (..., Lq, Lk) are never stored, forward or reverse. Its one output packs
// the attention output and each query's log-sum-exp, (..., Lq, Ev+1), as
// svd packs its factors; Attention slices the output off. The reverse rule
// is one fused op (attention_grad) that recomputes the scores tile by
// tile from the log-sum-exp. The forward-mode rule, and the rules of
// attention_grad (needed only for second derivatives), are written with
// the composite ops (MatMul, Exp, ...) and so store the scores.

func init() {
	Register(attentionOp{})
	Register(attentionGradOp{})
}

// attentionOp is the packed attention of q, k, v and, when masked, an
// additive mask of at least two dimensions.
type attentionOp struct {
	scale          float64
	causal, masked bool
}

func (attentionOp) Name() string { return "attention" }

func (o attentionOp) Arity() int {
	if o.masked {
		return 4
	}
	return 3
}

// operands splits the inputs into q, k, v and the mask (nil without one).
func (o attentionOp) operands(in []*Node) (q, k, v, m *Node) {
	if o.masked {
		m = in[3]
	}
	return in[0], in[1], in[2], m
}

func (o attentionOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	var m *tensor.Tensor
	if o.masked {
		m = in[3]
	}
	shape := tensor.AttentionShape("attention", in[0], in[1], in[2], m, o.causal)
	return kern.Attention(g.AllocUninit(in[0].DType(), shape...), in[0], in[1], in[2], m, o.scale, o.causal)
}

func (o attentionOp) check(in []*Node) {
	q, k, v, m := o.operands(in)
	var mt *tensor.Tensor
	if m != nil {
		if m.Dim() < 2 {
			tensor.Fail("attention", "the mask needs at least 2 dimensions (..., queries, keys): %s", Describe(m))
		}
		mt = m.value
	}
	tensor.AttentionShape("attention", q.value, k.value, v.value, mt, o.causal)
}

// The reverse rule: q, k and v through the fused attention_grad (summed
// over the batch axes each operand was broadcast along), the mask through
// the composite dS = P ⊙ (dO·Vᵀ − D), which needs the scores.
func (o attentionOp) VJP(out, ct *Node, needs []bool) []*Node {
	q, k, v, m := o.operands(out.inputs)
	cts := make([]*Node, len(out.inputs))
	if needs[0] || needs[1] || needs[2] {
		ins := append(slices.Clone(out.inputs), out, ct)
		gr := Apply(attentionGradOp{o}, ins...)
		dq, dk, dv := unpackAttentionGrad(gr, q, k, v)
		cts[0], cts[1], cts[2] = SumTo(dq, q.Shape()...), SumTo(dk, k.Shape()...), SumTo(dv, v.Shape()...)
	}
	if m != nil && needs[3] {
		_, ds := attentionScoresGrad(o, q, k, v, m, out, ct)
		cts[3] = SumTo(ds, m.Shape()...)
	}
	return cotangents(out, cts...)
}

// unpackAttentionGrad splits attention_grad's packed result into the
// cotangents of q, k and v in the broadcast batch shape.
func unpackAttentionGrad(gr, q, k, v *Node) (dq, dk, dv *Node) {
	batch := gr.Shape()[:gr.Dim()-1]
	lq, e := q.Shape()[q.Dim()-2], q.Shape()[q.Dim()-1]
	lk, ev := v.Shape()[v.Dim()-2], v.Shape()[v.Dim()-1]
	part := func(lo, rows, cols int) *Node {
		return Reshape(Slice(gr, -1, lo, lo+rows*cols, 1), append(slices.Clone(batch), rows, cols)...)
	}
	return part(0, lq, e), part(lq*e, lk, e), part(lq*e+lk*e, lk, ev)
}

// attentionScores is the composite scale·q·kᵀ + mask (+ the causal −Inf
// above the diagonal), and attentionProbs exp(scores − lse) for the
// log-sum-exp column of the packed output.
func attentionScores(o attentionOp, q, k, m *Node) *Node {
	s := MulScalar(MatMulT(q, k, false, true), o.scale)
	if o.causal {
		n := q.Shape()[q.Dim()-2]
		c := make([]float64, n*n)
		for i := range n {
			for j := i + 1; j < n; j++ {
				c[i*n+j] = math.Inf(-1)
			}
		}
		s = Add(s, q.Graph().Const(tensor.FromValues(q.DType(), c, n, n)))
	}
	if m != nil {
		s = Add(s, m)
	}
	return s
}

// packedParts splits a packed output (or its cotangent or tangent) into
// the attention output (..., Lq, Ev) and the log-sum-exp (..., Lq, 1).
func packedParts(p *Node) (o, lse *Node) {
	w := p.Shape()[p.Dim()-1]
	return Slice(p, -1, 0, w-1, 1), Slice(p, -1, w-1, w, 1)
}

// attentionScoresGrad returns P = exp(S − lse) and dS = P ⊙ (dO·Vᵀ − D),
// D = rowsum(dO ⊙ O) − d̄lse, from the packed output out and its cotangent
// ct, as composite ops.
func attentionScoresGrad(o attentionOp, q, k, v, m, out, ct *Node) (p, ds *Node) {
	ov, lse := packedParts(out)
	do, dlse := packedParts(ct)
	p = Exp(Sub(attentionScores(o, q, k, m), lse))
	d := Sub(Sum(Mul(do, ov), []int{-1}, true), dlse)
	return p, Mul(p, Sub(MatMulT(do, v, false, true), d))
}

// With Ṡ = scale·(q̇kᵀ + qk̇ᵀ) + Ṁ and P the probabilities: the
// log-sum-exp moves by rowsum(P ⊙ Ṡ) and the output by
// (P ⊙ Ṡ)·V − lsė·O + P·V̇.
func (o attentionOp) JVP(out *Node, t []*Node) *Node {
	q, k, v, m := o.operands(out.inputs)
	ov, lse := packedParts(out)
	var sdot *Node
	addS := func(x *Node) {
		if sdot == nil {
			sdot = x
		} else {
			sdot = Add(sdot, x)
		}
	}
	if t[0] != nil {
		addS(MulScalar(MatMulT(t[0], k, false, true), o.scale))
	}
	if t[1] != nil {
		addS(MulScalar(MatMulT(q, t[1], false, true), o.scale))
	}
	if m != nil && t[3] != nil {
		addS(t[3])
	}
	p := Exp(Sub(attentionScores(o, q, k, m), lse))
	var odot, ldot *Node
	if sdot != nil {
		ps := Mul(p, sdot)
		ldot = Sum(ps, []int{-1}, true)
		odot = Sub(MatMul(ps, v), Mul(ldot, ov))
	}
	if t[2] != nil {
		pv := MatMul(p, t[2])
		if odot == nil {
			odot = pv
		} else {
			odot = Add(odot, pv)
		}
	}
	shape := out.Shape()
	if ldot == nil {
		ldot = out.Graph().Const(tensor.Zeros(out.DType(), append(slices.Clone(shape[:len(shape)-1]), 1)...))
	}
	return Concat(-1, BroadcastTo(odot, append(slices.Clone(shape[:len(shape)-1]), shape[len(shape)-1]-1)...),
		BroadcastTo(ldot, append(slices.Clone(shape[:len(shape)-1]), 1)...))
}

// The leading axes of every operand broadcast as batch axes; each has two
// axes of its own.
func (o attentionOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2, 2, 2}[:len(in)])
}

// attentionGradOp is the cotangent of attention's q, k and v (packed as
// tensor.AttentionGradPacked packs them) given the inputs, the packed
// output and its cotangent: inputs q, k, v, [mask,] out, ct.
type attentionGradOp struct{ fwd attentionOp }

func (attentionGradOp) Name() string { return "attention_grad" }

func (o attentionGradOp) Arity() int { return o.fwd.Arity() + 2 }

func (o attentionGradOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	var m *tensor.Tensor
	if o.fwd.masked {
		m = in[3]
	}
	n := len(in)
	shape := tensor.AttentionGradShape("attention_grad", in[0], in[1], in[2], m, in[n-2], in[n-1], o.fwd.causal)
	return kern.AttentionGrad(g.AllocUninit(in[0].DType(), shape...), in[0], in[1], in[2], m, in[n-2], in[n-1], o.fwd.scale, o.fwd.causal)
}

func (o attentionGradOp) check(in []*Node) {
	n := len(in)
	o.fwd.check(in[:n-2])
	q, k, v, m := o.fwd.operands(in)
	var mt *tensor.Tensor
	if m != nil {
		mt = m.value
	}
	tensor.AttentionGradShape("attention_grad", q.value, k.value, v.value, mt, in[n-2].value, in[n-1].value, o.fwd.causal)
}

// composite is attention_grad written with composite ops: the rules below
// differentiate it (second derivatives of attention only).
func (o attentionGradOp) composite(in []*Node) *Node {
	n := len(in)
	q, k, v, m := o.fwd.operands(in)
	out, ct := in[n-2], in[n-1]
	p, ds := attentionScoresGrad(o.fwd, q, k, v, m, out, ct)
	do, _ := packedParts(ct)
	batch := out.Shape()[:out.Dim()-2]
	flat := func(x *Node, rows, cols int) *Node {
		shape := append(slices.Clone(batch), rows, cols)
		return Reshape(BroadcastTo(x, shape...), append(slices.Clone(batch), rows*cols)...)
	}
	lq, e := q.Shape()[q.Dim()-2], q.Shape()[q.Dim()-1]
	lk, ev := v.Shape()[v.Dim()-2], v.Shape()[v.Dim()-1]
	dq := MulScalar(MatMul(ds, k), o.fwd.scale)
	dk := MulScalar(MatMulT(ds, q, true, false), o.fwd.scale)
	dv := MatMulT(p, do, true, false)
	return Concat(-1, flat(dq, lq, e), flat(dk, lk, e), flat(dv, lk, ev))
}

func (o attentionGradOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, compositeVJP(o.composite, out.inputs, ct, needs)...)
}

func (o attentionGradOp) JVP(out *Node, t []*Node) *Node {
	return compositeJVP(o.composite, out.inputs, t)
}

func (o attentionGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2, 2, 2, 2, 2}[:len(in)])
}

// Attention returns softmax(scale·q·kᵀ + mask)·v for queries q (..., Lq,
// E), keys k (..., Lk, E) and values v (..., Lk, Ev), batch axes
// broadcasting, computed by the fused kernel (tensor.AttentionPacked): the
// (Lq × Lk) scores are not stored, forward or reverse. mask (nil for none)
// is added to the scores and broadcasts to (..., Lq, Lk) without enlarging
// them; −Inf removes a key. causal removes every key after its query (Lq =
// Lk). A query with every key removed yields NaN, as softmax of a row of
// −Inf does. It panics with a *tensor.Error when the shapes or dtypes do
// not fit or there are no keys.
func Attention(q, k, v, mask *Node, scale float64, causal bool) *Node {
	op := attentionOp{scale: scale, causal: causal, masked: mask != nil}
	ins := []*Node{q, k, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	checkNodes("attention", ins...)
	if mask != nil && mask.Dim() < 2 {
		shape := []int{1, 1}
		if mask.Dim() == 1 {
			shape[1] = mask.Shape()[0]
		}
		ins[3] = Reshape(mask, shape...)
	}
	op.check(ins)
	out, _ := packedParts(apply(op, ins...))
	return out
}
