package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/gp/internal/tile"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// The float32 tiles of CGOptions.Float32 (RBF kernels): a tile holds the
// kernel between up to tileCols training points (its rows) and a block of
// tile.Block rows of the product (its columns), computed by tile.SqDist
// from coordinate differences and exponentiated in place, and a float32
// GEMM multiplies it into the probe vectors, transposed so that the GEMM's
// long dimension is the block rather than the few probe columns. Each
// tile's sums (over at most tileCols terms) are float32; the sums over
// tiles are float64, as GPyTorch does on GPUs (Gardner et al. 2018).

// f32Tiles is the float32 copy of an operator's scaled training points.
type f32Tiles struct {
	pts  []float32 // (n, d), row-major
	ptsT []float32 // by column tile: the tile at c0 is (d, nc) at offset c0·d
}

// useFloat32 switches k to float32 tiles, for an RBF kernel only, laying
// the points out for k.cols-wide column tiles.
func (k *kernelOp) useFloat32(op string) error {
	if k.kind != kernel.KindRBF {
		return fmt.Errorf("%s: CGOptions.Float32 supports the RBF kernel (or a kernel.Scale of one), got the %v kernel", op, k.kind)
	}
	if k.block != tileRows && k.block != tile.Block {
		return fmt.Errorf("%s: CGOptions.Float32 computes tiles of %d rows; BlockRows %d cannot be used with it", op, tile.Block, k.block)
	}
	k.block = tile.Block
	pts := make([]float32, len(k.xs))
	for i, v := range k.xs {
		pts[i] = float32(v)
	}
	ptsT := make([]float32, len(k.xs))
	for c0 := 0; c0 < k.n; c0 += k.cols {
		nc := min(k.cols, k.n-c0)
		for j := 0; j < nc; j++ {
			for q := 0; q < k.d; q++ {
				ptsT[c0*k.d+q*nc+j] = pts[(c0+j)*k.d+q]
			}
		}
	}
	k.f32 = &f32Tiles{pts: pts, ptsT: ptsT}
	return nil
}

// blockCoords writes the scaled rows [i0, i1) of xs (m, d) into dst by
// coordinate (d × tile.Block), repeating the last row into the padding.
func blockCoords(dst []float32, xs []float64, d, i0, i1 int) {
	for q := 0; q < d; q++ {
		row := dst[q*tile.Block : (q+1)*tile.Block]
		for i := range row {
			r := min(i0+i, i1-1)
			row[i] = float32(xs[r*d+q])
		}
	}
}

// tile32 writes the RBF kernel between the training points [c0, c1) and
// the block coordinates blk into kv ((c1 − c0) × tile.Block), and, if e is
// not nil, the exponents log s − ½r² into e.
func (k *kernelOp) tile32(e, kv, blk []float32, c0, c1 int) {
	pts, off := k.f32.pts[c0*k.d:c1*k.d], float32(math.Log(k.scale))
	tile.ExpSqDist(kv, tile.Block, pts, c1-c0, blk, k.d, off, -0.5, tile.ExpFloor)
	if e != nil {
		tile.SqDist(e, tile.Block, pts, c1-c0, blk, k.d, off, -0.5, tile.ExpFloor)
	}
}

// transposeBlocks returns v (n, t) in float32, column block by column
// block: the block of columns [c0, c0 + nc) is the (t, nc) matrix at
// offset c0·t.
func (k *kernelOp) transposeBlocks(v []float64, t int) []float32 {
	vt := make([]float32, k.n*t)
	for c0 := 0; c0 < k.n; c0 += k.cols {
		nc := min(k.cols, k.n-c0)
		blk := vt[c0*t : (c0+nc)*t]
		for j := 0; j < nc; j++ {
			for c := 0; c < t; c++ {
				blk[c*nc+j] = float32(v[(c0+j)*t+c])
			}
		}
	}
	return vt
}

// crossMatMul32 is crossMatMul in float32 tiles.
func (k *kernelOp) crossMatMul32(xs []float64, m int, v []float64, t int) []float64 {
	out := make([]float64, m*t)
	vt := k.transposeBlocks(v, t)
	type bufs struct{ e, blk, prod []float32 }
	ws := make([]*bufs, k.workers)
	k.forBlocks(m, func(w, i0, i1 int) {
		if ws[w] == nil {
			ws[w] = &bufs{e: make([]float32, k.cols*tile.Block), blk: make([]float32, k.d*tile.Block), prod: make([]float32, t*tile.Block)}
		}
		b := ws[w]
		blockCoords(b.blk, xs, k.d, i0, i1)
		prod := tensor.FromFloat32s(b.prod, t, tile.Block)
		o := out[i0*t : i1*t]
		for c0 := 0; c0 < k.n; c0 += k.cols {
			c1 := min(k.n, c0+k.cols)
			nc := c1 - c0
			k.tile32(nil, b.e, b.blk, c0, c1)
			tensor.MatMulTo(prod, tensor.FromFloat32s(vt[c0*t:c1*t], t, nc), tensor.FromFloat32s(b.e[:nc*tile.Block], nc, tile.Block))
			for i := 0; i < i1-i0; i++ {
				for c := 0; c < t; c++ {
					o[i*t+c] += float64(b.prod[c*tile.Block+i])
				}
			}
		}
	})
	return out
}

// gradAcc32 is a worker's float32 buffers for gradTile32.
type gradAcc32 struct {
	e, kv, w, ablk, blk []float32
	rowG, colG, cross   []float32
}

// newGradAcc32 returns a worker's float32 buffers for t columns.
func (k *kernelOp) newGradAcc32(t int) *gradAcc32 {
	sz := k.cols * tile.Block
	return &gradAcc32{e: make([]float32, sz), kv: make([]float32, sz), w: make([]float32, sz),
		ablk: make([]float32, tile.Block*t), blk: make([]float32, k.d*tile.Block),
		rowG: make([]float32, tile.Block), colG: make([]float32, k.cols), cross: make([]float32, k.d*tile.Block)}
}

// startBlock32 loads the block of rows [i0, i1): its coordinates, and A's
// rows in float32 (zero in the padding, so padded rows add nothing).
func (k *kernelOp) startBlock32(g *gradAcc32, a []float64, t, i0, i1 int) {
	blockCoords(g.blk, k.xs, k.d, i0, i1)
	clear(g.ablk)
	for i := 0; i < i1-i0; i++ {
		for c := 0; c < t; c++ {
			g.ablk[i*t+c] = float32(a[(i0+i)*t+c])
		}
	}
}

// gradTile32 is gradTile in float32 tiles for the RBF kernel, after
// startBlock32, in vector passes over the tile: W = B·Aᵀ by GEMM, then
// W ⊙ K in place, whose sums (in float32 within the tile) give the
// variance's term and, with the exponents e (r² = 2(log s − e)), the
// isotropic lengthscale's; for ARD lengthscales G = −½ W ⊙ K enters through
// its row sums, its column sums and Xᵀ·G by GEMM.
func (k *kernelOp) gradTile32(ac *gradAcc, b32 []float32, t, i0, i1, c0, c1 int) {
	d, ard := k.d, len(k.ls) > 1
	nc, nb := c1-c0, i1-i0
	g := ac.f32
	e, kv, w := g.e[:nc*tile.Block], g.kv[:nc*tile.Block], g.w[:nc*tile.Block]
	if ard {
		e = nil // only the isotropic lengthscale needs r²
	}
	k.tile32(e, kv, g.blk, c0, c1)
	wt := tensor.FromFloat32s(w, nc, tile.Block)
	tensor.MatMulTTo(wt, tensor.FromFloat32s(b32[c0*t:c1*t], nc, t), tensor.FromFloat32s(g.ablk, tile.Block, t), false, true)
	tensor.MulTo(wt, wt, tensor.FromFloat32s(kv, nc, tile.Block)) // W ⊙ K
	if !ard {
		flat := tensor.FromFloat32s(w)
		sw := float64(tensor.Sum(flat, nil, false).Float32s()[0])
		swe := float64(tensor.Dot(flat, tensor.FromFloat32s(e)).Float32s()[0])
		ac.scale += sw / k.scale
		ac.ls[0] += -0.5 * 2 * (math.Log(k.scale)*sw - swe) // Σ W·K·r²
		return
	}
	rowG, colG := g.rowG, g.colG[:nc]
	tensor.SumInto(tensor.FromFloat32s(rowG, tile.Block), wt, []int{0}, false)
	tensor.SumInto(tensor.FromFloat32s(colG, nc), wt, []int{1}, false)
	sw := 0.0
	for _, v := range rowG {
		sw += float64(v)
	}
	ac.scale += sw / k.scale
	for j, v := range colG {
		ac.col[c0+j] += -0.5 * float64(v)
	}
	// Σ_c G_ic x̃_cq for each block row i: Xᵀ (d × nc) · (W ⊙ K) (nc × Block),
	// scaled by −½ below.
	tensor.MatMulTo(tensor.FromFloat32s(g.cross, d, tile.Block), tensor.FromFloat32s(k.f32.ptsT[c0*d:c1*d], d, nc), wt)
	for i := 0; i < nb; i++ {
		xi := k.xs[(i0+i)*d : (i0+i+1)*d]
		rg := -0.5 * float64(rowG[i])
		for q := 0; q < d; q++ {
			ac.ls[q] += xi[q]*xi[q]*rg - 2*xi[q]*(-0.5*float64(g.cross[q*tile.Block+i]))
		}
	}
}
