// Package tile computes the float32 tiles of a stationary kernel's
// squared distances for the GP's matrix-free products: one row of the
// tile per training point, one column per point of a 64-point block, so
// that a GEMM can multiply the tile into the probe vectors directly.
//
// The distances are summed from differences, never through the expansion
// |a|² + |x|² − 2a·x, whose cancellation in float32 would lose the close
// pairs that carry a kernel's largest entries.
package tile

import "math"

// Block is the number of points in a block: the columns of a tile.
const Block = 64

// SqDist sets dst[j·ldd + i] = max(off + scale·Σ_q (pts[j·d+q] − blk[q·Block+i])², lo)
// for the nc points of pts (row-major, nc × d) and the Block points of
// blk, stored by coordinate (d × Block). With off = log s, scale = −½ and
// a floor lo it gives the exponent of an RBF kernel's tile; with off = 0,
// scale = 1 and lo = 0 the squared distances themselves.
func SqDist(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) {
	sqDist("tile.SqDist", dst, ldd, pts, nc, blk, d, off, scale, lo, false)
}

// ExpSqDist is SqDist followed by the exponential of every value: with
// off = log s, scale = −½ and lo ≥ −87 it writes an RBF kernel's tile,
// s·exp(−½r²) (floored at e^lo, which stands for the zero it underflows
// to), to within 2e-7 relative.
func ExpSqDist(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) {
	if lo < ExpFloor {
		panic("tile.ExpSqDist: the floor lo must be at least ExpFloor")
	}
	sqDist("tile.ExpSqDist", dst, ldd, pts, nc, blk, d, off, scale, lo, true)
}

// sqDist checks the operands and runs the vector kernel, or the Go loops
// where there is none.
func sqDist(name string, dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32, exp bool) {
	if nc == 0 {
		return
	}
	if d < 1 || ldd < Block || len(pts) < nc*d || len(blk) < d*Block || len(dst) < (nc-1)*ldd+Block {
		panic(name + ": operands too short for their sizes")
	}
	if sqDistAsm(dst, ldd, pts, nc, blk, d, off, scale, lo, exp) {
		return
	}
	sqDistGo(dst, ldd, pts, nc, blk, d, off, scale, lo)
	if !exp {
		return
	}
	for j := 0; j < nc; j++ {
		row := dst[j*ldd : j*ldd+Block]
		for i, v := range row {
			row[i] = float32(math.Exp(float64(v)))
		}
	}
}

// ExpFloor is the lowest floor ExpSqDist takes: e^-87 ≈ 1.6e-38 is still
// a normal float32.
const ExpFloor = -87

// sqDistGo is SqDist in Go, summing the coordinates in the same order as
// the vector kernel (which fuses each square into its sum).
func sqDistGo(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) {
	var acc [Block]float32
	for j := 0; j < nc; j++ {
		clear(acc[:])
		p := pts[j*d : (j+1)*d]
		for q, v := range p {
			row := blk[q*Block : (q+1)*Block]
			for i, b := range row {
				e := v - b
				acc[i] += e * e
			}
		}
		out := dst[j*ldd : j*ldd+Block]
		for i, s := range acc {
			out[i] = max(off+scale*s, lo)
		}
	}
}
