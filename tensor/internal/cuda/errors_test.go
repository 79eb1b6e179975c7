package cuda

import (
	"errors"
	"fmt"
	"testing"
)

func TestResultNames(t *testing.T) {
	for _, c := range []struct {
		r    Result
		want string
	}{
		{0, "CUDA_SUCCESS (0)"},
		{NoDevice, "CUDA_ERROR_NO_DEVICE (100)"},
		{OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{StubLibrary, "CUDA_ERROR_STUB_LIBRARY (34)"},
		{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)"},
		{700, "CUDA_ERROR_ILLEGAL_ADDRESS (700)"},
		{12345, "CUresult 12345"},
	} {
		if got := c.r.String(); got != c.want {
			t.Errorf("Result(%d) = %q, want %q", int32(c.r), got, c.want)
		}
	}
	if got := blasStatus(15); got != "CUBLAS_STATUS_NOT_SUPPORTED (15)" {
		t.Errorf("blasStatus(15) = %q", got)
	}
	if got := blasStatus(99); got != "cublasStatus_t 99" {
		t.Errorf("blasStatus(99) = %q", got)
	}
}

func TestCheck(t *testing.T) {
	if err := check("cuInit", 0); err != nil {
		t.Errorf("check(0) = %v", err)
	}
	err := check("cuMemAlloc", 2)
	var e *Error
	if !errors.As(err, &e) || e.Code != OutOfMemory || err.Error() != "cuda: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)" {
		t.Errorf("check(2) = %v", err)
	}
	if errors.Is(err, ErrNoDriver) {
		t.Error("an out-of-memory error matches ErrNoDriver")
	}
	u := fmt.Errorf("wrapped: %w", unavailable("no device"))
	if !errors.Is(u, ErrNoDriver) || u.Error() != "wrapped: cuda unavailable: no device" {
		t.Errorf("unavailable = %v", u)
	}
}
