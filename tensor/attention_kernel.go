package tensor

import (
	"math"
	"runtime"
)

// The tile loops of the fused attention (attention.go). A task is one
// batch entry's tile of queries (forward) or a run of its key tiles
// (reverse); tasks are claimed from a counter by up to GOMAXPROCS
// goroutines (spreadTasks), each with its own tile buffers, and every
// tile product runs on the calling goroutine's GEMM (gemmSerialT). Which
// goroutine computes a task does not change it, so results are
// reproducible bit for bit for a given thread count.

const (
	// attnBr queries by attnBc keys: a tile of scores (64 KiB in float32)
	// and the tiles of q, k and v it is made from stay in the L2 cache,
	// and a GEMM call has enough work (attnBr·attnBc·E) to hide its
	// packing and its call. Causal attention uses tiles half as tall
	// (attnTiles), so that fewer products straddle the diagonal.
	attnBr = 128
	attnBc = 128
	// attnSerialWork is the multiply-adds below which a call runs on one
	// goroutine.
	attnSerialWork = 1 << 18
)

// attnTiles returns the tile of queries and of keys of the forward and
// reverse passes: under the causal mask, tiles of attnBr/2 queries, and
// in the reverse pass, whose query tiles start at their key tile's first
// key, key tiles as tall (no block of a tile pair lies wholly above the
// diagonal).
func attnTiles(p *attnPlan, reverse bool) (br, bc int) {
	br, bc = attnBr, attnBc
	if p.causal {
		br = attnBr / 2
		if reverse {
			bc = br
		}
	}
	return min(br, p.lq), min(bc, p.lk)
}

// fexp32 sets x[i] = exp(x[i] − m) and returns their sum.
func fexp32(x []float32, m float32) float32 { return expShift32(x, x, m) }

// fexp64 sets x[i] = exp(x[i] − m) and returns their sum.
func fexp64(x []float64, m float64) float64 {
	for i := range x {
		x[i] -= m
	}
	expRun64(x, x)
	return sum8(x)
}

// exp32Shift sets x[i] = exp(x[i] − m).
func exp32Shift(x []float32, m float32) { expShiftRun32(x, x, m) }

// exp64Shift sets x[i] = exp(x[i] − m).
func exp64Shift(x []float64, m float64) {
	for i := range x {
		x[i] -= m
	}
	expRun64(x, x)
}

// max8 returns the largest of x (−Inf for none, NaN if there is one), in
// eight interleaved running maxima; of a +0 and a −0 it may return
// either. float32 rows take the vector kernel's pass first.
func max8[T Float](x []T, ninf T) T {
	p := [8]T{ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf}
	i := 0
	if x32, ok := any(x).([]float32); ok {
		p32 := any(&p).(*[8]float32)
		if k := maxBlocks(x32, p32); k > 0 {
			i = k
		} else if k < 0 {
			return T(math.NaN())
		}
	}
	for ; i+8 <= len(x); i += 8 {
		b := x[i : i+8 : i+8]
		p[0], p[1], p[2], p[3] = max(p[0], b[0]), max(p[1], b[1]), max(p[2], b[2]), max(p[3], b[3])
		p[4], p[5], p[6], p[7] = max(p[4], b[4]), max(p[5], b[5]), max(p[6], b[6]), max(p[7], b[7])
	}
	for j, v := range x[i:] {
		p[j] = max(p[j], v)
	}
	return max(max(max(p[0], p[1]), max(p[2], p[3])), max(max(p[4], p[5]), max(p[6], p[7])))
}

// attnThreads is the number of goroutines for tasks totalling work
// multiply-adds.
func attnThreads(tasks, work int) int {
	if work < attnSerialWork {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), tasks))
}

// attnScores sets s (nr × nc) to scale·q_i·k_jᵀ for queries i0… and keys
// j0…, plus the mask where there is one. The causal mask is left to the
// callers, which exponentiate only the visible columns (attnVisible) and
// zero the rest.
func attnScores[T Float](p *attnPlan, s, Q, K, M []T, bi, i0, nr, j0, nc int) {
	gemmSerialT(false, true, nr, nc, p.e, T(p.scale), Q[p.qOff[bi]+i0*p.ldq:], p.ldq, K[p.kOff[bi]+j0*p.ldk:], p.ldk, 0, s, nc)
	if M != nil {
		for r := range nr {
			row := s[r*nc : (r+1)*nc]
			mo := p.mOff[bi] + (i0+r)*p.msr + j0*p.msc
			switch p.msc {
			case 0:
				mv := M[mo]
				for c := range row {
					row[c] += mv
				}
			case 1:
				mr := M[mo : mo+nc]
				for c := arithBlocks('+', row, row, mr); c < nc; c++ {
					row[c] += mr[c]
				}
			default:
				for c := range row {
					row[c] += M[mo+c*p.msc]
				}
			}
		}
	}
}

// attnVisible returns the row of scores of query i against the nc keys
// from j0, cut to the keys it sees: under the causal mask the others
// (j > i) are zeroed, which is what exp(−Inf) would give.
func attnVisible[T Float](p *attnPlan, row []T, i, j0 int) []T {
	if !p.causal {
		return row
	}
	v := min(len(row), max(0, i+1-j0))
	clear(row[v:])
	return row[:v]
}

// attnWork is one goroutine's tile buffers.
type attnWork[T Float] struct {
	s, dp, mx, l []T
}

// attnForward computes the packed attention (attention.go) into out, the
// contiguous (nb, Lq, Ev+1) result: for each tile of queries, the online
// softmax over the key tiles (Dao et al. 2022, algorithm 1, with the
// rescaling of Dao 2023: the output is divided by the row sums once, at
// the end). A row's shift is 0 while all its scores so far are −Inf, so a
// row whose first keys are masked does not turn into NaN.
func attnForward[T Float](p *attnPlan, out []T, ninf T, fexp func([]T, T) T) {
	Q, K, V := storage[T](p.q), storage[T](p.k), storage[T](p.v)
	var M []T
	if p.m != nil {
		M = storage[T](p.m)
	}
	if p.lq == 0 || p.nb == 0 {
		return
	}
	br, bc := attnTiles(p, false)
	nqt := (p.lq + br - 1) / br
	tasks := p.nb * nqt
	ldo := p.ev + 1
	threads := attnThreads(tasks, p.nb*p.lq*p.lk*(p.e+p.ev))
	ws := make([]attnWork[T], threads)
	spreadTasks(tasks, threads, func(w, t int) {
		wk := &ws[w]
		if wk.s == nil {
			wk.s, wk.mx, wk.l = make([]T, br*bc), make([]T, br), make([]T, br)
		}
		bi, i0 := t/nqt, (t%nqt)*br
		nr := min(br, p.lq-i0)
		o := out[(bi*p.lq+i0)*ldo:]
		mx, l := wk.mx[:nr], wk.l[:nr]
		jEnd := p.lk
		if p.causal {
			jEnd = min(p.lk, i0+nr)
		}
		for j0 := 0; j0 < jEnd; j0 += bc {
			nc := min(bc, jEnd-j0)
			s := wk.s[:nr*nc]
			attnScores(p, s, Q, K, M, bi, i0, nr, j0, nc)
			for r := range nr {
				row := attnVisible(p, s[r*nc:(r+1)*nc], i0+r, j0)
				m := max8(row, ninf)
				if j0 == 0 {
					mx[r] = m
					l[r] = fexp(row, safeShift(m, ninf))
					continue
				}
				mNew := max(mx[r], m)
				shift := safeShift(mNew, ninf)
				sum := fexp(row, shift)
				alpha := T(math.Exp(float64(mx[r] - shift)))
				l[r] = l[r]*alpha + sum
				mx[r] = mNew
				if alpha != 1 {
					or := o[r*ldo : r*ldo+p.ev]
					for c := range or {
						or[c] *= alpha
					}
				}
			}
			var beta T
			if j0 > 0 {
				beta = 1
			}
			gemmSerialT(false, false, nr, p.ev, nc, 1, s, nc, V[p.vOff[bi]+j0*p.ldv:], p.ldv, beta, o, ldo)
		}
		for r := range nr {
			or := o[r*ldo : (r+1)*ldo]
			if l[r] == 0 { // every key removed
				nan := T(math.NaN())
				for c := range or[:p.ev] {
					or[c] = nan
				}
				or[p.ev] = ninf
				continue
			}
			inv := 1 / l[r]
			for c := range or[:p.ev] {
				or[c] *= inv
			}
			or[p.ev] = mx[r] + T(math.Log(float64(l[r])))
		}
	})
}

// safeShift is the row maximum m to subtract before exponentiating, or 0
// while m is −Inf.
func safeShift[T Float](m, ninf T) T {
	if m == ninf {
		return 0
	}
	return m
}

// attnBackward computes the cotangents of q, k and v (attention.go's
// AttentionGradPacked layout) into dst, given the packed forward result
// out and its cotangent ct (both contiguous): for each key tile, over the
// query tiles that see it, P = exp(S − lse) from the recomputed scores,
// dV += Pᵀ·dO, dS = P ⊙ (dO·Vᵀ − D) with D = rowsum(dO ⊙ O) − d̄lse, dQ +=
// scale·dS·K and dK += scale·dSᵀ·Q (Dao 2023, algorithm 2). A batch entry
// whose key tiles are split over goroutines sums its dQ from one buffer
// per run of tiles, in a fixed order. Each block of dQ, dK and dV takes
// its first product with beta 0 instead of being cleared first: dst is
// 1.5 times the size of q, k and v together (12 MiB for a transformer
// block's 32×4 heads of 128×64), and clearing it took 15-20 % of the
// pass.
func attnBackward[T Float](p *attnPlan, dst, out, ct []T, fexp func([]T, T)) {
	Q, K, V := storage[T](p.q), storage[T](p.k), storage[T](p.v)
	var M []T
	if p.m != nil {
		M = storage[T](p.m)
	}
	lq, lk, e, ev := p.lq, p.lk, p.e, p.ev
	tot := lq*e + lk*e + lk*ev
	if lq == 0 || lk == 0 || p.nb == 0 {
		clear(dst[:p.nb*tot])
		return
	}
	br, bc := attnTiles(p, true)
	nkt := (lk + bc - 1) / bc
	ldo := ev + 1
	work := p.nb * lq * lk * (2*e + 2*ev)
	chunks := 1
	if g := runtime.GOMAXPROCS(0); work >= attnSerialWork && p.nb < 2*g {
		chunks = min(nkt, (2*g+p.nb-1)/p.nb)
	}
	tasks := p.nb * chunks
	threads := attnThreads(tasks, work)
	var partial []T
	if chunks > 1 {
		partial = make([]T, p.nb*(chunks-1)*lq*e)
	}
	ws := make([]attnWork[T], threads)
	spreadTasks(tasks, threads, func(w, t int) {
		wk := &ws[w]
		if wk.s == nil {
			wk.s, wk.dp, wk.l = make([]T, br*bc), make([]T, br*bc), make([]T, lq)
		}
		bi, c := t/chunks, t%chunks
		dq := dst[bi*tot:]
		if c > 0 {
			dq = partial[(bi*(chunks-1)+c-1)*lq*e:]
		}
		dk, dv := dst[bi*tot+lq*e:], dst[bi*tot+lq*e+lk*e:]
		ob, cb := out[bi*lq*ldo:], ct[bi*lq*ldo:]
		d := wk.l
		for i := range lq {
			d[i] = dot8(cb[i*ldo:i*ldo+ev], ob[i*ldo:i*ldo+ev]) - cb[i*ldo+ev]
		}
		kt0 := c * nkt / chunks
		for kt := kt0; kt < (c+1)*nkt/chunks; kt++ {
			j0 := kt * bc
			nc := min(bc, lk-j0)
			iStart := 0
			if p.causal {
				iStart = j0
			}
			if iStart >= lq { // keys no query sees: zero cotangents
				clear(dk[j0*e : (j0+nc)*e])
				clear(dv[j0*ev : (j0+nc)*ev])
				continue
			}
			// The first query tile of a key tile starts its dK and dV
			// rows, and the chunk's first key tile its dQ rows: every
			// row of dQ from iStart on (the chunk's other rows are never
			// read: zero in partial, or, for the first chunk, none).
			kj, vj := K[p.kOff[bi]+j0*p.ldk:], V[p.vOff[bi]+j0*p.ldv:]
			for i0 := iStart; i0 < lq; i0 += br {
				var bkv, bq T = 1, 1
				if i0 == iStart {
					bkv = 0
				}
				if kt == kt0 {
					bq = 0
				}
				nr := min(br, lq-i0)
				s, dp := wk.s[:nr*nc], wk.dp[:nr*nc]
				attnScores(p, s, Q, K, M, bi, i0, nr, j0, nc)
				for r := range nr {
					fexp(attnVisible(p, s[r*nc:(r+1)*nc], i0+r, j0), ob[(i0+r)*ldo+ev])
				}
				gi := cb[i0*ldo:]
				gemmSerialT(true, false, nc, ev, nr, 1, s, nc, gi, ldo, bkv, dv[j0*ev:], ev)
				// dP − D as one product: rows of −D, plus dO·Vᵀ.
				for r := range nr {
					fillT1(dp[r*nc:(r+1)*nc], -d[i0+r])
				}
				gemmSerialT(false, true, nr, nc, ev, 1, gi, ldo, vj, p.ldv, 1, dp, nc)
				for x := arithBlocks('*', dp, s, dp); x < len(dp); x++ {
					dp[x] *= s[x]
				}
				sc := T(p.scale)
				gemmSerialT(false, false, nr, e, nc, sc, dp, nc, kj, p.ldk, bq, dq[i0*e:], e)
				gemmSerialT(true, false, nc, e, nr, sc, dp, nc, Q[p.qOff[bi]+i0*p.ldq:], p.ldq, bkv, dk[j0*e:], e)
			}
		}
	})
	for bi := range p.nb {
		dq := dst[bi*tot : bi*tot+lq*e]
		for c := 1; c < chunks; c++ {
			pc := partial[(bi*(chunks-1)+c-1)*lq*e:][:lq*e]
			for i, x := range pc {
				dq[i] += x
			}
		}
	}
}
