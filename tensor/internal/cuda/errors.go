package cuda

import (
	"errors"
	"fmt"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// ErrNoDriver is wrapped by the error of Open when this machine cannot
// run CUDA at all: the driver library is missing (or is the toolkit's
// stub), the build has no CUDA support, or the driver sees no device.
// Any other failure of Open is a fault worth reporting.
var ErrNoDriver = errors.New("no CUDA driver or device")

// unavailableError is the error of a machine that cannot run CUDA; it
// matches ErrNoDriver and tensor's ErrNoCUDA (devices.ErrUnavailable).
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return "cuda unavailable: " + e.msg }
func (e *unavailableError) Is(target error) bool {
	return target == ErrNoDriver || target == devices.ErrUnavailable
}

func unavailable(msg string) error { return &unavailableError{msg} }

// Result is a CUresult, the status every driver API call returns.
type Result int32

// The CUresult codes the package tests for.
const (
	Success     Result = 0
	OutOfMemory Result = 2
	StubLibrary Result = 34
	NoDevice    Result = 100
)

// resultNames are the names of the common CUresult codes, from the CUDA
// Driver API reference (NVIDIA, 2025, cuda.h, enum cudaError_enum).
var resultNames = map[Result]string{
	0:   "CUDA_SUCCESS",
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	35:  "CUDA_ERROR_INSUFFICIENT_DRIVER",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	218: "CUDA_ERROR_INVALID_PTX",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	300: "CUDA_ERROR_INVALID_SOURCE",
	400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	999: "CUDA_ERROR_UNKNOWN",
}

// String returns the code's name and number, "CUDA_ERROR_NO_DEVICE (100)",
// or "CUresult 123" for a code outside the table.
func (r Result) String() string {
	if n, ok := resultNames[r]; ok {
		return fmt.Sprintf("%s (%d)", n, int32(r))
	}
	return fmt.Sprintf("CUresult %d", int32(r))
}

// blasStatusNames are the cublasStatus_t codes (NVIDIA, 2025, cuBLAS
// Library User Guide, section 2.2.1).
var blasStatusNames = map[int32]string{
	0:  "CUBLAS_STATUS_SUCCESS",
	1:  "CUBLAS_STATUS_NOT_INITIALIZED",
	3:  "CUBLAS_STATUS_ALLOC_FAILED",
	7:  "CUBLAS_STATUS_INVALID_VALUE",
	8:  "CUBLAS_STATUS_ARCH_MISMATCH",
	11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

func blasStatus(s int32) string {
	if n, ok := blasStatusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, s)
	}
	return fmt.Sprintf("cublasStatus_t %d", s)
}

// Error is a failed driver, NVRTC or cuBLAS call: the call's name and the
// status it returned (Code is the CUresult for driver calls, 0 otherwise).
type Error struct {
	Call string
	Code Result
	Msg  string
}

// Error formats the failure as "cuda: <call>: <status>".
func (e *Error) Error() string { return "cuda: " + e.Call + ": " + e.Msg }

// check turns a CUresult into nil or an *Error naming call.
func check(call string, r int32) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: Result(r), Msg: Result(r).String()}
}
