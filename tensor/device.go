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
// Tensors live on the CPU unless made with NewOn or moved with To. A
// program that imports tensor/cuda can bind the CUDA device (the driver,
// NVRTC, cuBLAS and Gradus's kernels, loaded at run time without cgo);
// the operations with a GPU kernel then run there, and any other op given
// a GPU tensor panics naming itself. docs/gpu.md lists the kernels.
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
	backends map[int]devices.Backend
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
	if cudaDevices.backends[ordinal] != nil {
		return Device{kind: CUDAKind, ordinal: ordinal}, nil
	}
	if devices.CUDA == nil {
		return CPU, fmt.Errorf("tensor.CUDA(%d): %w: this program does not link the CUDA device (import _ \"github.com/gradus-ml/gradus/tensor/cuda\")", ordinal, ErrNoCUDA)
	}
	be, err := devices.CUDA(ordinal)
	if err != nil {
		return CPU, fmt.Errorf("tensor.CUDA(%d): %w", ordinal, err)
	}
	if cudaDevices.backends == nil {
		cudaDevices.backends = map[int]devices.Backend{}
	}
	cudaDevices.backends[ordinal] = be
	return Device{kind: CUDAKind, ordinal: ordinal}, nil
}

// Synchronize waits until the work queued on d has finished and returns
// the first failure of it. Operations on a GPU return before their
// kernels run, so time a GPU step by calling it at the end; reading a
// result (Values, Item, To(CPU)) waits as well. On the CPU it does
// nothing.
func (d Device) Synchronize() error {
	if d.kind == CPUKind {
		return nil
	}
	cudaDevices.Lock()
	be := cudaDevices.backends[d.ordinal]
	cudaDevices.Unlock()
	if be == nil {
		return fmt.Errorf("tensor: Synchronize: device %v is not open: get it from tensor.CUDA", d)
	}
	return be.Synchronize()
}

// ConvLibrary describes how d runs float32 convolutions and their
// gradients: on a CUDA device through cuDNN where it is installed (e.g.
// "cuDNN 91000 (/usr/lib/libcudnn.so.9) for float32"), otherwise, or
// with GRADUS_CUDNN=off, through Gradus's im2col and col2im kernels
// around cuBLAS products, with the reason ("cuDNN not used: ..."). A
// failing cuDNN call is an error of the operation, as any device
// failure is; GRADUS_CUDNN=off is the way round one. float64 convolutions always take the kernels.
// The CPU runs Gradus's own convolutions ("gradus").
func (d Device) ConvLibrary() string {
	if d.kind == CPUKind {
		return "gradus"
	}
	cudaDevices.Lock()
	be := cudaDevices.backends[d.ordinal]
	cudaDevices.Unlock()
	if cl, ok := be.(devices.ConvLibrary); ok {
		return cl.ConvLibrary()
	}
	return fmt.Sprintf("device %v is not open: get it from tensor.CUDA", d)
}

// MatMulPrecision says how a CUDA device computes float32 matrix
// products (MatMul, Linear, the convolutions' and attention's products).
// Float64 products are always computed in float64, and the CPU always
// computes in the tensors' own precision.
type MatMulPrecision int

const (
	// MatMulFloat32 computes float32 products in float32: the default.
	MatMulFloat32 MatMulPrecision = iota
	// MatMulTF32 rounds the inputs to TF32 (10 explicit mantissa bits)
	// for the tensor cores and sums in float32: about 8× the float32
	// throughput of an H100 or H200 for a relative error near 1e-3, as
	// PyTorch's torch.backends.cuda.matmul.allow_tf32.
	MatMulTF32
	// MatMulBF16 rounds the inputs to bfloat16 (7 explicit mantissa bits)
	// for the tensor cores and sums in float32: faster still for large
	// products, relative error near 1e-2. Tensors stay float32; only the
	// products' inputs are rounded.
	MatMulBF16
)

// String names p: "float32", "tf32" or "bf16".
func (p MatMulPrecision) String() string {
	switch p {
	case MatMulFloat32:
		return "float32"
	case MatMulTF32:
		return "tf32"
	case MatMulBF16:
		return "bf16"
	}
	return fmt.Sprintf("MatMulPrecision(%d)", int(p))
}

// SetMatMulPrecision sets how the CUDA device d computes later float32
// matrix products; see MatMulPrecision. cuDNN's convolutions (see
// ConvLibrary) follow: TF32 under MatMulTF32 and MatMulBF16 alike. It is an opt-in: a device starts
// at MatMulFloat32. On the CPU, or with an unknown p, it returns an error.
func SetMatMulPrecision(d Device, p MatMulPrecision) error {
	if d.kind != CUDAKind {
		return fmt.Errorf("tensor.SetMatMulPrecision: %v computes products in the tensors' own precision", d)
	}
	if p < MatMulFloat32 || p > MatMulBF16 {
		return fmt.Errorf("tensor.SetMatMulPrecision: unknown precision %v", p)
	}
	cudaDevices.Lock()
	be := cudaDevices.backends[d.ordinal]
	cudaDevices.Unlock()
	if be == nil {
		return fmt.Errorf("tensor.SetMatMulPrecision: device %v is not open: get it from tensor.CUDA", d)
	}
	return be.SetMatMulPrecision(int(p))
}
