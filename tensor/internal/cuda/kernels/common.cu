// Helpers shared by Gradus's CUDA kernels. The package compiles this file
// first and then the other .cu files of this folder in name order, as one
// NVRTC program, with --fmad=false (no FMA contraction, as on the CPU).
// Every kernel exists for float (suffix _f32) and double (_f64), with C
// linkage so the module's function names are the plain names.

#define BLOCK 256  // threads per block of every launch
#define MAXDIM 8   // dimensions of a broadcast operation

// Strides addresses two broadcast operands: element i of the contiguous
// output of shape `shape` reads a at Σ index[d]·a[d] and b likewise; a
// stride of 0 repeats an operand along a dimension (NumPy broadcasting).
struct Strides {
  long long ndim;
  long long shape[MAXDIM];
  long long a[MAXDIM];
  long long b[MAXDIM];
};

// One name per function for both precisions, so templates read as maths.
__device__ inline float  math_exp(float x)   { return expf(x); }
__device__ inline double math_exp(double x)  { return exp(x); }
__device__ inline float  math_log(float x)   { return logf(x); }
__device__ inline double math_log(double x)  { return log(x); }
__device__ inline float  math_tanh(float x)  { return tanhf(x); }
__device__ inline double math_tanh(double x) { return tanh(x); }
__device__ inline float  math_erfc(float x)  { return erfcf(x); }
__device__ inline double math_erfc(double x) { return erfc(x); }
__device__ inline float  math_sqrt(float x)  { return sqrtf(x); }
__device__ inline double math_sqrt(double x) { return sqrt(x); }
__device__ inline float  math_log1p(float x)  { return log1pf(x); }
__device__ inline double math_log1p(double x) { return log1p(x); }
__device__ inline float  math_expm1(float x)  { return expm1f(x); }
__device__ inline double math_expm1(double x) { return expm1(x); }
__device__ inline float  math_abs(float x)    { return fabsf(x); }
__device__ inline double math_abs(double x)   { return fabs(x); }

// Grid-stride loops: any grid covers any n.
__device__ inline long long first_index() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ inline long long grid_stride() {
  return (long long)gridDim.x * blockDim.x;
}

// block_reduce combines one value per thread of a BLOCK-thread block by a
// tree in shared memory and returns the result to every thread. sh has
// BLOCK elements; the block must not diverge around the call.
template <typename T, typename Op>
__device__ T block_reduce(T v, T* sh, Op op) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = op(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  T r = sh[0];
  __syncthreads();  // sh may be reused at once
  return r;
}

template <typename T> struct Plus {
  __device__ T operator()(T a, T b) const { return a + b; }
};
template <typename T> struct Max {
  __device__ T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
