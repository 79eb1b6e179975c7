package tensor

import (
	"fmt"
	"sync"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
)

// DeviceKind says what executes a tensor's operations.
type DeviceKind uint8

// The kinds of device.
const (
	CPUKind  DeviceKind = iota // the host's cores (the zero value)
	CUDAKind                   // an NVIDIA GPU through the CUDA driver
)

// Device names where tensors live and run: the CPU, or one CUDA GPU.
// Devices are values: two Devices are the same device when they are ==.
//
// Tensors live on the CPU today; the CUDA device is bound (the driver,
// NVRTC, cuBLAS and Gradus's kernels, loaded at run time without cgo) but
// no operation runs on it yet. docs/gpu.md describes the state of the
// work.
type Device struct {
	kind    DeviceKind
	ordinal int
}

// CPU is the host processor, where every tensor lives by default.
var CPU Device

// Kind returns the device's kind.
func (d Device) Kind() DeviceKind { return d.kind }

// Ordinal returns the GPU's index for a CUDA device, 0 for the CPU.
func (d Device) Ordinal() int { return d.ordinal }

// String returns "cpu" or "cuda:N", as PyTorch names devices.
func (d Device) String() string {
	if d.kind == CUDAKind {
		return fmt.Sprintf("cuda:%d", d.ordinal)
	}
	return "cpu"
}

var cudaDevices struct {
	sync.Mutex
	open map[int]*cuda.Driver
}

// CUDA returns the CUDA device with the given ordinal (0 for the first
// GPU), binding the NVIDIA driver on first use: libcuda.so.1 is looked up
// in the folders of the GRADUS_CUDA_PATH environment variable
// (colon-separated), by the dynamic loader, and in the usual CUDA and pip
// folders. Where that fails it returns an error saying why (no driver
// library, with the places searched; no device; a build without CUDA
// support, which is every platform but linux/amd64 and linux/arm64 and
// the nocuda build tag), and the CPU keeps working as before.
func CUDA(ordinal int) (Device, error) {
	cudaDevices.Lock()
	defer cudaDevices.Unlock()
	if _, ok := cudaDevices.open[ordinal]; ok {
		return Device{kind: CUDAKind, ordinal: ordinal}, nil
	}
	if ordinal < 0 {
		return CPU, fmt.Errorf("tensor.CUDA(%d): the ordinal must be >= 0", ordinal)
	}
	d, err := cuda.OpenDevice(cuda.DefaultSearch(), ordinal)
	if err != nil {
		return CPU, fmt.Errorf("tensor.CUDA(%d): %w", ordinal, err)
	}
	if cudaDevices.open == nil {
		cudaDevices.open = map[int]*cuda.Driver{}
	}
	cudaDevices.open[ordinal] = d
	return Device{kind: CUDAKind, ordinal: ordinal}, nil
}
