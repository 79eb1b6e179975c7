package tensor

import (
	"fmt"
	"sync"

	"github.com/gradus-ml/gradus/tensor/internal/devices"
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
// Tensors live on the CPU today. A program that imports tensor/cuda can
// bind the CUDA device (the driver, NVRTC, cuBLAS and Gradus's kernels,
// loaded at run time without cgo), but no operation runs on it yet.
// docs/gpu.md describes the state of the work.
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

// ErrNoCUDA is wrapped by the error of CUDA when CUDA cannot run here:
// the program does not import tensor/cuda, the platform has no bindings
// (only linux/amd64 and linux/arm64 have), the driver library is missing,
// or the driver sees no device.
var ErrNoCUDA = devices.ErrUnavailable

var cudaDevices struct {
	sync.Mutex
	open map[int]bool
}

// CUDA returns the CUDA device with the given ordinal (0 for the first
// GPU), binding the NVIDIA driver on first use. The bindings are in
// package tensor/cuda, which a program links in by importing it:
//
//	import _ "github.com/gradus-ml/gradus/tensor/cuda"
//
// so that programs without it stay statically linked and never look for
// a driver. Where CUDA cannot run, CUDA returns the CPU and an error
// wrapping ErrNoCUDA that says why (the program does not import
// tensor/cuda; libcuda.so.1 not found, with the places searched; no
// device), and the CPU keeps working as before.
func CUDA(ordinal int) (Device, error) {
	cudaDevices.Lock()
	defer cudaDevices.Unlock()
	if ordinal < 0 {
		return CPU, fmt.Errorf("tensor.CUDA(%d): the ordinal must be >= 0", ordinal)
	}
	if cudaDevices.open[ordinal] {
		return Device{kind: CUDAKind, ordinal: ordinal}, nil
	}
	if devices.CUDA == nil {
		return CPU, fmt.Errorf("tensor.CUDA(%d): %w: this program does not link the CUDA device (import _ \"github.com/gradus-ml/gradus/tensor/cuda\")", ordinal, ErrNoCUDA)
	}
	if err := devices.CUDA(ordinal); err != nil {
		return CPU, fmt.Errorf("tensor.CUDA(%d): %w", ordinal, err)
	}
	if cudaDevices.open == nil {
		cudaDevices.open = map[int]bool{}
	}
	cudaDevices.open[ordinal] = true
	return Device{kind: CUDAKind, ordinal: ordinal}, nil
}
