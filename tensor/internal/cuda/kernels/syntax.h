// syntax.h declares, for clang's syntax check of the kernels (make
// cuda-syntax), what NVRTC provides built in: the execution-space
// attributes, the thread-index variables and the math functions the .cu
// files use. NVRTC never sees this file. A kernel that calls something not
// declared here fails the check: declare it here after checking that NVRTC
// provides it (NVIDIA, 2025, CUDA Math API reference).
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))

struct gradus_dim3 {
  unsigned int x, y, z;
};
extern const __device__ gradus_dim3 threadIdx, blockIdx, blockDim, gridDim;

extern "C" {
__device__ void __syncthreads(void);
__device__ float expf(float);
__device__ double exp(double);
__device__ float logf(float);
__device__ double log(double);
__device__ float tanhf(float);
__device__ double tanh(double);
__device__ float erfcf(float);
__device__ double erfc(double);
__device__ float sqrtf(float);
__device__ double sqrt(double);
__device__ float log1pf(float);
__device__ double log1p(double);
__device__ float expm1f(float);
__device__ double expm1(double);
__device__ float fabsf(float);
__device__ double fabs(double);
}

// Atomic addition on global or shared memory, returning the old value:
// C++ overloads, so outside the extern "C" block. The double one needs
// compute capability 6.0, below every architecture the package compiles
// for (NVIDIA, 2025, CUDA C++ Programming Guide, "atomicAdd()").
__device__ float atomicAdd(float* address, float val);
__device__ double atomicAdd(double* address, double val);

// The functions kernels/math.cu adds (NVIDIA, 2025, CUDA Math API
// reference, "Single Precision Mathematical Functions" and "Double
// Precision Mathematical Functions").
extern "C" {
__device__ float sinf(float);
__device__ double sin(double);
__device__ float cosf(float);
__device__ double cos(double);
__device__ float tanf(float);
__device__ double tan(double);
__device__ float erff(float);
__device__ double erf(double);
__device__ float lgammaf(float);
__device__ double lgamma(double);
__device__ float floorf(float);
__device__ double floor(double);
__device__ float powf(float, float);
__device__ double pow(double, double);
__device__ float nanf(const char*);
__device__ double nan(const char*);
}
