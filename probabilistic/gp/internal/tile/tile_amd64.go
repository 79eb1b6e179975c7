package tile

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// level is the widest vector kernel this CPU runs: 2 for AVX-512F, 1 for
// AVX2 with FMA, 0 for none (Go). Tests lower it to check every kernel.
var level = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasFMA:
		return 2
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return 1
	}
	return 0
}()

// The vector kernels (tile_amd64.s): for each of the nc points, the 64
// squared distances in eight YMM or four ZMM accumulators; the exp
// variants take the exponential of each value in registers before it is
// stored.
//
//go:noescape
func sqDistTile64AVX2(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32)

//go:noescape
func expTile64AVX2(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32)

//go:noescape
func sqDistTile64AVX512(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32)

//go:noescape
func expTile64AVX512(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32)

type kernelFunc func(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32)

func run(avx2, avx512 kernelFunc, dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) bool {
	var f kernelFunc
	switch level {
	case 2:
		f = avx512
	case 1:
		f = avx2
	default:
		return false
	}
	f(unsafe.SliceData(dst), ldd, unsafe.SliceData(pts), nc, unsafe.SliceData(blk), d, off, scale, lo)
	return true
}

func sqDistAsm(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) bool {
	return run(sqDistTile64AVX2, sqDistTile64AVX512, dst, ldd, pts, nc, blk, d, off, scale, lo)
}

func expSqDistAsm(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32) bool {
	return run(expTile64AVX2, expTile64AVX512, dst, ldd, pts, nc, blk, d, off, scale, lo)
}
