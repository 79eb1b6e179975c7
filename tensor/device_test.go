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

// A program that does not import tensor/cuda (as this test does not)
// gets the CPU and an error wrapping ErrNoCUDA that says how to link the
// device in; a negative ordinal is refused first.
func TestCUDANotLinked(t *testing.T) {
	if _, err := tensor.CUDA(-1); err == nil || !strings.Contains(err.Error(), "tensor.CUDA(-1): the ordinal must be >= 0") {
		t.Errorf("CUDA(-1) = %v", err)
	}
	dev, err := tensor.CUDA(0)
	if dev != tensor.CPU || !errors.Is(err, tensor.ErrNoCUDA) ||
		err.Error() != `tensor.CUDA(0): CUDA unavailable: this program does not link the CUDA device (import _ "github.com/gradus-ml/gradus/tensor/cuda")` {
		t.Errorf("CUDA(0) = %v, %v", dev, err)
	}
}

// The CPU runs Gradus's own convolutions (internal/gpucheck's
// TestConvLibrary checks a CUDA device's answer).
func TestConvLibraryOfCPU(t *testing.T) {
	if got := tensor.CPU.ConvLibrary(); got != "gradus" {
		t.Errorf("CPU.ConvLibrary() = %q, want gradus", got)
	}
}

func ExampleDevice_String() {
	fmt.Println(tensor.CPU, tensor.CPU.Kind() == tensor.CPUKind)
	// Output: cpu true
}

// ExampleCUDA asks for the first GPU and falls back to the CPU. This
// program does not import tensor/cuda, so the error says so; a program
// that does gets the device, or an error naming what is missing.
func ExampleCUDA() {
	dev, err := tensor.CUDA(0)
	if err != nil {
		fmt.Println("no GPU:", err)
		dev = tensor.CPU
	}
	fmt.Println("running on", dev)
	// Output:
	// no GPU: tensor.CUDA(0): CUDA unavailable: this program does not link the CUDA device (import _ "github.com/gradus-ml/gradus/tensor/cuda")
	// running on cpu
}
