package cuda_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	_ "github.com/gradus-ml/gradus/tensor/cuda"
)

// With the package linked in and no driver to be found (GRADUS_CUDA_PATH
// an empty folder), CUDA returns the CPU and an error wrapping
// tensor.ErrNoCUDA that names the library and the folder searched.
func TestCUDAWithoutDriver(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GRADUS_CUDA_PATH", dir)
	dev, err := tensor.CUDA(0)
	if err == nil {
		if dev.String() != "cuda:0" || dev.Kind() != tensor.CUDAKind {
			t.Errorf("CUDA(0) = %v, kind %d", dev, dev.Kind())
		}
		t.Skipf("this machine has a CUDA device (%v): the error path is not reachable", dev)
	}
	if dev != tensor.CPU || !errors.Is(err, tensor.ErrNoCUDA) || !strings.HasPrefix(err.Error(), "tensor.CUDA(0): cuda unavailable: ") {
		t.Fatalf("CUDA(0) = %v, %v; want the CPU and an error wrapping ErrNoCUDA", dev, err)
	}
	if strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("CUDA(0) = %v; want the library named", err)
	}
	if strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "GRADUS_CUDA_PATH=["+dir+"]") {
		t.Errorf("CUDA(0) = %v; want the folder searched, %s", err, dir)
	}
}

// Example asks for the first GPU and falls back to the CPU; on a
// machine without one the error says why, e.g. "tensor.CUDA(0): cuda
// unavailable: libcuda.so.1 (CUDA driver) not found in ...". Its output
// depends on the machine, so it is compiled but not run.
func Example() {
	dev, err := tensor.CUDA(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		dev = tensor.CPU
	}
	fmt.Println("running on", dev)
}
