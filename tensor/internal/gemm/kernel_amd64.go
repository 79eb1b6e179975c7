//go:build amd64

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The micro-kernels live in kernel_amd64.s, written by gen_kernel_amd64.go:
// one template for the AVX2 (YMM) and AVX-512 (ZMM) widths and both element
// sizes.

//go:generate sh -c "go run gen_kernel_amd64.go > kernel_amd64.s"

// sgemmKernel6x16 computes the 6×16 tile C = alpha·Ã·B̃ + beta·C from a packed
// A micro-panel (k steps of 6 values) and a packed B micro-panel (k steps of 16
// values). When beta == 0, C is not read. ldc is in elements.
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32, ldc int, alpha, beta float32)

// dgemmKernel6x8 is the float64 counterpart of sgemmKernel6x16 for a 6×8 tile.
//
//go:noescape
func dgemmKernel6x8(k int, a, b, c *float64, ldc int, alpha, beta float64)

// sgemmKernel6x32 is the AVX-512 float32 kernel for a 6×32 tile: the same
// packed A panels as sgemmKernel6x16, B rows of 32 values.
//
//go:noescape
func sgemmKernel6x32(k int, a, b, c *float32, ldc int, alpha, beta float32)

// dgemmKernel6x16 is the AVX-512 float64 kernel for a 6×16 tile.
//
//go:noescape
func dgemmKernel6x16(k int, a, b, c *float64, ldc int, alpha, beta float64)

// The same kernels reading A in place (gen_kernel_amd64.go's kernelA):
// N where op(A) is A, T where it is Aᵀ; lda in elements.
//
//go:noescape
func sgemmKernel6x16N(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func sgemmKernel6x16T(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dgemmKernel6x8N(k int, a *float64, lda int, b, c *float64, ldc int, alpha, beta float64)

//go:noescape
func dgemmKernel6x8T(k int, a *float64, lda int, b, c *float64, ldc int, alpha, beta float64)

// hasAsm reports whether the AVX2+FMA micro-kernels can run on this CPU.
var hasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasWide reports whether the AVX-512 kernels can run: the CPU has AVX512F
// and the operating system saves the ZMM state (x/sys/cpu checks XCR0).
var hasWide = hasAsm && cpu.X86.HasAVX512F

func asmKernelS(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	sgemmKernel6x16(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

func asmKernelD(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	dgemmKernel6x8(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

// asmInPlaceS runs the in-place float32 kernel of a 6-row tile whose
// operand a starts at op(A)'s (0, 0): k steps of 6 rows.
func asmInPlaceS(k int, a []float32, lda int, trans bool, b, c []float32, ldc int, alpha, beta float32) {
	if trans {
		_ = a[(k-1)*lda+5]
		sgemmKernel6x16T(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
		return
	}
	_ = a[5*lda+k-1]
	sgemmKernel6x16N(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

// asmInPlaceD is asmInPlaceS for float64.
func asmInPlaceD(k int, a []float64, lda int, trans bool, b, c []float64, ldc int, alpha, beta float64) {
	if trans {
		_ = a[(k-1)*lda+5]
		dgemmKernel6x8T(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
		return
	}
	_ = a[5*lda+k-1]
	dgemmKernel6x8N(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

func wideKernelS(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	sgemmKernel6x32(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

func wideKernelD(k int, a, b, c []float64, ldc int, alpha, beta float64) {
	dgemmKernel6x16(k, unsafe.SliceData(a), unsafe.SliceData(b), unsafe.SliceData(c), ldc, alpha, beta)
}

// Kernel names for KernelName.
const (
	asmName  = "avx2+fma 6x16 (f32), 6x8 (f64)"
	wideName = "avx512f 6x32 (f32), 6x16 (f64)"
)

var (
	wideParamsS = &params[float32]{mr: 6, nr: 32, mc: 144, kc: 512, nc: 4096, kern: wideKernelS}
	wideParamsD = &params[float64]{mr: 6, nr: 16, mc: 96, kc: 256, nc: 2048, kern: wideKernelD}
	asmParamsS  = &params[float32]{mr: 6, nr: 16, mc: 144, kc: 256, nc: 4096, kern: asmKernelS, kernIn: asmInPlaceS}
	asmParamsD  = &params[float64]{mr: 6, nr: 8, mc: 96, kc: 256, nc: 2048, kern: asmKernelD, kernIn: asmInPlaceD}
)

// The rank-1 kernels (see outerKernel): one row of C per broadcast value
// of a, four vectors per step; mode 1 stores non-temporally.
//
//go:noescape
func souterKernel8(m, n int, a *float32, inca int, b, c *float32, ldc, mode int)

//go:noescape
func douterKernel4(m, n int, a *float64, inca int, b, c *float64, ldc, mode int)

//go:noescape
func souterKernel16(m, n int, a *float32, inca int, b, c *float32, ldc, mode int)

//go:noescape
func douterKernel8(m, n int, a *float64, inca int, b, c *float64, ldc, mode int)

// asmOuterS returns the float32 rank-1 kernel of family f (not portable).
func asmOuterS(f kernelFamily) outerKernel[float32] {
	if f == wideKernels {
		return wideOuterS
	}
	return narrowOuterS
}

// asmOuterD returns the float64 rank-1 kernel of family f (not portable).
func asmOuterD(f kernelFamily) outerKernel[float64] {
	if f == wideKernels {
		return wideOuterD
	}
	return narrowOuterD
}

func narrowOuterS(m, n int, a []float32, inca int, b, c []float32, ldc int, mode int) {
	souterKernel8(m, n, unsafe.SliceData(a), inca, unsafe.SliceData(b), unsafe.SliceData(c), ldc, mode)
}

func wideOuterS(m, n int, a []float32, inca int, b, c []float32, ldc int, mode int) {
	souterKernel16(m, n, unsafe.SliceData(a), inca, unsafe.SliceData(b), unsafe.SliceData(c), ldc, mode)
}

func narrowOuterD(m, n int, a []float64, inca int, b, c []float64, ldc int, mode int) {
	douterKernel4(m, n, unsafe.SliceData(a), inca, unsafe.SliceData(b), unsafe.SliceData(c), ldc, mode)
}

func wideOuterD(m, n int, a []float64, inca int, b, c []float64, ldc int, mode int) {
	douterKernel8(m, n, unsafe.SliceData(a), inca, unsafe.SliceData(b), unsafe.SliceData(c), ldc, mode)
}
