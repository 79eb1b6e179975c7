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
// squared distances in eight YMM or four ZMM accumulators, exponentiated
// in registers before they are stored when exp is not 0.
//
//go:noescape
func sqDistTile64AVX2(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32, exp int)

//go:noescape
func sqDistTile64AVX512(dst *float32, ldd int, pts *float32, nc int, blk *float32, d int, off, scale, lo float32, exp int)

// sqDistAsm runs the widest vector kernel, reporting false where there is
// none.
func sqDistAsm(dst []float32, ldd int, pts []float32, nc int, blk []float32, d int, off, scale, lo float32, exp bool) bool {
	f := sqDistTile64AVX2
	switch level {
	case 2:
		f = sqDistTile64AVX512
	case 0:
		return false
	}
	e := 0
	if exp {
		e = 1
	}
	f(unsafe.SliceData(dst), ldd, unsafe.SliceData(pts), nc, unsafe.SliceData(blk), d, off, scale, lo, e)
	return true
}
