package tensor

import (
	"fmt"
	"math"
	"slices"
)

// Fused scaled-dot-product attention, as FlashAttention computes it (Dao,
// Fu, Ermon, Rudra and Ré 2022, "FlashAttention: Fast and Memory-Efficient
// Exact Attention with IO-Awareness"; Dao 2023, "FlashAttention-2: Faster
// Attention with Better Parallelism and Work Partitioning", for the loop
// order): a tile of queries meets the keys tile by tile, an online softmax
// keeps each row's running maximum and sum, and the (queries × keys) score
// matrix never exists beyond one tile. The reverse pass recomputes the
// scores tile by tile from each row's saved log-sum-exp.
//
// The forward result is packed, (..., Lq, Ev+1): columns 0…Ev−1 hold the
// attention output O = softmax(scale·QKᵀ + M)·V and column Ev the log-sum-exp
// of each row's scores, which the reverse pass needs (graph keeps both in
// one node, as it does the factors of an SVD). A row whose keys are all
// removed (scores all −Inf) has no distribution: its output is NaN, as the
// composite softmax gives, and its log-sum-exp −Inf.

// AttentionPacked returns the packed attention (..., Lq, Ev+1) of queries
// q (..., Lq, E), keys k (..., Lk, E) and values v (..., Lk, Ev): columns
// 0…Ev−1 are softmax(scale·q·kᵀ + mask)·v, column Ev the log-sum-exp of
// each row of scores. Batch axes broadcast. mask (nil for none) is added
// to the scores and broadcasts to (..., Lq, Lk); causal removes key j from
// query i when j > i (Lq = Lk). A row with every key removed gives NaN and
// log-sum-exp −Inf. It panics with a *Error when the shapes or dtypes do
// not fit.
func AttentionPacked(q, k, v, mask *Tensor, scale float64, causal bool) *Tensor {
	shape := AttentionShape("AttentionPacked", q, k, v, mask, causal)
	return attentionTrusted(newUninitOn("AttentionPacked", q.Device(), q.dtype, shape...), q, k, v, mask, scale, causal)
}

// AttentionGradPacked returns the cotangents of q, k and v given the
// packed forward result out (AttentionPacked of the same operands) and its
// cotangent ct (cotangents of the output columns and of the log-sum-exp
// column), packed along the last axis: (batch..., Lq·E + Lk·E + Lk·Ev),
// batch the broadcast batch shape, each block row-major (UnpackAttentionGrad
// splits it). Cotangents are not summed over broadcast batch axes. The
// mask's cotangent, if needed, is not computed here. It panics with a
// *Error when the shapes or dtypes do not fit.
func AttentionGradPacked(q, k, v, mask, out, ct *Tensor, scale float64, causal bool) *Tensor {
	gs := AttentionGradShape("AttentionGradPacked", q, k, v, mask, out, ct, causal)
	return attentionGradTrusted(newUninitOn("AttentionGradPacked", q.Device(), q.dtype, gs...), q, k, v, mask, out, ct, scale, causal)
}

// AttentionGradShape returns AttentionGradPacked's result shape, (batch...,
// Lq·E + Lk·E + Lk·Ev) with batch the broadcast of every operand's batch
// axes, panicking for op as AttentionShape does, or when out and ct are
// not of the packed result's dtype with last axes (Lq, Ev+1).
func AttentionGradShape(op string, q, k, v, mask, out, ct *Tensor, causal bool) []int {
	shape := AttentionShape(op, q, k, v, mask, causal)
	nd := len(shape)
	parts := [][]int{shape[:nd-2]}
	for _, t := range []*Tensor{out, ct} {
		if t == nil || t.dtype != q.dtype || t.Dim() < 2 || !slices.Equal(t.shape[t.Dim()-2:], shape[nd-2:]) {
			Fail(op, "out and ct must be (..., %d, %d) %v, got %s", shape[nd-2], shape[nd-1], q.dtype, describe(out, ct))
		}
		parts = append(parts, t.shape[:t.Dim()-2])
	}
	if !Broadcastable(parts...) {
		Fail(op, "the batch axes of out and ct %s do not broadcast with those of q, k, v %s", describe(out, ct), fmtShape(shape[:nd-2]))
	}
	lq, e := q.shape[q.Dim()-2], q.shape[q.Dim()-1]
	lk, ev := v.shape[v.Dim()-2], v.shape[v.Dim()-1]
	return append(BroadcastShapes(op, parts...), lq*e+lk*e+lk*ev)
}

// UnpackAttentionGrad splits AttentionGradPacked's result g into the
// cotangents of q (batch..., Lq, E), k (batch..., Lk, E) and v (batch...,
// Lk, Ev), as views of g.
func UnpackAttentionGrad(g *Tensor, lq, lk, e, ev int) (dq, dk, dv *Tensor) {
	nd := g.Dim()
	batch := g.shape[:nd-1]
	part := func(lo, rows, cols int) *Tensor {
		s := Slice(g, -1, lo, lo+rows*cols, 1)
		st := append(slices.Clone(s.strides[:nd-1]), cols, 1)
		return &Tensor{dtype: g.dtype, shape: append(slices.Clone(batch), rows, cols), strides: st,
			offset: s.offset, f32: s.f32, f64: s.f64, dev: s.dev}
	}
	return part(0, lq, e), part(lq*e, lk, e), part(lq*e+lk*e, lk, ev)
}

// AttentionShape returns the packed result's shape (batch..., Lq, Ev+1) for
// AttentionPacked's operands, panicking for op with a *Error naming the
// shapes when they do not fit: q, k, v of one dtype and at least two
// dimensions, q and k of one width E, k and v of one length Lk ≥ 1, batch
// axes that broadcast, a mask of their dtype whose last two axes
// broadcast to (Lq, Lk) (its leading axes broadcast with the batch), and
// Lq = Lk when causal.
func AttentionShape(op string, q, k, v, mask *Tensor, causal bool) []int {
	if q == nil || k == nil || v == nil {
		Fail(op, "nil operand among q, k, v")
	}
	bad := func(why string) {
		m := "none"
		if mask != nil {
			m = describe(mask)
		}
		Fail(op, "%s: q %s, k %s, v %s, mask %s", why, describe(q), describe(k), describe(v), m)
	}
	if q.dtype != k.dtype || q.dtype != v.dtype || (mask != nil && mask.dtype != q.dtype) {
		bad("mixed dtypes")
	}
	if q.Dim() < 2 || k.Dim() < 2 || v.Dim() < 2 {
		bad("q, k and v need at least 2 dimensions (..., length, width)")
	}
	lq, e := q.shape[q.Dim()-2], q.shape[q.Dim()-1]
	lk, ek := k.shape[k.Dim()-2], k.shape[k.Dim()-1]
	lv, ev := v.shape[v.Dim()-2], v.shape[v.Dim()-1]
	switch {
	case e != ek:
		bad("queries and keys differ in width")
	case lk != lv:
		bad("keys and values differ in length")
	case lk == 0:
		bad("no keys")
	case causal && lq != lk:
		bad("a causal mask needs as many queries as keys")
	}
	parts := [][]int{q.shape[:q.Dim()-2], k.shape[:k.Dim()-2], v.shape[:v.Dim()-2]}
	if mask != nil {
		md := mask.Dim()
		if md >= 1 && mask.shape[md-1] != 1 && mask.shape[md-1] != lk || md >= 2 && mask.shape[md-2] != 1 && mask.shape[md-2] != lq {
			bad(fmt.Sprintf("the mask does not broadcast to the scores (..., %d, %d)", lq, lk))
		}
		parts = append(parts, mask.shape[:max(0, md-2)])
	}
	if !Broadcastable(parts...) {
		bad("batch axes do not broadcast")
	}
	batch := BroadcastShapes(op, parts...)
	return append(batch, lq, ev+1)
}

// attnPlan is one attention call's layout: the broadcast batch, the sizes,
// and for every batch index the storage offsets of each operand's matrix.
type attnPlan struct {
	nb, lq, lk, e, ev      int
	q, k, v, m             *Tensor // rows of q, k, v have unit stride; m may be nil
	ldq, ldk, ldv          int
	qOff, kOff, vOff, mOff []int
	msr, msc               int // the mask's strides over query rows and key columns (0: broadcast)
	scale                  float64
	causal                 bool
}

// newAttnPlan lays out a call over the batch shape batch, to which every
// operand's batch axes broadcast.
func newAttnPlan(q, k, v, mask *Tensor, scale float64, causal bool, batch []int) *attnPlan {
	unit := func(t *Tensor) *Tensor {
		if t.strides[t.Dim()-1] != 1 && t.shape[t.Dim()-1] > 1 {
			return t.Contiguous()
		}
		return t
	}
	q, k, v = unit(q), unit(k), unit(v)
	p := &attnPlan{nb: shapeSize(batch), lq: q.shape[q.Dim()-2], e: q.shape[q.Dim()-1],
		lk: k.shape[k.Dim()-2], ev: v.shape[v.Dim()-1], q: q, k: k, v: v, m: mask,
		scale: scale, causal: causal}
	p.ldq, p.ldk, p.ldv = rowStride(q), rowStride(k), rowStride(v)
	p.qOff, p.kOff, p.vOff = attnOffsets(q, 2, batch), attnOffsets(k, 2, batch), attnOffsets(v, 2, batch)
	if mask != nil {
		core := min(2, mask.Dim())
		p.mOff = attnOffsets(mask, core, batch)
		nd := mask.Dim()
		if nd >= 1 && mask.shape[nd-1] != 1 {
			p.msc = mask.strides[nd-1]
		}
		if nd >= 2 && mask.shape[nd-2] != 1 {
			p.msr = mask.strides[nd-2]
		}
	}
	return p
}

// rowStride is the stride between the rows of t's matrices (the second
// last axis), or the row length when there is one row.
func rowStride(t *Tensor) int {
	nd := t.Dim()
	if t.shape[nd-2] == 1 {
		return max(1, t.shape[nd-1])
	}
	return t.strides[nd-2]
}

// attnOffsets lists, for every index of batch in row-major order, the
// storage offset of t's matrix there: t's leading axes (all but its last
// core) align with batch's trailing ones, size-1 axes broadcasting.
func attnOffsets(t *Tensor, core int, batch []int) []int {
	nb := shapeSize(batch)
	offs := make([]int, nb)
	tb := len(t.shape) - core
	str := make([]int, len(batch))
	for i := range tb {
		j := len(batch) - tb + i
		if t.shape[i] != 1 {
			str[j] = t.strides[i]
		}
	}
	idx := make([]int, len(batch))
	off := t.offset
	for bi := range nb {
		offs[bi] = off
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d]++
			off += str[d]
			if idx[d] < batch[d] {
				break
			}
			off -= idx[d] * str[d]
			idx[d] = 0
		}
	}
	return offs
}

// attentionTrusted is AttentionPacked into dst after validation
// (graph calls it through internal/unchecked): dst is contiguous and has
// AttentionShape's shape.
func attentionTrusted(dst, q, k, v, mask *Tensor, scale float64, causal bool) *Tensor {
	if dst.dev != nil || q.dev != nil || k.dev != nil || v.dev != nil || (mask != nil && mask.dev != nil) {
		gpuAttention(dst, q, k, v, mask, scale, causal)
		return dst
	}
	p := newAttnPlan(q, k, v, mask, scale, causal, dst.shape[:dst.Dim()-2])
	if q.dtype == Float32 {
		attnForward(p, storage[float32](dst)[dst.offset:], float32(math.Inf(-1)), fexp32)
	} else {
		attnForward(p, storage[float64](dst)[dst.offset:], math.Inf(-1), fexp64)
	}
	return dst
}

// attentionGradTrusted is AttentionGradPacked into dst after
// validation (graph calls it through internal/unchecked): dst is
// contiguous with AttentionGradShape's shape, out and ct broadcast to the
// packed result over dst's batch axes (any layout).
func attentionGradTrusted(dst, q, k, v, mask, out, ct *Tensor, scale float64, causal bool) *Tensor {
	if dst.dev != nil || q.dev != nil || k.dev != nil || v.dev != nil || (mask != nil && mask.dev != nil) {
		gpuAttentionGrad(dst, q, k, v, mask, out, ct, scale, causal)
		return dst
	}
	batch := dst.shape[:dst.Dim()-1]
	p := newAttnPlan(q, k, v, mask, scale, causal, batch)
	full := func(t *Tensor) *Tensor {
		shape := append(slices.Clone(batch), t.shape[t.Dim()-2:]...)
		if !slices.Equal(shape, t.shape) {
			t = expandTrusted(t, shape)
		}
		return t.Contiguous()
	}
	out, ct = full(out), full(ct)
	if q.dtype == Float32 {
		attnBackward(p, storage[float32](dst)[dst.offset:], storage[float32](out)[out.offset:], storage[float32](ct)[ct.offset:], exp32Shift)
	} else {
		attnBackward(p, storage[float64](dst)[dst.offset:], storage[float64](out)[out.offset:], storage[float64](ct)[ct.offset:], exp64Shift)
	}
	return dst
}
