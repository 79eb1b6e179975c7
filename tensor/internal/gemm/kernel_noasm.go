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
