//go:build amd64 && !purego

package tensor

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasSIMD reports whether the AVX2 elementwise kernels can run here.
var hasSIMD = cpu.X86.HasAVX2

// sigmoidAVX2 is implemented in simd_amd64.s.
//
//go:noescape
func sigmoidAVX2(d, x *float32, n int) int

// sigmoidBlocks runs the vector sigmoid over d and x (same length) as far
// as it can and returns how many elements it wrote.
func sigmoidBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return sigmoidAVX2(unsafe.SliceData(d), unsafe.SliceData(x), len(d))
}

// tanhAVX2 is implemented in simd_amd64.s.
//
//go:noescape
func tanhAVX2(d, x *float32, n int) int

// tanhBlocks runs the vector tanh over d and x (same length) as far as it
// can and returns how many elements it wrote.
func tanhBlocks(d, x []float32) int {
	if !hasSIMD || len(d) < 8 {
		return 0
	}
	return tanhAVX2(unsafe.SliceData(d), unsafe.SliceData(x), len(d))
}
