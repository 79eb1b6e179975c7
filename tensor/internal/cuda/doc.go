// Package cuda binds NVIDIA's CUDA driver, NVRTC and cuBLAS at run time,
// without cgo: the shared libraries are opened with dlopen through
// github.com/ebitengine/purego, so builds with CGO_ENABLED=0 and
// cross-compiles keep working, and a machine without a GPU or a driver
// only sees Open fail with an error that says why.
//
// It is the foundation of tensor's CUDA device:
//
//   - Open finds libcuda.so.1 (Search: GRADUS_CUDA_PATH, the dynamic
//     loader, the standard directories including pip's nvidia/*/lib),
//     initialises the driver and retains device 0's primary context.
//   - Device memory: Alloc and Release over a free-list cache, Upload and
//     Download for []float32 and []float64.
//   - Driver.Compile compiles CUDA C++ to PTX with NVRTC for the device's
//     architecture, with a cache on disk; Driver.Kernels loads the
//     package's own kernels (kernels/*.cu, embedded): elementwise maths with
//     broadcasting, row-wise softmax and log-softmax and their gradients,
//     sums along the last axis, the Adam update.
//   - Driver.BLAS gives cuBLAS's Sgemm and Dgemm on row-major matrices,
//     with TF32 and bfloat16 inputs as opt-ins (SetPrecision).
//
// Every call runs on a locked OS thread with the device's context made
// current first (see Driver), so goroutines need not care about CUDA's
// per-thread contexts. Work is queued on the device's default stream;
// Download and Synchronize wait for it.
//
// The driver API, NVRTC and cuBLAS are described in NVIDIA's CUDA Driver
// API reference, NVRTC User Guide and cuBLAS Library User Guide (NVIDIA,
// 2025, CUDA Toolkit 13.0 documentation). docs/gpu.md says how to check the
// package on a GPU machine.
package cuda
