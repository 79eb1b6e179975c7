// A fake CUDA device for `make cuda-fake`: the driver of fakecuda.c plus
// NVRTC, cuBLAS and a module whose kernels are kernels/*.cu compiled for
// the host. One shared object serves as libcuda.so.1, libnvrtc.so.13,
// libcublas.so.13 and libcusolver.so.12 (cuSOLVER and cuBLAS's trsm and
// trmm in fakesolver.cc). Elementwise kernels (no barriers) run their
// grid's threads one after another, each to its end, so the grid-stride loops'
// split of the elements is exercised; the row kernels run each block as
// BLOCK coroutines (ucontext) taking turns at every __syncthreads, so a
// barrier is a round of switches, with __shared__ arrays static and
// blocks one after another. It checks the package's
// bindings, argument passing and kernel logic, and the GPU tests' own
// code, on a machine without a GPU; it says nothing of speed or of the
// device's floating point.
#include <math.h>
#include <ucontext.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#define FAKE_KERNELS
extern "C" {
#include "fakecuda.c"
}

// ---- The kernels, compiled for the host.
struct dim3 {
  unsigned int x, y, z;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;
static ucontext_t sched, thread_ctx[256];
// __syncthreads passes the turn to the next thread of the block; every
// thread meets the same barriers, so a round brings the turn back.
static void __syncthreads() {
  unsigned int me = threadIdx.x, next = (me + 1) % blockDim.x;
  threadIdx.x = next;
  swapcontext(&thread_ctx[me], &thread_ctx[next]);
}
#define __global__
#define __device__
#define __shared__ static

// atomicAdd as a plain read-modify-write, which is atomic here: a thread
// gives up its turn only inside __syncthreads (elementwise kernels run
// each thread to its end before the next starts; row kernels switch
// coroutines at barriers alone), so no other thread runs between the
// read and the write. On the device the order of the additions into one
// element is unspecified; here it is the threads' order.
template <typename T>
static T atomicAdd(T* address, T val) {
  T old = *address;
  *address = old + val;
  return old;
}

#include "../kernels/common.cu"
#include "../kernels/adam.cu"
#include "../kernels/conv.cu"
#include "../kernels/elementwise.cu"
#include "../kernels/indexing.cu"
#include "../kernels/math.cu"
#include "../kernels/reduce.cu"
#include "../kernels/softmax.cu"
// The fused recurrent cells and the special functions (CELL below).
#include "../kernels/rnn.cu"
#include "../kernels/special.cu"

// The kernels' signatures: PTR2 (long long, 2 pointers) serves unary maps
// and non_finite, INDEX (long long, 3 pointers, 3 long longs) gather and
// scatter_add, GEOM2 and GEOM3 (long long, 2 or 3 pointers, Geom) the
// convolution and pooling kernels, OPT32 and OPT64 (long long, 5
// pointers, 8 scalars) the optimisers' updates.
enum Kind { PTR2, BINARY, COPY, SCALAR32, SCALAR64, FILL32, FILL64, INDEX, ROW2, ROW3, OPT32, OPT64, GEOM2, GEOM3 };
// The kinds of kernels/math.cu and reduce.cu: PARAM (long long, 2
// pointers, 2 scalars), PBIN (a binary kernel's arguments and a scalar),
// WHERE (long long, 4 pointers, Strides3), ROWV (a row kernel's and a
// long long: variance_last).
static const Kind PARAM32 = Kind(GEOM3 + 1), PARAM64 = Kind(GEOM3 + 2), PBIN32 = Kind(GEOM3 + 3),
                  PBIN64 = Kind(GEOM3 + 4), WHERE = Kind(GEOM3 + 5), ROWV = Kind(GEOM3 + 6);
// CELL: the cells of kernels/rnn.cu (2 long longs, 5 pointers, 4 long longs).
// GPD, GPI: gamma_p_deriv (long long, 3 pointers, 2 long longs) and
// gamma_p_inv (long long, 4 pointers) of kernels/special.cu.
static const Kind CELL = Kind(GEOM3 + 32), GPD = Kind(GEOM3 + 33), GPI = Kind(GEOM3 + 34);
struct Kernel {
  const char* name;
  Kind kind;
  void* fn;
};

#define PAIR(name, kind) {#name "_f32", kind, (void*)name##_f32}, {#name "_f64", kind, (void*)name##_f64}
static const Kernel kernel_table[] = {
    PAIR(neg, PTR2), PAIR(exp, PTR2), PAIR(log, PTR2), PAIR(tanh, PTR2),
    PAIR(relu, PTR2), PAIR(sigmoid, PTR2), PAIR(gelu, PTR2), PAIR(square, PTR2), PAIR(sqrt, PTR2),
    PAIR(abs, PTR2), PAIR(reciprocal, PTR2), PAIR(log1p, PTR2), PAIR(expm1, PTR2), PAIR(softplus, PTR2), PAIR(non_finite, PTR2), PAIR(cast, PTR2),
    PAIR(add, BINARY), PAIR(sub, BINARY), PAIR(mul, BINARY), PAIR(div, BINARY),
    PAIR(relu_grad, BINARY), PAIR(gelu_grad, BINARY), PAIR(sigmoid_grad, BINARY), PAIR(tanh_grad, BINARY),
    PAIR(sign, PTR2), PAIR(sin, PTR2), PAIR(cos, PTR2), PAIR(erf, PTR2), PAIR(lgamma, PTR2), PAIR(digamma, PTR2),
    PAIR(pow, BINARY), PAIR(maximum, BINARY), PAIR(minimum, BINARY), PAIR(xlogy, BINARY), PAIR(equal, BINARY),
    PAIR(not_equal, BINARY), PAIR(less, BINARY), PAIR(less_equal, BINARY), PAIR(greater, BINARY),
    PAIR(greater_equal, BINARY), PAIR(copy_strided, COPY), PAIR(where, WHERE),
    PAIR(max_last, ROW2), PAIR(min_last, ROW2), PAIR(prod_last, ROW2), PAIR(logsumexp_last, ROW2),
    PAIR(variance_last, ROWV),
    {"pow_scalar_f32", PARAM32, (void*)pow_scalar_f32}, {"pow_scalar_f64", PARAM64, (void*)pow_scalar_f64},
    {"leaky_relu_f32", PARAM32, (void*)leaky_relu_f32}, {"leaky_relu_f64", PARAM64, (void*)leaky_relu_f64},
    {"elu_f32", PARAM32, (void*)elu_f32}, {"elu_f64", PARAM64, (void*)elu_f64},
    {"clamp_f32", PARAM32, (void*)clamp_f32}, {"clamp_f64", PARAM64, (void*)clamp_f64},
    {"leaky_relu_grad_f32", PBIN32, (void*)leaky_relu_grad_f32},
    {"leaky_relu_grad_f64", PBIN64, (void*)leaky_relu_grad_f64},
    PAIR(softmax, ROW2), PAIR(log_softmax, ROW2), PAIR(sum_last, ROW2),
    PAIR(softmax_grad, ROW3), PAIR(log_softmax_grad, ROW3),
    {"adam_f32", OPT32, (void*)adam_f32}, {"adam_f64", OPT64, (void*)adam_f64},
    {"sgd_f32", OPT32, (void*)sgd_f32}, {"sgd_f64", OPT64, (void*)sgd_f64},
    {"rmsprop_f32", OPT32, (void*)rmsprop_f32}, {"rmsprop_f64", OPT64, (void*)rmsprop_f64},
    {"adagrad_f32", OPT32, (void*)adagrad_f32}, {"adagrad_f64", OPT64, (void*)adagrad_f64},
    {"add_scalar_f32", SCALAR32, (void*)add_scalar_f32}, {"add_scalar_f64", SCALAR64, (void*)add_scalar_f64},
    {"mul_scalar_f32", SCALAR32, (void*)mul_scalar_f32}, {"mul_scalar_f64", SCALAR64, (void*)mul_scalar_f64},
    {"fill_f32", FILL32, (void*)fill_f32}, {"fill_f64", FILL64, (void*)fill_f64},
    PAIR(copy, COPY), PAIR(gather, INDEX), PAIR(scatter_add, INDEX),
    PAIR(im2col, GEOM2), PAIR(col2im, GEOM2), PAIR(avg_pool, GEOM2), PAIR(avg_pool_grad, GEOM2),
    PAIR(max_pool, GEOM3), PAIR(max_pool_grad, GEOM3),
    // kernels/rnn.cu and special.cu
    PAIR(lstm_cell, CELL), PAIR(lstm_cell_grad, CELL), PAIR(gru_cell, CELL), PAIR(gru_cell_grad, CELL),
    PAIR(log_ndtr, PTR2), PAIR(log_bessel_i0, PTR2), PAIR(bessel_i1_over_i0, PTR2),
    {"polygamma_f32", PARAM32, (void*)polygamma_f32}, {"polygamma_f64", PARAM64, (void*)polygamma_f64},
    PAIR(gamma_p_deriv, GPD), PAIR(gamma_p_inv, GPI),
};

#define MODULE ((void*)0x5678)

extern "C" int cuModuleLoadData(void** m, const void* image) {
  if (current != CTX) return 201;
  if (strncmp((const char*)image, ".version", 8) != 0) return 218;  // CUDA_ERROR_INVALID_PTX
  *m = MODULE;
  return 0;
}
extern "C" int cuModuleUnload(void* m) { return m == MODULE ? 0 : 400; }
extern "C" int cuModuleGetFunction(void** f, void* m, const char* name) {
  if (current != CTX) return 201;
  if (m != MODULE) return 400;
  for (const Kernel& k : kernel_table) {
    if (strcmp(k.name, name) == 0) {
      *f = (void*)&k;
      return 0;
    }
  }
  return 500;  // CUDA_ERROR_NOT_FOUND
}

typedef long long i64;
#define ARG(T, i) (*(T*)params[i])

static void call(const Kernel* k, void** params) {
  switch (k->kind) {
    case PTR2:
      ((void (*)(i64, void*, void*))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2));
      break;
    case COPY:
      ((void (*)(i64, void*, void*, Strides))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(Strides, 3));
      break;
    case PARAM32:
      ((void (*)(i64, void*, void*, float, float))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(float, 3),
                                                        ARG(float, 4));
      break;
    case PARAM64:
      ((void (*)(i64, void*, void*, double, double))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                          ARG(double, 3), ARG(double, 4));
      break;
    case PBIN32:
      ((void (*)(i64, void*, void*, void*, Strides, float))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                                 ARG(void*, 3), ARG(Strides, 4), ARG(float, 5));
      break;
    case PBIN64:
      ((void (*)(i64, void*, void*, void*, Strides, double))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                                  ARG(void*, 3), ARG(Strides, 4), ARG(double, 5));
      break;
    case WHERE:
      ((void (*)(i64, void*, void*, void*, void*, Strides3))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                                  ARG(void*, 3), ARG(void*, 4), ARG(Strides3, 5));
      break;
    case CELL:
      ((void (*)(i64, i64, void*, void*, void*, void*, void*, i64, i64, i64, i64))k->fn)(
          ARG(i64, 0), ARG(i64, 1), ARG(void*, 2), ARG(void*, 3), ARG(void*, 4), ARG(void*, 5), ARG(void*, 6),
          ARG(i64, 7), ARG(i64, 8), ARG(i64, 9), ARG(i64, 10));
      break;
    case GPD:
      ((void (*)(i64, void*, void*, void*, i64, i64))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                            ARG(void*, 3), ARG(i64, 4), ARG(i64, 5));
      break;
    case GPI:
      ((void (*)(i64, void*, void*, void*, void*))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                        ARG(void*, 3), ARG(void*, 4));
      break;
    case ROWV:
      ((void (*)(i64, void*, void*, i64))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(i64, 3));
      break;
    case SCALAR32:
      ((void (*)(i64, void*, void*, float))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(float, 3));
      break;
    case SCALAR64:
      ((void (*)(i64, void*, void*, double))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(double, 3));
      break;
    case FILL32:
      ((void (*)(i64, void*, float))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(float, 2));
      break;
    case FILL64:
      ((void (*)(i64, void*, double))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(double, 2));
      break;
    case INDEX:
      ((void (*)(i64, void*, void*, void*, i64, i64, i64))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                                ARG(void*, 3), ARG(i64, 4), ARG(i64, 5),
                                                                ARG(i64, 6));
      break;
    case GEOM2:
      ((void (*)(i64, void*, void*, Geom))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(Geom, 3));
      break;
    case GEOM3:
      ((void (*)(i64, void*, void*, void*, Geom))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                        ARG(void*, 3), ARG(Geom, 4));
      break;
    case BINARY:
      ((void (*)(i64, void*, void*, void*, Strides))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2),
                                                           ARG(void*, 3), ARG(Strides, 4));
      break;
    case ROW2:
      ((void (*)(i64, void*, void*))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2));
      break;
    case ROW3:
      ((void (*)(i64, void*, void*, void*))k->fn)(ARG(i64, 0), ARG(void*, 1), ARG(void*, 2), ARG(void*, 3));
      break;
    case OPT32:
      ((void (*)(i64, float*, const float*, float*, float*, float*, float, float, float, float,
                 float, float, float, float))k->fn)(
          ARG(i64, 0), ARG(float*, 1), ARG(float*, 2), ARG(float*, 3), ARG(float*, 4),
          ARG(float*, 5), ARG(float, 6), ARG(float, 7), ARG(float, 8), ARG(float, 9),
          ARG(float, 10), ARG(float, 11), ARG(float, 12), ARG(float, 13));
      break;
    case OPT64:
      ((void (*)(i64, double*, const double*, double*, double*, double*, double, double, double,
                 double, double, double, double, double))k->fn)(
          ARG(i64, 0), ARG(double*, 1), ARG(double*, 2), ARG(double*, 3), ARG(double*, 4),
          ARG(double*, 5), ARG(double, 6), ARG(double, 7), ARG(double, 8), ARG(double, 9),
          ARG(double, 10), ARG(double, 11), ARG(double, 12), ARG(double, 13));
      break;
  }
}

static const Kernel* row_kernel;
static void** row_params;

// row_thread runs one thread of the block to its end, then hands over to
// the next thread (which is waiting at its last barrier or not started),
// the last one back to the launcher.
static void row_thread(int t) {
  threadIdx.x = t;
  call(row_kernel, row_params);
  if (t + 1 < BLOCK) {
    threadIdx.x = t + 1;
    setcontext(&thread_ctx[t + 1]);
  }
  setcontext(&sched);
}

static char stacks[BLOCK][1 << 16];

extern "C" int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void* stream,
                              void** params, void** extra) {
  if (current != CTX) return 201;
  if (gx == 0 || gy != 1 || gz != 1 || bx != BLOCK || by != 1 || bz != 1 || extra) return 1;
  const Kernel* k = (const Kernel*)f;
  gridDim = dim3{gx, 1, 1};
  blockDim = dim3{BLOCK, 1, 1};
  if (k->kind != ROW2 && k->kind != ROW3 && k->kind != ROWV) {
    for (unsigned int b = 0; b < gx; b++) {
      for (unsigned int t = 0; t < BLOCK; t++) {
        blockIdx = dim3{b, 0, 0};
        threadIdx = dim3{t, 0, 0};
        call(k, params);
      }
    }
    return 0;
  }
  row_kernel = k;
  row_params = params;
  for (unsigned int b = 0; b < gx; b++) {
    blockIdx = dim3{b, 0, 0};
    for (int t = 0; t < BLOCK; t++) {
      getcontext(&thread_ctx[t]);
      thread_ctx[t].uc_stack.ss_sp = stacks[t];
      thread_ctx[t].uc_stack.ss_size = sizeof stacks[t];
      thread_ctx[t].uc_link = &sched;
      makecontext(&thread_ctx[t], (void (*)())row_thread, 1, t);
    }
    threadIdx.x = 0;
    swapcontext(&sched, &thread_ctx[0]);
  }
  return 0;
}

// ---- NVRTC: "compiles" to a token PTX; a source naming undefined_name fails.
struct Program {
  std::string src, log;
};
static const char fake_ptx[] = ".version 9.0\n.target compute_90\n// fake device\n";

extern "C" int nvrtcVersion(int* major, int* minor) {
  *major = 13;
  *minor = 0;
  return 0;
}
extern "C" int nvrtcGetNumSupportedArchs(int* n) {
  *n = 3;
  return 0;
}
extern "C" int nvrtcGetSupportedArchs(int* a) {
  a[0] = 75, a[1] = 80, a[2] = 90;
  return 0;
}
extern "C" int nvrtcCreateProgram(void** prog, const char* src, const char* name, int nh,
                                  const char* const* headers, const char* const* names) {
  *prog = new Program{src, ""};
  return 0;
}
extern "C" int nvrtcCompileProgram(void* prog, int n, const char* const* opts) {
  Program* p = (Program*)prog;
  bool arch = false, fmad = false;
  for (int i = 0; i < n; i++) {
    arch = arch || strcmp(opts[i], "--gpu-architecture=compute_90") == 0;
    fmad = fmad || strcmp(opts[i], "--fmad=false") == 0;
  }
  if (!arch || !fmad) return 5;  // NVRTC_ERROR_INVALID_OPTION
  if (p->src.find("undefined_name") != std::string::npos) {
    p->log = "prog.cu(1): error: identifier \"undefined_name\" is undefined\n";
    return 6;  // NVRTC_ERROR_COMPILATION
  }
  return 0;
}
extern "C" int nvrtcGetProgramLogSize(void* prog, size_t* n) {
  *n = ((Program*)prog)->log.size() + 1;
  return 0;
}
extern "C" int nvrtcGetProgramLog(void* prog, char* out) {
  strcpy(out, ((Program*)prog)->log.c_str());
  return 0;
}
extern "C" int nvrtcGetPTXSize(void* prog, size_t* n) {
  *n = sizeof fake_ptx;
  return 0;
}
extern "C" int nvrtcGetPTX(void* prog, char* out) {
  memcpy(out, fake_ptx, sizeof fake_ptx);
  return 0;
}
extern "C" int nvrtcDestroyProgram(void** prog) {
  delete (Program*)*prog;
  *prog = 0;
  return 0;
}
extern "C" const char* nvrtcGetErrorString(int r) {
  return r == 6 ? "NVRTC_ERROR_COMPILATION" : r == 5 ? "NVRTC_ERROR_INVALID_OPTION" : "NVRTC_ERROR";
}

// ---- cuBLAS: a naive column-major gemm accumulating in double.
#define HANDLE ((void*)0x9)
extern "C" int cublasCreate_v2(void** h) {
  *h = HANDLE;
  return 0;
}
extern "C" int cublasDestroy_v2(void* h) { return h == HANDLE ? 0 : 1; }
extern "C" int cublasGetVersion_v2(void* h, int* v) {
  *v = 130000;
  return 0;
}
extern "C" int cublasSetStream_v2(void* h, void* stream) { return h == HANDLE && !stream ? 0 : 7; }
// The math mode and the compute type round float32 inputs as the tensor
// cores would: to TF32 (10 explicit mantissa bits) or bfloat16 (7), to
// nearest with ties to even, so the tests' error bounds are exercised.
static int math_mode = 0;
extern "C" int cublasSetMathMode(void* h, int mode) {
  if (mode != 0 && mode != 3) return 7;
  math_mode = mode;
  return 0;
}
static int round_bits = 0;  // mantissa bits dropped from float32 inputs
static float round_input(float x) {
  if (!round_bits || !isfinite(x)) return x;
  uint32_t u;
  memcpy(&u, &x, 4);
  uint32_t half = 1u << (round_bits - 1), lsb = (u >> round_bits) & 1;
  u = (u + half - 1 + lsb) & ~((1u << round_bits) - 1);
  memcpy(&x, &u, 4);
  return x;
}
static double round_input(double x) { return x; }

template <typename T>
static int gemm(void* h, int ta, int tb, int m, int n, int k, const T* alpha, uint64_t a, int lda,
                uint64_t b, int ldb, const T* beta, uint64_t c, int ldc) {
  if (h != HANDLE || current != CTX) return 1;
  const T *A = (const T*)(uintptr_t)a, *B = (const T*)(uintptr_t)b;
  T* C = (T*)(uintptr_t)c;
  if (lda < (ta ? k : m) || ldb < (tb ? n : k) || ldc < m) return 7;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < k; l++)
        s += (double)round_input(ta ? A[l + i * lda] : A[i + l * lda]) *
             round_input(tb ? B[j + l * ldb] : B[l + j * ldb]);
      T prev = *beta == 0 ? 0 : *beta * C[i + j * ldc];
      C[i + j * ldc] = (T)(*alpha * s) + prev;
    }
  return 0;
}
extern "C" int cublasSgemm_v2(void* h, int ta, int tb, int m, int n, int k, const float* alpha,
                              uint64_t a, int lda, uint64_t b, int ldb, const float* beta,
                              uint64_t c, int ldc) {
  round_bits = math_mode == 3 ? 13 : 0;
  int r = gemm<float>(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  round_bits = 0;
  return r;
}
extern "C" int cublasDgemm_v2(void* h, int ta, int tb, int m, int n, int k, const double* alpha,
                              uint64_t a, int lda, uint64_t b, int ldb, const double* beta,
                              uint64_t c, int ldc) {
  return gemm<double>(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Strided batched gemm: batch calls of gemm, the matrices stride elements
// apart.
template <typename T>
static int gemm_strided(void* h, int ta, int tb, int m, int n, int k, const T* alpha, uint64_t a,
                        int lda, long long sa, uint64_t b, int ldb, long long sb, const T* beta,
                        uint64_t c, int ldc, long long sc, int batch) {
  if (batch < 0 || sa < 0 || sb < 0 || sc < 0) return 7;
  for (int i = 0; i < batch; i++) {
    int r = gemm<T>(h, ta, tb, m, n, k, alpha, a + i * sa * sizeof(T), lda, b + i * sb * sizeof(T),
                    ldb, beta, c + i * sc * sizeof(T), ldc);
    if (r) return r;
  }
  return 0;
}
extern "C" int cublasSgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k,
                                         const float* alpha, uint64_t a, int lda, long long sa,
                                         uint64_t b, int ldb, long long sb, const float* beta,
                                         uint64_t c, int ldc, long long sc, int batch) {
  round_bits = math_mode == 3 ? 13 : 0;
  int r = gemm_strided<float>(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  round_bits = 0;
  return r;
}

// cublasGemmEx and cublasGemmStridedBatchedEx for float32 matrices
// (CUDA_R_32F = 0) with compute type CUBLAS_COMPUTE_32F (68), _FAST_16BF
// (75) or _FAST_TF32 (77); algo must be CUBLAS_GEMM_DEFAULT (-1).
static int ex_round_bits(int at, int bt, int ct, int compute, int algo) {
  if (at != 0 || bt != 0 || ct != 0 || algo != -1) return -1;
  switch (compute) {
    case 68: return 0;
    case 75: return 16;
    case 77: return 13;
  }
  return -1;
}
extern "C" int cublasGemmEx(void* h, int ta, int tb, int m, int n, int k, const float* alpha,
                            uint64_t a, int at, int lda, uint64_t b, int bt, int ldb,
                            const float* beta, uint64_t c, int ct, int ldc, int compute, int algo) {
  int bits = ex_round_bits(at, bt, ct, compute, algo);
  if (bits < 0) return 15;  // CUBLAS_STATUS_NOT_SUPPORTED
  round_bits = bits;
  int r = gemm<float>(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  round_bits = 0;
  return r;
}
extern "C" int cublasGemmStridedBatchedEx(void* h, int ta, int tb, int m, int n, int k,
                                          const float* alpha, uint64_t a, int at, int lda,
                                          long long sa, uint64_t b, int bt, int ldb, long long sb,
                                          const float* beta, uint64_t c, int ct, int ldc,
                                          long long sc, int batch, int compute, int algo) {
  int bits = ex_round_bits(at, bt, ct, compute, algo);
  if (bits < 0) return 15;
  round_bits = bits;
  int r = gemm_strided<float>(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  round_bits = 0;
  return r;
}
extern "C" int cublasDgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k,
                                         const double* alpha, uint64_t a, int lda, long long sa,
                                         uint64_t b, int ldb, long long sb, const double* beta,
                                         uint64_t c, int ldc, long long sc, int batch) {
  return gemm_strided<double>(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

// ---- cuBLAS trsm and trmm, and cuSOLVER (libcusolver.so.12).
#include "fakesolver.cc"

// ---- cuDNN's convolutions (libcudnn.so.9).
#include "fakednn.cc"
