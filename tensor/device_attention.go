package tensor

import (
	"math"
	"slices"
)

// Scaled dot-product attention on a GPU, composed from cuBLAS products
// and the row kernels. Unlike the CPU's fused kernel it writes the
// (Lq × Lk) scores of each batch entry to memory; the backward pass
// recomputes them and the probabilities from the saved log-sum-exp, as
// the CPU's does (Dao et al. 2022, FlashAttention, Algorithm 4's
// arithmetic without its tiling).

// attnGeom is the shapes of one attention call, its operands broadcast
// over the batch axes and laid out contiguously as (B, rows, cols).
type attnGeom struct {
	op               string
	st               *deviceStore
	dt               DType
	batch            []int // the broadcast batch shape
	b, lq, lk, e, ev int
	q, k, v          *Tensor
	mask             *Tensor // nil, or the additive mask seen as (batch..., Lq, Lk)
	causal           bool
	scale            float64
	release          []func()
}

func newAttnGeom(op string, st *deviceStore, batch []int, q, k, v, mask *Tensor, scale float64, causal bool) *attnGeom {
	g := &attnGeom{op: op, st: st, dt: q.dtype, batch: batch, b: shapeSize(batch), causal: causal, scale: scale,
		lq: q.shape[q.Dim()-2], lk: k.shape[k.Dim()-2], e: q.shape[q.Dim()-1], ev: v.shape[v.Dim()-1]}
	g.q = g.full(q, g.lq, g.e)
	g.k = g.full(k, g.lk, g.e)
	g.v = g.full(v, g.lk, g.ev)
	if mask != nil {
		g.mask = expandTrusted(mask, append(slices.Clone(batch), g.lq, g.lk))
	}
	return g
}

// full returns t broadcast to (B, rows, cols), contiguous.
func (g *attnGeom) full(t *Tensor, rows, cols int) *Tensor {
	c, done := contiguousOperand(g.op, expandTrusted(t, append(slices.Clone(g.batch), rows, cols)))
	g.release = append(g.release, done)
	return reshapeTrusted(c, []int{g.b, rows, cols})
}

func (g *attnGeom) alloc(shape ...int) *Tensor {
	t := newUninitOn(g.op, g.st.device, g.dt, shape...)
	g.release = append(g.release, t.release)
	return t
}

func (g *attnGeom) done() {
	for _, f := range g.release {
		f()
	}
}

// gemm sets c (B, m, n) = alpha·op(a)·op(b) + beta·c per batch entry.
func (g *attnGeom) gemm(transA, transB bool, m, n, k int, a, b, c *Tensor, alpha, beta float64) {
	gpuCheck(g.op, g.st.be.Gemm(devDType(g.dt), transA, transB, g.b, m, n, k,
		a.mem(), shapeSize(a.shape[1:]), b.mem(), shapeSize(b.shape[1:]), c.mem(), m*n, alpha, beta))
}

// scores returns S = scale·q·kᵀ + mask, with −∞ above the diagonal when
// causal, as (B, Lq, Lk).
func (g *attnGeom) scores() *Tensor {
	s := g.alloc(g.b, g.lq, g.lk)
	g.gemm(false, true, g.lq, g.lk, g.e, g.q, g.k, s, g.scale, 0)
	sb := reshapeTrusted(s, append(slices.Clone(g.batch), g.lq, g.lk))
	if g.mask != nil {
		gpuBinary("Add", sb, sb, g.mask)
	}
	if g.causal {
		c := New(g.dt, g.lq, g.lk)
		for i := range g.lq {
			for j := i + 1; j < g.lk; j++ {
				c.setFlat(i*g.lk+j, math.Inf(-1))
			}
		}
		cd := c.To(g.st.device)
		g.release = append(g.release, cd.release)
		gpuBinary("Add", sb, sb, expandTrusted(cd, sb.shape))
	}
	return s
}

// gpuAttention is attentionTrusted on a GPU: dst (batch..., Lq, Ev+1).
func gpuAttention(dst, q, k, v, mask *Tensor, scale float64, causal bool) {
	defer alive(dst, q, k, v, mask)
	const op = "Attention"
	st := sameDevice(op, dst, q, k, v, mask)
	if dst.Size() == 0 {
		return
	}
	nd := dst.Dim()
	g := newAttnGeom(op, st, dst.shape[:nd-2], q, k, v, mask, scale, causal)
	defer g.done()
	s := g.scores()
	dt := devDType(g.dt)
	lse := g.alloc(g.b, g.lq, 1)
	gpuCheck(op, st.be.ReduceLast("logsumexp", dt, g.b*g.lq, g.lk, 0, lse.mem(), s.mem()))
	p := g.alloc(g.b, g.lq, g.lk)
	gpuCheck(op, st.be.Softmax(dt, g.b*g.lq, g.lk, p.mem(), s.mem(), false))
	o := g.alloc(g.b, g.lq, g.ev)
	g.gemm(false, false, g.lq, g.ev, g.lk, p, g.v, o, 1, 0)
	packed := reshapeTrusted(dst, []int{g.b, g.lq, g.ev + 1})
	gpuCopy(op, sliceTrusted(packed, 2, 0, g.ev, 1), o)
	gpuCopy(op, sliceTrusted(packed, 2, g.ev, g.ev+1, 1), lse)
}

// gpuAttentionGrad is attentionGradTrusted on a GPU: dst (batch...,
// Lq·E + Lk·E + Lk·Ev) gets dq, dk and dv given the packed forward
// result out and its cotangent ct.
func gpuAttentionGrad(dst, q, k, v, mask, out, ct *Tensor, scale float64, causal bool) {
	defer alive(dst, q, k, v, mask, out, ct)
	const op = "AttentionGrad"
	st := sameDevice(op, dst, q, k, v, mask, out, ct)
	if dst.Size() == 0 {
		return
	}
	g := newAttnGeom(op, st, dst.shape[:dst.Dim()-1], q, k, v, mask, scale, causal)
	defer g.done()
	dt := devDType(g.dt)
	outF, ctF := g.full(out, g.lq, g.ev+1), g.full(ct, g.lq, g.ev+1)
	o := g.alloc(g.b, g.lq, g.ev)
	gpuCopy(op, o, sliceTrusted(outF, 2, 0, g.ev, 1))
	dO := g.alloc(g.b, g.lq, g.ev)
	gpuCopy(op, dO, sliceTrusted(ctF, 2, 0, g.ev, 1))
	lse, dLSE := sliceTrusted(outF, 2, g.ev, g.ev+1, 1), sliceTrusted(ctF, 2, g.ev, g.ev+1, 1)
	// P = exp(S − lse), recomputed.
	p := g.scores()
	gpuBinary("Sub", p, p, expandTrusted(lse, p.shape))
	gpuCheck(op, st.be.Unary("exp", dt, p.Size(), p.mem(), p.mem()))
	// dV = Pᵀ·dO, dP = dO·Vᵀ.
	dv := g.alloc(g.b, g.lk, g.ev)
	g.gemm(true, false, g.lk, g.ev, g.lq, p, dO, dv, 1, 0)
	dp := g.alloc(g.b, g.lq, g.lk)
	g.gemm(false, true, g.lq, g.lk, g.ev, dO, g.v, dp, 1, 0)
	// dS = P ⊙ (dP − rowsum(dO ⊙ O) + dlse): the softmax's VJP plus the
	// log-sum-exp column's (∂lse/∂S = P).
	rs := g.alloc(g.b, g.lq, 1)
	prod := g.alloc(g.b, g.lq, g.ev)
	gpuBinary("Mul", prod, dO, o)
	gpuCheck(op, st.be.SumLast(dt, g.b*g.lq, g.ev, rs.mem(), prod.mem()))
	gpuBinary("Sub", rs, rs, dLSE)
	gpuBinary("Sub", dp, dp, expandTrusted(rs, dp.shape))
	gpuBinary("Mul", dp, dp, p)
	// dQ = scale·dS·K, dK = scale·dSᵀ·Q.
	dq := g.alloc(g.b, g.lq, g.e)
	g.gemm(false, false, g.lq, g.e, g.lk, dp, g.k, dq, g.scale, 0)
	dk := g.alloc(g.b, g.lk, g.e)
	g.gemm(true, false, g.lk, g.e, g.lq, dp, g.q, dk, g.scale, 0)
	flat := reshapeTrusted(dst, []int{g.b, g.lq*g.e + g.lk*g.e + g.lk*g.ev})
	at := 0
	for _, part := range []*Tensor{dq, dk, dv} {
		n := shapeSize(part.shape[1:])
		gpuCopy(op, sliceTrusted(flat, 1, at, at+n, 1), reshapeTrusted(part, []int{g.b, n}))
		at += n
	}
}
