package tensor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallelism: small groups of images (gemmImages, one image when the
// output has 256 pixels or more) are spread over goroutines, each with its
// own im2col buffer, which stays in cache between im2col and the GEMM that
// consumes it (unfolding a whole batch into one wide column matrix
// measured slower: it streams the columns through memory; a group shares
// the weights' packing). The weight gradient sums over
// images, so each goroutine accumulates its range of images into its own
// partial sum and the partial sums are added at the end. Buffers are reused
// across images and, through a pool, across calls.

// full reports a kernel that covers the whole unpadded input (a 7×7
// kernel on a 7×7 image, the last convolution of a DCGAN discriminator and
// the first transposed one of its generator): one output pixel per image,
// whose column matrix is the image itself, so the convolution over the
// batch is one matrix product, (N, C·H·W)·(O, C·H·W)ᵀ, with no im2col and
// instead of N matrix-vector products that each stream the weights.
func (g *convGeom) full() bool {
	return g.groups == 1 && g.kh == g.h && g.kw == g.w && g.ph == 0 && g.pw == 0 &&
		g.dh == 1 && g.dw == 1 && g.ho == 1 && g.wo == 1
}

// gemmImages is how many images one GEMM covers: enough that the product
// has about gemmCols columns. Per image the weights were repacked for
// every GEMM and the products were thin (49 columns for a 7×7 output, a
// depth of 49 in the weight gradient, whose whole output was read and
// written per image); side by side in one column matrix of row stride
// m·Ho·Wo, m images share one packing and one pass over the output.
func (g *convGeom) gemmImages() int {
	// At most n/GOMAXPROCS images, so every goroutine gets a group.
	const gemmCols = 256
	return max(1, min(gemmCols/g.howo, g.n/runtime.GOMAXPROCS(0)))
}

// imageGroups calls fn(n0, m, buf, pad, mm) for the groups of
// m ≤ gemmImages() consecutive images from n0 (see groupsOfImages), with a
// scratch buffer of per·gemmImages() elements and a zeroed one of
// p.scratch() elements for im2col and col2im.
func imageGroups[T Float](g *convGeom, p *colPlan, per, work int, fn func(n0, m int, buf, pad []T, mm gemmFunc[T])) {
	G := g.gemmImages()
	groupsOfImages(g.n, G, per*G+p.scratch(), work, func(n0, m int, buf []T, mm gemmFunc[T]) {
		pad := buf[per*G:]
		clear(pad)
		fn(n0, m, buf[:per*G], pad, mm)
	})
}

// convForward computes y = conv(x, w) for contiguous x (N, C, H, W),
// w (O, C/groups, kh, kw) and y (N, O, Ho, Wo).
func convForward[T Float](g *convGeom, x, w, y []T) {
	if g.full() {
		gemmT(false, true, g.n, g.o, g.kdim, 1, x, g.kdim, w, g.kdim, 0, y, g.o)
		return
	}
	// On the grid the unfolding costs one copy per column row instead of
	// one per output row, but the output is copied out row by row: worth
	// it when the column matrix has more rows than the output (16·3·3
	// against 32 filters, not 1·3·3 against 16).
	if g.unitStride() && g.c*g.kh*g.kw > g.o {
		gridForward(g, x, w, y)
		return
	}
	colForward(g, x, w, y)
}

// colForward is convForward through im2col, for any geometry but a full
// kernel.
func colForward[T Float](g *convGeom, x, w, y []T) {
	rows, chw, ohw := g.c*g.kh*g.kw, g.c*g.hw, g.o*g.howo
	p := newColPlan(g)
	imageGroups(g, p, (rows+g.o)*g.howo, g.n*(rows+g.o)*g.howo, func(n0, m int, buf, pad []T, mm gemmFunc[T]) {
		ld := m * g.howo
		col := buf[:rows*ld]
		for k := range m {
			im2col(g, p, x[(n0+k)*chw:(n0+k+1)*chw], col[k*g.howo:], ld, pad)
		}
		out := y[n0*ohw : (n0+1)*ohw]
		if m > 1 {
			out = buf[rows*ld : (rows+g.o)*ld]
		}
		for gi := 0; gi < g.groups; gi++ {
			mm(false, false, g.og, ld, g.kdim,
				1, w[gi*g.og*g.kdim:], g.kdim,
				col[gi*g.kdim*ld:], ld,
				0, out[gi*g.og*ld:], ld)
		}
		if m > 1 {
			for k := range m {
				for o := 0; o < g.o; o++ {
					copy(y[(n0+k)*ohw+o*g.howo:(n0+k)*ohw+(o+1)*g.howo], out[o*ld+k*g.howo:])
				}
			}
		}
	})
}

// gatherImages returns dy's rows for images [n0, n0+m) side by side as an
// (O, m·Ho·Wo) matrix: dy itself for one image, else a copy in buf.
func gatherImages[T Float](g *convGeom, dy []T, n0, m int, buf []T) []T {
	ohw := g.o * g.howo
	if m == 1 {
		return dy[n0*ohw : (n0+1)*ohw]
	}
	ld := m * g.howo
	for k := range m {
		for o := 0; o < g.o; o++ {
			copy(buf[o*ld+k*g.howo:o*ld+(k+1)*g.howo], dy[(n0+k)*ohw+o*g.howo:])
		}
	}
	return buf[:g.o*ld]
}

// convInputGrad computes dx, the adjoint of the convolution in x: per
// group of images dcol = wᵀ·dy for each group, then col2im adds the
// columns back onto each image.
func convInputGrad[T Float](g *convGeom, dy, w, dx []T) {
	if g.full() {
		gemmT(false, false, g.n, g.kdim, g.o, 1, dy, g.o, w, g.kdim, 0, dx, g.kdim)
		return
	}
	// The grid's extra columns carry zeros through wᵀ; a NaN or Inf in w
	// would turn them into NaNs that reach real pixels.
	if n, _, _ := nonFinite(w); n == 0 && g.unitStride() {
		gridInputGrad(g, dy, w, dx)
		return
	}
	colInputGrad(g, dy, w, dx)
}

// colInputGrad is convInputGrad through col2im, for any geometry but a
// full kernel.
func colInputGrad[T Float](g *convGeom, dy, w, dx []T) {
	rows, chw := g.c*g.kh*g.kw, g.c*g.hw
	p := newColPlan(g)
	imageGroups(g, p, (rows+g.o)*g.howo, g.n*(rows+g.o)*g.howo, func(n0, m int, buf, pad []T, mm gemmFunc[T]) {
		ld := m * g.howo
		col := buf[:rows*ld]
		dyb := gatherImages(g, dy, n0, m, buf[rows*ld:])
		for gi := 0; gi < g.groups; gi++ {
			mm(true, false, g.kdim, ld, g.og,
				1, w[gi*g.og*g.kdim:], g.kdim,
				dyb[gi*g.og*ld:], ld,
				0, col[gi*g.kdim*ld:], ld)
		}
		for k := range m {
			col2im(g, p, col[k*g.howo:], dx[(n0+k)*chw:(n0+k+1)*chw], ld, pad)
		}
	})
}

// convWeightGrad computes dw, the adjoint of the convolution in w:
// dw = Σ dy·colᵀ per group (see splitImages and wgProduct).
func convWeightGrad[T Float](g *convGeom, x, dy, dw []T) {
	if g.full() {
		gemmT(true, false, g.o, g.kdim, g.n, 1, dy, g.o, x, g.kdim, 0, dw, g.kdim)
		return
	}
	if g.unitStride() && g.c*g.kh*g.kw > g.o { // as in convForward
		gridWeightGrad(g, x, dy, dw)
		return
	}
	colWeightGrad(g, x, dy, dw)
}

// colWeightGrad is convWeightGrad through im2col, for any geometry but a
// full kernel.
func colWeightGrad[T Float](g *convGeom, x, dy, dw []T) {
	rows := g.c * g.kh * g.kw
	plan := newColPlan(g)
	splitImages(g, dw, g.n*(rows+g.o)*g.howo, func(n0, n1 int, acc []T, mm gemmFunc[T]) {
		weightGradImages(g, plan, x, dy, n0, n1, acc, mm)
	})
}

// splitImages calls fn(n0, n1, acc, mm) for one contiguous range of images
// per goroutine, since the weight gradient's long inner dimension is what
// the GEMM cannot split; each range sets its own partial sum acc (dw for
// the first), and the partial sums are added into dw at the end. mm is the
// serial GEMM when the ranges run in parallel.
func splitImages[T Float](g *convGeom, dw []T, work int, fn func(n0, n1 int, acc []T, mm gemmFunc[T])) {
	p := imageWorkers(g.n, work)
	if p <= 1 {
		fn(0, g.n, dw, gemmT[T])
		return
	}
	partial := make([][]T, p)
	var wg sync.WaitGroup
	wg.Add(p)
	for k := range p {
		go func() {
			defer wg.Done()
			acc := dw
			if k > 0 {
				acc = getBuf[T](len(dw))
				partial[k] = acc
			}
			fn(k*g.n/p, (k+1)*g.n/p, acc, gemmSerialT[T])
		}()
	}
	wg.Wait()
	for _, acc := range partial[1:] {
		addRun(dw, dw, acc)
		putBuf(acc)
	}
}

// The weight gradient's GEMM computes the transpose of each group's
// weight, (cg·kh·kw, og) = col·dyᵀ, and wgFinish transposes it at the end:
// the filters are then the product's width, which is a multiple of the
// kernels' 16 or 32 columns in most networks (16, 32, 64 filters), while
// cg·kh·kw (9, 144) is not; the rows only need a multiple of 6. For the
// 32 × 144 weight of a 16→32 3×3 convolution the kernel then computes no
// padding at all instead of 25 %.

// wgRows is the number of column-matrix rows the weight gradient unfolds
// into: C·kh·kw, rounded up to a multiple of 6 (the row tile of the amd64
// GEMM kernels) with zero rows for one group, so that every row panel of
// col packs by the fast path (a 3×3 kernel on one channel has 9 rows).
func (g *convGeom) wgRows() int {
	rows := g.c * g.kh * g.kw
	if g.groups == 1 {
		rows = (rows + 5) / 6 * 6
	}
	return rows
}

// wgProduct adds the transposed weight gradient of one group of images,
// with column matrix col (wgRows() rows of stride ld) and output cotangent
// dyb (O rows of stride ld), into acc (beta = 1) or sets it (beta = 0).
func wgProduct[T Float](g *convGeom, mm gemmFunc[T], col, dyb []T, ld int, beta T, acc []T) {
	if g.groups == 1 {
		mm(false, true, g.wgRows(), g.og, ld, 1, col, ld, dyb, ld, beta, acc, g.og)
		return
	}
	for gi := 0; gi < g.groups; gi++ {
		mm(false, true, g.kdim, g.og, ld,
			1, col[gi*g.kdim*ld:], ld,
			dyb[gi*g.og*ld:], ld,
			beta, acc[gi*g.og*g.kdim:], g.og)
	}
}

// wgAccLen is the length of wgProduct's acc.
func (g *convGeom) wgAccLen() int { return max(g.wgRows(), g.kdim*g.groups) * g.og }

// wgFinish transposes wgProduct's acc into dw.
func wgFinish[T Float](g *convGeom, acc, dw []T) {
	for gi := 0; gi < g.groups; gi++ {
		src, dst := acc[gi*g.og*g.kdim:], dw[gi*g.og*g.kdim:]
		for r := 0; r < g.kdim; r++ {
			for o := 0; o < g.og; o++ {
				dst[o*g.kdim+r] = src[r*g.og+o]
			}
		}
	}
}

// weightGradImages sets dw to the weight gradient of images [n0, n1):
// Σₙ dyₙ·colₙᵀ per group, accumulated by the GEMM (beta = 1 after the
// first group of images). Unfolding a few images at a time keeps their
// columns in cache.
func weightGradImages[T Float](g *convGeom, p *colPlan, x, dy []T, n0, n1 int, dw []T, mm gemmFunc[T]) {
	if n0 == n1 {
		clear(dw)
		return
	}
	rows, wrows, chw, G := g.c*g.kh*g.kw, g.wgRows(), g.c*g.hw, g.gemmImages()
	per := (wrows + g.o) * G * g.howo
	buf := getBuf[T](per + p.scratch() + g.wgAccLen())
	defer putBuf(buf)
	pad, acc := buf[per:per+p.scratch()], buf[per+p.scratch():]
	clear(pad)
	for b := n0; b < n1; b += G {
		m := min(G, n1-b)
		ld := m * g.howo
		col := buf[:wrows*ld]
		for k := range m {
			im2col(g, p, x[(b+k)*chw:(b+k+1)*chw], col[k*g.howo:], ld, pad)
		}
		clear(col[rows*ld:])
		dyb := gatherImages(g, dy, b, m, buf[wrows*ld:])
		var beta T
		if b > n0 {
			beta = 1
		}
		wgProduct(g, mm, col, dyb, ld, beta, acc)
	}
	wgFinish(g, acc, dw)
}

// colPlan is how im2col and col2im address one image: through a copy of
// each channel plane with a zero border as wide as the padding (the plane
// itself without padding), output pixel k of kernel tap (i, j) reads
// offset base[k] + i·dh·wp + j·dw. One gather of Ho·Wo values per column row
// replaces a loop per output row, whose short trip counts (7 pixels for a
// strided 4×4 kernel on 14×14 DCGAN maps) mispredicted at every row and
// made the unfolding cost as much as the GEMM.
type colPlan struct {
	hp, wp int     // padded plane
	padded bool    // whether the planes are copied into a bordered scratch
	base   []int32 // per output pixel: offset of tap (0, 0)
}

func newColPlan(g *convGeom) *colPlan {
	p := &colPlan{hp: g.h + 2*g.ph, wp: g.w + 2*g.pw, padded: g.ph > 0 || g.pw > 0}
	p.base = make([]int32, g.howo)
	for oh := 0; oh < g.ho; oh++ {
		for ow := 0; ow < g.wo; ow++ {
			p.base[oh*g.wo+ow] = int32(oh*g.sh*p.wp + ow*g.sw)
		}
	}
	return p
}

// scratch is the length of the bordered plane buffer the plan needs.
func (p *colPlan) scratch() int {
	if p.padded {
		return p.hp * p.wp
	}
	return 0
}

// im2col writes the (C·kh·kw, Ho·Wo) column matrix of one image x
// (C, H, W) into col (row stride ld): row (c, i, j) holds, for every output
// position, the input value under kernel tap (i, j) of channel c, or 0 in
// the padding. pad is p.scratch() elements whose border must be zero; only
// its interior is written.
func im2col[T Float](g *convGeom, p *colPlan, x, col []T, ld int, pad []T) {
	base := p.base
	r := 0
	for c := 0; c < g.c; c++ {
		src := x[c*g.hw : (c+1)*g.hw]
		if p.padded {
			for h := 0; h < g.h; h++ {
				copy(pad[(h+g.ph)*p.wp+g.pw:], src[h*g.w:(h+1)*g.w])
			}
			src = pad
		}
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				row, s := col[r*ld:][:len(base)], src[i*g.dh*p.wp+j*g.dw:]
				r++
				if g.sw > 1 {
					gatherRow(row, s, base)
					continue
				}
				// Unit stride: each output row is a contiguous run.
				for oh := 0; oh < g.ho; oh++ {
					copy(row[oh*g.wo:(oh+1)*g.wo], s[oh*g.sh*p.wp:])
				}
			}
		}
	}
}

// gatherRow sets row[k] = s[base[k]]. It is a function of its own so that
// the loop keeps its few variables in registers (inside im2col's nest the
// compiler spilled them, at several cycles per element).
//
//go:noinline
func gatherRow[T Float](row, s []T, base []int32) {
	row = row[:len(base)]
	for k, b := range base {
		row[k] = s[b]
	}
}

// scatterAddRow adds row[k] to d[base[k]]; the offsets in base are distinct.
//
//go:noinline
func scatterAddRow[T Float](d, row []T, base []int32) {
	row = row[:len(base)]
	for k, b := range base {
		d[b] += row[k]
	}
}

// col2im is the adjoint of im2col: it overwrites x (C, H, W) with, for
// each pixel, the sum of the column entries im2col would have copied from
// it, tap by tap in im2col's row order. pad is p.scratch() elements of any
// content.
func col2im[T Float](g *convGeom, p *colPlan, col, x []T, ld int, pad []T) {
	base := p.base
	r := 0
	for c := 0; c < g.c; c++ {
		plane := x[c*g.hw : (c+1)*g.hw]
		dst := plane
		if p.padded {
			dst = pad
		}
		clear(dst)
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				scatterAddRow(dst[i*g.dh*p.wp+j*g.dw:], col[r*ld:][:len(base)], base)
				r++
			}
		}
		if p.padded {
			for h := 0; h < g.h; h++ {
				copy(plane[h*g.w:(h+1)*g.w], pad[(h+g.ph)*p.wp+g.pw:])
			}
		}
	}
}

// parallelMinElems is the least work (elements touched) worth spreading
// over goroutines.
const parallelMinElems = 1 << 15

// forEachImage calls fn(i, buf) for i in [0, n), on up to GOMAXPROCS
// goroutines when work (elements touched in total) is large enough to pay
// for them. Each goroutine owns a scratch buffer of bufLen elements, passed
// as buf. fn must be safe to run concurrently for different i.
func forEachImage[T Float](n, bufLen, work int, fn func(i int, buf []T)) {
	p := imageWorkers(n, work)
	if p <= 1 {
		buf := getBuf[T](bufLen)
		for i := 0; i < n; i++ {
			fn(i, buf)
		}
		putBuf(buf)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(p)
	for range p {
		go func() {
			defer wg.Done()
			buf := getBuf[T](bufLen)
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i, buf)
			}
			putBuf(buf)
		}()
	}
	wg.Wait()
}

// imageWorkers is how many goroutines forEachImage runs for n items and
// work elements touched.
func imageWorkers(n, work int) int {
	if work < parallelMinElems {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), n)
}

// gemmFunc is gemmT's signature: the GEMM a convolution kernel calls.
type gemmFunc[T Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// groupsOfImages calls fn(n0, m, buf, mm) for the groups of m ≤ G
// consecutive images from n0, as forEachImage does with a scratch buffer
// of bufLen elements. mm is the GEMM to use: on the calling goroutine
// alone when the groups already run in parallel (a GEMM that also split
// itself would put twice as many goroutines as cores on the products),
// else the parallel one.
func groupsOfImages[T Float](n, G, bufLen, work int, fn func(n0, m int, buf []T, mm gemmFunc[T])) {
	groups := (n + G - 1) / G
	mm := gemmFunc[T](gemmT[T])
	if imageWorkers(groups, work) > 1 {
		mm = gemmSerialT[T]
	}
	forEachImage(groups, bufLen, work, func(b int, buf []T) {
		n0 := b * G
		fn(n0, min(G, n-n0), buf, mm)
	})
}

// Scratch buffers (im2col columns) are recycled across calls so a steady
// training loop does not allocate them every step.
var bufPool32, bufPool64 sync.Pool

// getBuf returns a scratch slice of n elements with unspecified contents.
func getBuf[T Float](n int) []T {
	pool := &bufPool64
	if dtypeOf[T]() == Float32 {
		pool = &bufPool32
	}
	if p, ok := pool.Get().(*[]T); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]T, n)
}

// putBuf returns a slice obtained from getBuf to the pool.
func putBuf[T Float](b []T) {
	if cap(b) == 0 {
		return
	}
	pool := &bufPool64
	if dtypeOf[T]() == Float32 {
		pool = &bufPool32
	}
	pool.Put(&b)
}
