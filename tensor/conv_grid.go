package tensor

import "runtime"

// Unit-stride convolutions on the padded-width grid. With stride 1 every
// row of the column matrix is one contiguous run of the zero-bordered
// image, if the output is computed at every column of the padded width
// wp instead of only the Wo valid ones: output pixel (oh, ow) of kernel tap
// (i, j) reads the padded plane at (oh + i·dh)·wp + ow + j·dw, so the row of
// tap (i, j) is the plane from i·dh·wp + j·dw on, Ho·wp values long. The
// unfolding is then one copy per row (9 per channel for a 3×3 kernel)
// instead of one per output row, the GEMM's columns grow by wp/Wo (16/14
// for a padded 14×14 map), and col2im becomes one vector addition per row
// instead of an indexed scatter. The wp − Wo extra columns of each output
// row read the right border and the next row's left border; their results
// are discarded in the forward pass, and the adjoints keep them out by
// zeros: the output cotangent is laid out on the grid with zeros there, so
// they add exact zeros (0·x) to the weight gradient, and w maps them to
// zeros in the input gradient. A NaN or Inf would make those NaNs (0·Inf):
// the weight gradient then clears the extra columns of its column matrix,
// and the input gradient takes the im2col path. The unfolding itself is
// Chellapilla, Puri and Simard's (2006, "High performance convolutional
// neural networks for document processing").

// gridPlan addresses one image on the padded-width grid.
type gridPlan struct {
	hp, wp int   // padded plane
	plane  int   // hp·wp
	lq     int   // columns per image: Ho·wp
	img    int   // elements of one padded image: C·plane plus the slack
	offs   []int // per column-matrix row (c, i, j): c·plane + i·dh·wp + j·dw
}

// unitStride reports a convolution the grid path computes: stride 1 in
// both axes (any padding and dilation, one or more groups).
func (g *convGeom) unitStride() bool { return g.sh == 1 && g.sw == 1 && !g.full() }

func newGridPlan(g *convGeom) *gridPlan {
	p := &gridPlan{hp: g.h + 2*g.ph, wp: g.w + 2*g.pw}
	p.plane = p.hp * p.wp
	p.lq = g.ho * p.wp
	// The last tap's row runs (kw−1)·dw values past the last plane.
	p.img = g.c*p.plane + (g.kw-1)*g.dw
	p.offs = make([]int, 0, g.c*g.kh*g.kw)
	for c := 0; c < g.c; c++ {
		for i := 0; i < g.kh; i++ {
			for j := 0; j < g.kw; j++ {
				p.offs = append(p.offs, c*p.plane+i*g.dh*p.wp+j*g.dw)
			}
		}
	}
	return p
}

// gridFill copies image x (C, H, W) into the interior of the padded image
// pimg (p.img elements), whose border and slack must be zero.
func gridFill[T Float](g *convGeom, p *gridPlan, x, pimg []T) {
	if g.ph == 0 && g.pw == 0 {
		copy(pimg, x[:g.c*g.hw])
		return
	}
	for c := 0; c < g.c; c++ {
		src := x[c*g.hw : (c+1)*g.hw]
		dst := pimg[c*p.plane+g.ph*p.wp+g.pw:]
		for h := 0; h < g.h; h++ {
			copy(dst[h*p.wp:h*p.wp+g.w], src[h*g.w:])
		}
	}
}

// gridCols writes the grid column matrix of the padded image pimg into
// col (row stride ld): row r is pimg[offs[r]:][:lq].
func gridCols[T Float](p *gridPlan, pimg, col []T, ld int) {
	for r, off := range p.offs {
		copy(col[r*ld:r*ld+p.lq], pimg[off:off+p.lq])
	}
}

// gridClearCols zeros the wp − Wo extra columns of every output row in the
// grid column matrix col (row stride ld) of one image.
func gridClearCols[T Float](g *convGeom, p *gridPlan, col []T, ld int) {
	if p.wp == g.wo {
		return
	}
	for r := range p.offs {
		row := col[r*ld : r*ld+p.lq]
		for oh := 0; oh < g.ho; oh++ {
			for i := oh*p.wp + g.wo; i < (oh+1)*p.wp; i++ {
				row[i] = 0
			}
		}
	}
}

// gridToImage copies the valid columns of grid rows out (O rows of stride
// ld, one image's lq columns) into y (O, Ho, Wo).
func gridToImage[T Float](g *convGeom, p *gridPlan, out []T, ld int, y []T) {
	for o := 0; o < g.o; o++ {
		src := out[o*ld : o*ld+p.lq]
		dst := y[o*g.howo : (o+1)*g.howo]
		for oh := 0; oh < g.ho; oh++ {
			copy(dst[oh*g.wo:(oh+1)*g.wo], src[oh*p.wp:])
		}
	}
}

// gridFromImage lays dy (O, Ho, Wo) of one image out on the grid (O rows of
// stride ld, lq columns), with zeros in the extra columns.
func gridFromImage[T Float](g *convGeom, p *gridPlan, dy []T, out []T, ld int) {
	for o := 0; o < g.o; o++ {
		src := dy[o*g.howo : (o+1)*g.howo]
		dst := out[o*ld : o*ld+p.lq]
		for oh := 0; oh < g.ho; oh++ {
			row := dst[oh*p.wp : (oh+1)*p.wp]
			copy(row, src[oh*g.wo:(oh+1)*g.wo])
			for i := g.wo; i < len(row); i++ { // a call to clear costs more
				row[i] = 0
			}
		}
	}
}

// gridAddCols is the adjoint of gridCols followed by gridFill: it
// overwrites dx (C, H, W) with the sum, per pixel, of the grid column
// entries that read it, row by row in column-matrix order (the order of
// col2im). pimg is p.img elements of any content.
func gridAddCols[T Float](g *convGeom, p *gridPlan, col []T, ld int, pimg, dx []T) {
	clear(pimg)
	for r, off := range p.offs {
		seg := pimg[off : off+p.lq]
		addRun(seg, seg, col[r*ld:r*ld+p.lq])
	}
	if g.ph == 0 && g.pw == 0 {
		copy(dx[:g.c*g.hw], pimg)
		return
	}
	for c := 0; c < g.c; c++ {
		src := pimg[c*p.plane+g.ph*p.wp+g.pw:]
		dst := dx[c*g.hw : (c+1)*g.hw]
		for h := 0; h < g.h; h++ {
			copy(dst[h*g.w:(h+1)*g.w], src[h*p.wp:])
		}
	}
}

// gridImages is how many images one GEMM of the grid path covers: enough
// for about gridColsTarget columns, and at most n/GOMAXPROCS so that every
// goroutine gets a group.
func (g *convGeom) gridImages(p *gridPlan) int {
	return max(1, min(gridColsTarget/p.lq, g.n/runtime.GOMAXPROCS(0)))
}

// gridColsTarget is the number of GEMM columns the grid path aims for per
// call.
const gridColsTarget = 256

// wgCols is the depth the weight gradient's GEMMs aim for: the images of
// a group share one pass over the (small) output.
const wgCols = 512

// gridForward is convForward for unit strides.
func gridForward[T Float](g *convGeom, x, w, y []T) {
	p := newGridPlan(g)
	rows, chw, ohw := g.c*g.kh*g.kw, g.c*g.hw, g.o*g.howo
	G := g.gridImages(p)
	per := (rows + g.o) * G * p.lq
	groupsOfImages(g.n, G, per+p.img, g.n*(rows+g.o)*p.lq, func(n0, m int, buf []T, mm gemmFunc[T]) {
		ld := m * p.lq
		col, out, pimg := buf[:rows*ld], buf[rows*ld:(rows+g.o)*ld], buf[per:per+p.img]
		clear(pimg)
		for k := range m {
			gridFill(g, p, x[(n0+k)*chw:(n0+k+1)*chw], pimg)
			gridCols(p, pimg, col[k*p.lq:], ld)
		}
		for gi := 0; gi < g.groups; gi++ {
			mm(false, false, g.og, ld, g.kdim,
				1, w[gi*g.og*g.kdim:], g.kdim,
				col[gi*g.kdim*ld:], ld,
				0, out[gi*g.og*ld:], ld)
		}
		for k := range m {
			gridToImage(g, p, out[k*p.lq:], ld, y[(n0+k)*ohw:(n0+k+1)*ohw])
		}
	})
}

// gridInputGrad is convInputGrad for unit strides: dcol = wᵀ·dy on the
// grid, then each row added back onto the padded image.
func gridInputGrad[T Float](g *convGeom, dy, w, dx []T) {
	p := newGridPlan(g)
	rows, chw, ohw := g.c*g.kh*g.kw, g.c*g.hw, g.o*g.howo
	G := g.gridImages(p)
	per := (rows + g.o) * G * p.lq
	groupsOfImages(g.n, G, per+p.img, g.n*(rows+g.o)*p.lq, func(n0, m int, buf []T, mm gemmFunc[T]) {
		ld := m * p.lq
		col, dyg, pimg := buf[:rows*ld], buf[rows*ld:(rows+g.o)*ld], buf[per:per+p.img]
		for k := range m {
			gridFromImage(g, p, dy[(n0+k)*ohw:(n0+k+1)*ohw], dyg[k*p.lq:], ld)
		}
		for gi := 0; gi < g.groups; gi++ {
			mm(true, false, g.kdim, ld, g.og,
				1, w[gi*g.og*g.kdim:], g.kdim,
				dyg[gi*g.og*ld:], ld,
				0, col[gi*g.kdim*ld:], ld)
		}
		for k := range m {
			gridAddCols(g, p, col[k*p.lq:], ld, pimg, dx[(n0+k)*chw:(n0+k+1)*chw])
		}
	})
}

// gridWeightGrad is convWeightGrad for unit strides.
func gridWeightGrad[T Float](g *convGeom, x, dy, dw []T) {
	p := newGridPlan(g)
	// Without a NaN or Inf in x, the grid's extra columns add exact zeros
	// (0·x) and need not be cleared.
	n, _, _ := nonFinite(x)
	clearCols := n > 0 && p.wp != g.wo
	splitImages(g, dw, g.n*(g.c*g.kh*g.kw+g.o)*p.lq, func(n0, n1 int, acc []T, mm gemmFunc[T]) {
		gridWeightGradImages(g, p, x, dy, n0, n1, acc, mm, clearCols)
	})
}

// gridWeightGradImages sets dw to the weight gradient of images [n0, n1)
// on the grid (see weightGradImages). clearCols zeros the extra columns
// of the column matrix, which x's NaNs or Infs would otherwise reach.
func gridWeightGradImages[T Float](g *convGeom, p *gridPlan, x, dy []T, n0, n1 int, dw []T, mm gemmFunc[T], clearCols bool) {
	if n0 == n1 {
		clear(dw)
		return
	}
	rows, wrows, chw, ohw := g.c*g.kh*g.kw, g.wgRows(), g.c*g.hw, g.o*g.howo
	G := max(1, min(wgCols/p.lq, n1-n0))
	per := (wrows + g.o) * G * p.lq
	buf := getBuf[T](per + p.img + g.wgAccLen())
	defer putBuf(buf)
	pimg, acc := buf[per:per+p.img], buf[per+p.img:]
	clear(pimg)
	for b := n0; b < n1; b += G {
		m := min(G, n1-b)
		ld := m * p.lq
		col, dyg := buf[:wrows*ld], buf[wrows*ld:(wrows+g.o)*ld]
		for k := range m {
			gridFill(g, p, x[(b+k)*chw:(b+k+1)*chw], pimg)
			gridCols(p, pimg, col[k*p.lq:], ld)
			if clearCols {
				gridClearCols(g, p, col[k*p.lq:], ld)
			}
			gridFromImage(g, p, dy[(b+k)*ohw:(b+k+1)*ohw], dyg[k*p.lq:], ld)
		}
		clear(col[rows*ld:])
		var beta T
		if b > n0 {
			beta = 1
		}
		wgProduct(g, mm, col, dyg, ld, beta, acc)
	}
	wgFinish(g, acc, dw)
}
