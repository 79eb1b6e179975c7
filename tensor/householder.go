package tensor

import "math"

// Householder reflectors shared by the QR factorisation and the SVD's
// bidiagonal reduction. A reflector is H = I − τ·v·vᵀ with v[0] = 1; a
// sequence of them is applied in blocks in the compact WY form
// H₀H₁⋯H_{b−1} = I − V·T·Vᵀ (Schreiber and Van Loan 1989), so that nearly
// all of the work is two GEMMs per block.

// reflectorBlock is the number of reflectors applied together as one WY
// block: wide enough for the GEMMs to run near peak, narrow enough that
// building T (b² dot products) stays cheap.
const reflectorBlock = 32

// householder turns x into the reflector that maps it to (β, 0, …, 0):
// on return x[0] = β and x[1:] holds v[1:] (v[0] = 1 is implicit), and
// the result is τ. A vector that is already a multiple of e₀ gives τ = 0
// (H = I). The caller keeps entries well inside the range of T (the
// factorisations scale their input by a power of two first), so the sum of
// squares neither overflows nor loses the vector.
func householder[T Float](x []T) (tau T) {
	if len(x) <= 1 {
		return 0
	}
	alpha := x[0]
	xnorm := sqrtT(dotContig(x[1:], x[1:]))
	if xnorm == 0 {
		return 0
	}
	beta := hypotT(alpha, xnorm)
	if alpha >= 0 {
		beta = -beta // α − β never cancels
	}
	tau = (beta - alpha) / beta
	scal := 1 / (alpha - beta)
	for i := 1; i < len(x); i++ {
		x[i] *= scal
	}
	x[0] = beta
	return tau
}

// reflectors holds k reflectors acting on vectors of length m: reflector
// j is row j of the k×m row-major vt, zero before column j+shift, one at
// j+shift; tau[j] is its τ. Q = H₀H₁⋯H_{k−1}. The T factor of each block
// of reflectorBlock reflectors is formed once, by the first application
// of the block (or by the QR panel that makes it), and kept in ts.
type reflectors[T Float] struct {
	vt    []T
	tau   []T
	k, m  int
	shift int
	ts    []T    // block i's T at ts[i·b²:], b = reflectorBlock
	tok   []bool // whether block i's T is in ts
	g     []T    // scratch: the Gram matrix VᵀV (b×b)
}

func newReflectors[T Float](k, m, shift int) *reflectors[T] {
	nblk := (k + reflectorBlock - 1) / reflectorBlock
	vt := workGet[T](k * m)
	clear(vt)
	return &reflectors[T]{vt: vt, tau: make([]T, k), k: k, m: m, shift: shift,
		ts: make([]T, nblk*reflectorBlock*reflectorBlock), tok: make([]bool, nblk)}
}

// release hands the reflectors' storage back to the workspace pool; r
// must not be used afterwards. A nil r is a no-op.
func (r *reflectors[T]) release() {
	if r != nil {
		workPut(r.vt)
		r.vt = nil
	}
}

// blockT returns the upper triangular T (b×b, b = j1−j0) of the block of
// reflectors that starts at j0 (a multiple of reflectorBlock), so that
// H_{j0}⋯H_{j1−1} = I − V·T·Vᵀ (LAPACK's forward columnwise dlarft):
// T[i][i] = τᵢ and T[:i][i] = −τᵢ·T[:i][:i]·(V[:, :i]ᵀ vᵢ). The inner
// products VᵀV come from one GEMM.
func (r *reflectors[T]) blockT(j0, j1 int) []T {
	b := j1 - j0
	blk := j0 / reflectorBlock
	t := r.ts[blk*reflectorBlock*reflectorBlock:][:b*b]
	if r.tok[blk] {
		return t
	}
	if cap(r.g) < b*b {
		r.g = make([]T, b*b)
	}
	r.formT(j0, j1, t, r.g[:b*b])
	r.tok[blk] = true
	return t
}

// formT sets t (b×b, b = j1−j0) to the T of reflectors j0…j1−1, using g
// (b×b) for the Gram matrix VᵀV.
func (r *reflectors[T]) formT(j0, j1 int, t, g []T) {
	b := j1 - j0
	r0 := j0 + r.shift // every reflector of the block is zero before here
	v := r.vt[j0*r.m+r0:]
	gemmT(false, true, b, b, r.m-r0, 1, v, r.m, v, r.m, 0, g, b) // G = VᵀV
	clear(t)
	for i := 0; i < b; i++ {
		tau := r.tau[j0+i]
		t[i*b+i] = tau
		if tau != 0 {
			triMulCol(t, b, i, g[i:], b, -tau)
		}
	}
}

// wideT sets t (b×b, b = j1−j0 > reflectorBlock) to the T of the
// reflectors j0…j1−1 taken as one block (not cached: applyQ forms each
// once).
func (r *reflectors[T]) wideT(j0, j1 int, t []T) {
	g := workGet[T](len(t))
	defer workPut(g)
	r.formT(j0, j1, t, g)
}

// triMulCol sets T[:i][i] = s·T[:i][:i]·z for the upper triangular b×b
// row-major t and z[p] = zs[p·ldz]; the column is written as it is formed,
// row p needing only z and T's rows below it.
func triMulCol[T Float](t []T, b, i int, zs []T, ldz int, s T) {
	for p := 0; p < i; p++ {
		acc := t[p*b+p] * zs[p*ldz]
		for q := p + 1; q < i; q++ {
			acc += t[p*b+q] * zs[q*ldz]
		}
		t[p*b+i] = s * acc
	}
}

// applyBlock sets C ← (H_{j0}⋯H_{j1−1})·C, or its transpose times C when
// trans is set, for the m×nc row-major C (leading dimension ldc). Rows
// above j0+shift are untouched, so C may start at any column of a larger
// matrix. The columns are split between the cores, each part updated by
// three single-threaded GEMMs: one fork and join per block rather than one
// per GEMM, which matters on a busy machine where every join can wait for
// a descheduled thread.
func (r *reflectors[T]) applyBlock(j0, j1 int, trans bool, c []T, nc, ldc int) {
	r.applyBlockOn(j0, j1, trans, c, nc, ldc, true)
}

// applyBlockOn is applyBlock with its columns split between the cores, or
// (split false) all on the calling goroutine; the bits are the same
// either way, each column's arithmetic being the same.
func (r *reflectors[T]) applyBlockOn(j0, j1 int, trans bool, c []T, nc, ldc int, split bool) {
	b := j1 - j0
	mm := r.m - (j0 + r.shift)
	if b <= 0 || nc <= 0 || mm <= 0 {
		return
	}
	var t []T
	if b <= reflectorBlock {
		t = r.blockT(j0, j1)
	} else {
		t = workGet[T](b * b)
		defer workPut(t)
		r.wideT(j0, j1, t)
	}
	if !split {
		r.applyBlockCols(j0, j1, t, trans, c, nc, ldc)
		return
	}
	// Parts of at least reflApplySplit multiply-adds, and of whole
	// micro-kernel panels of columns.
	per := max(16, reflApplySplit/(2*mm*b+1)) &^ 15
	linalgParallel(nc, per, func(c0, c1 int) {
		r.applyBlockCols(j0, j1, t, trans, c[c0:], c1-c0, ldc)
	})
}

// reflApplySplit is the number of multiply-adds of a block application
// below which splitting its columns between goroutines costs more than it
// saves.
const reflApplySplit = 1 << 20

// applyBlockCols is applyBlock on the calling goroutine, with the block's T.
func (r *reflectors[T]) applyBlockCols(j0, j1 int, t []T, trans bool, c []T, nc, ldc int) {
	b := j1 - j0
	r0 := j0 + r.shift
	mm := r.m - r0
	buf := workGet[T](2 * b * nc)
	defer workPut(buf)
	w, w2 := buf[:b*nc], buf[b*nc:2*b*nc]
	v := r.vt[j0*r.m+r0:]
	cc := c[r0*ldc:]
	gemmSerialT(false, false, b, nc, mm, 1, v, r.m, cc, ldc, 0, w, nc)  // W = Vᵀ C
	gemmSerialT(trans, false, b, nc, b, 1, t, b, w, nc, 0, w2, nc)      // op(T) W
	gemmSerialT(true, false, mm, nc, b, -1, v, r.m, w2, nc, 1, cc, ldc) // C −= V op(T) W
}

// applyQ sets C ← Q·C for the m×nc row-major C, Q = H₀⋯H_{k−1}: blocks in
// reverse order. identityStart says that C starts as the leading columns
// of the identity (forming Q explicitly), which lets each block skip the
// columns that are still unit vectors it cannot change.
func (r *reflectors[T]) applyQ(c []T, nc, ldc int, identityStart bool) {
	r.applyQOn(c, nc, ldc, identityStart, true)
}

// applyQOn is applyQ with each block's columns split between the cores,
// or (split false) all on the calling goroutine.
func (r *reflectors[T]) applyQOn(c []T, nc, ldc int, identityStart, split bool) {
	bw := r.applyWidth(nc)
	last := (r.k - 1) / bw * bw
	for j0 := last; j0 >= 0; j0 -= bw {
		j1 := min(j0+bw, r.k)
		c0 := 0
		if identityStart {
			// Columns before j0+shift are still unit vectors e_j with
			// j < j0+shift, which the block leaves alone.
			c0 = min(j0+r.shift, nc)
		}
		r.applyBlockOn(j0, j1, false, c[c0:], nc-c0, ldc, split)
	}
}

// applyQT sets C ← Qᵀ·C for the m×nc row-major C: blocks in order.
func (r *reflectors[T]) applyQT(c []T, nc, ldc int) {
	bw := r.applyWidth(nc)
	for j0 := 0; j0 < r.k; j0 += bw {
		r.applyBlock(j0, min(j0+bw, r.k), true, c, nc, ldc)
	}
}

// applyWidth is the number of reflectors applyQ and applyQT apply at once
// to nc columns: applyBlockWidth where C is large enough for its passes
// to cost more than forming the wider T (at n = 64 the wider blocks made
// an SVD 15-20 % slower), else the cached blocks.
func (r *reflectors[T]) applyWidth(nc int) int {
	if r.m >= 4*applyBlockWidth && nc >= 2*applyBlockWidth {
		return applyBlockWidth
	}
	return reflectorBlock
}

// applyBlockWidth is the number of reflectors applyQ and applyQT apply
// at once to a large C: two of the factorisations' blocks. Each
// application reads and writes all of C once for an update of rank
// applyBlockWidth, so wider blocks halve that traffic. A 1000×1000 SVD's
// two back-transformations on the Zen 3, alternated runs: 65-76 ms with
// blocks of 32, 66-68 with 64 (with the host loaded: 112-125 against
// 95-112).
const applyBlockWidth = 2 * reflectorBlock

// pow2Scale returns a power of two s with max|x|·s in [0.5, 1) (1 when x
// is all zeros), so that scaling by it is exact and keeps the sums of
// squares of a factorisation far from overflow and underflow.
func pow2Scale[T Float](maxAbs T) T {
	if maxAbs == 0 {
		return 1
	}
	_, e := math.Frexp(float64(maxAbs))
	if dtypeOf[T]() == Float32 {
		e = max(-120, min(e, 120)) // keep the scale itself a normal float32
	}
	return T(math.Ldexp(1, -e))
}
