//go:build !amd64 && !arm64

package gemm

// hasAsm is false on architectures without an assembly micro-kernel.
var hasAsm = false

var (
	asmParamsS = portableParamsS
	asmParamsD = portableParamsD
)
