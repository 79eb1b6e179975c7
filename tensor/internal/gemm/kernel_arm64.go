//go:build arm64

package gemm

import "unsafe"

// The NEON micro-kernels (kernel_arm64.s, written by gen_kernel_arm64.go).
// Every arm64 CPU has Advanced SIMD, so they are always used. The float32
// kernel keeps an 8×8 tile in 16 of the 32 vector registers and does 16
// by-element FMLAs (128 flops) per depth step for 2 loads; the float64 one
// an 8×4 tile, 16 FMLAs (64 flops) per step.

//go:generate sh -c "go run gen_kernel_arm64.go > kernel_arm64.s"

// sgemmKernel8x8 computes the 8×8 tile C = alpha·Ã·B̃ + beta·C from packed
// micro-panels (k steps of 8 A values and 8 B values). When beta == 0, C is
// not read. ldc is in elements.
//
//go:noescape
func sgemmKernel8x8(k int, a, b, c *float32, ldc int, alpha, beta float32)

// dgemmKernel8x4 is the float64 kernel for an 8×4 tile.
//
//go:noescape
func dgemmKernel8x4(k int, a, b, c *float64, ldc int, alpha, beta float64)

// hasAsm is true: Advanced SIMD is part of ARMv8-A.
var hasAsm = true

// hasWide is false: there is no wider kernel than NEON's.
var hasWide = false

// Kernel names for KernelName.
const (
	asmName  = "neon 8x8 (f32), 8x4 (f64)"
	wideName = asmName
)

func asmKernelS(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	sgemmKernel8x8(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

func asmKernelD(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	dgemmKernel8x4(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

var (
	wideParamsS = asmParamsS
	wideParamsD = asmParamsD
	asmParamsS  = &params[float32]{mr: 8, nr: 8, mc: 128, kc: 256, nc: 4096, kern: asmKernelS}
	asmParamsD  = &params[float64]{mr: 8, nr: 4, mc: 64, kc: 256, nc: 2048, kern: asmKernelD}
)

// asmOuterS returns the float32 rank-1 kernel: the portable one, as there
// is no assembly rank-1 kernel on this architecture.
func asmOuterS(kernelFamily) outerKernel[float32] { return portableOuter[float32] }

// asmOuterD is asmOuterS for float64.
func asmOuterD(kernelFamily) outerKernel[float64] { return portableOuter[float64] }
