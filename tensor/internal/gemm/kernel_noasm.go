//go:build !amd64 && !arm64

package gemm

// hasAsm is false on architectures without an assembly micro-kernel.
var hasAsm = false

// hasWide is false: there is no wide kernel either.
var hasWide = false

// Kernel names for KernelName.
const (
	asmName  = portableName
	wideName = portableName
)

var (
	asmParamsS  = portableParamsS
	asmParamsD  = portableParamsD
	wideParamsS = portableParamsS
	wideParamsD = portableParamsD
)

// asmOuterS returns the float32 rank-1 kernel: the portable one, as there
// is no assembly rank-1 kernel on this architecture.
func asmOuterS(kernelFamily) outerKernel[float32] { return portableOuter[float32] }

// asmOuterD is asmOuterS for float64.
func asmOuterD(kernelFamily) outerKernel[float64] { return portableOuter[float64] }
