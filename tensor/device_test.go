package tensor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

func TestDeviceString(t *testing.T) {
	var zero tensor.Device
	if zero != tensor.CPU || tensor.CPU.String() != "cpu" || tensor.CPU.Kind() != tensor.CPUKind || tensor.CPU.Ordinal() != 0 {
		t.Errorf("CPU = %v (kind %d, ordinal %d); the zero Device must be it", tensor.CPU, tensor.CPU.Kind(), tensor.CPU.Ordinal())
	}
}

// TestCUDAUnavailable: on a machine without the driver, CUDA returns the
// CPU and an error saying why, naming the GRADUS_CUDA_PATH folders it
// searched.
func TestCUDAUnavailable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GRADUS_CUDA_PATH", dir)
	if _, err := tensor.CUDA(-1); err == nil || !strings.Contains(err.Error(), "tensor.CUDA(-1): the ordinal must be >= 0") {
		t.Errorf("CUDA(-1) = %v", err)
	}
	dev, err := tensor.CUDA(0)
	if err == nil {
		if dev.String() != "cuda:0" || dev.Kind() != tensor.CUDAKind {
			t.Errorf("CUDA(0) = %v, kind %d", dev, dev.Kind())
		}
		t.Skipf("this machine has a CUDA device (%v): the error path is not reachable", dev)
	}
	if dev != tensor.CPU || !strings.HasPrefix(err.Error(), "tensor.CUDA(0): cuda unavailable: ") ||
		!strings.Contains(err.Error(), "libcuda.so.1") && !strings.Contains(err.Error(), "cuInit") && !strings.Contains(err.Error(), "no CUDA support") {
		t.Errorf("CUDA(0) = %v, %v; want the CPU and an error saying why", dev, err)
	}
	if strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "GRADUS_CUDA_PATH=["+dir+"]") {
		t.Errorf("CUDA(0) = %v; want the folder searched, %s", err, dir)
	}
	var e interface{ Unwrap() error }
	if !errors.As(err, &e) {
		t.Errorf("the error %v wraps nothing", err)
	}
}

func ExampleDevice_String() {
	fmt.Println(tensor.CPU, tensor.CPU.Kind() == tensor.CPUKind)
	// Output: cpu true
}

// ExampleCUDA asks for the first GPU and falls back to the CPU; on a
// machine without one the error says why, e.g. "tensor.CUDA(0): cuda
// unavailable: libcuda.so.1 (CUDA driver) not found in ...". Its output
// depends on the machine, so it is compiled but not run.
func ExampleCUDA() {
	dev, err := tensor.CUDA(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		dev = tensor.CPU
	}
	fmt.Println("running on", dev)
}
