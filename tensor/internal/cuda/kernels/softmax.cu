// Row-wise softmax, log-softmax, their vector-Jacobian products and the
// sum along the last axis: one BLOCK-thread block per row of cols
// contiguous elements (grid = rows).

template <typename T>
__device__ void softmax_row(long long cols, T* out, const T* x, bool log_out) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  out += row * cols;
  T m = x[0];
  for (long long j = threadIdx.x; j < cols; j += BLOCK) m = Max<T>()(m, x[j]);
  m = block_reduce(m, sh, Max<T>());
  T s = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) s += math_exp(x[j] - m);
  s = block_reduce(s, sh, Plus<T>());
  if (log_out) {
    T ls = math_log(s);
    for (long long j = threadIdx.x; j < cols; j += BLOCK) out[j] = (x[j] - m) - ls;
  } else {
    for (long long j = threadIdx.x; j < cols; j += BLOCK) out[j] = math_exp(x[j] - m) / s;
  }
}

// softmax_grad_row: out = y ⊙ (v − Σ v⊙y) for y = softmax(x); with
// log_out, y = log_softmax(x) and out = v − exp(y)·Σ v.
template <typename T>
__device__ void softmax_grad_row(long long cols, T* out, const T* y, const T* v, bool log_out) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  y += row * cols;
  v += row * cols;
  out += row * cols;
  T s = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) s += log_out ? v[j] : v[j] * y[j];
  s = block_reduce(s, sh, Plus<T>());
  for (long long j = threadIdx.x; j < cols; j += BLOCK)
    out[j] = log_out ? v[j] - math_exp(y[j]) * s : y[j] * (v[j] - s);
}

template <typename T>
__device__ void sum_row(long long cols, T* out, const T* x) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  T s = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) s += x[j];
  s = block_reduce(s, sh, Plus<T>());
  if (threadIdx.x == 0) out[row] = s;
}

#define ROWWISE(T, sfx)                                                           \
  extern "C" __global__ void softmax_##sfx(long long cols, T* out, const T* x) {  \
    softmax_row<T>(cols, out, x, false);                                          \
  }                                                                               \
  extern "C" __global__ void log_softmax_##sfx(long long cols, T* out, const T* x) { \
    softmax_row<T>(cols, out, x, true);                                           \
  }                                                                               \
  extern "C" __global__ void softmax_grad_##sfx(long long cols, T* out, const T* y, \
                                                const T* v) {                     \
    softmax_grad_row<T>(cols, out, y, v, false);                                  \
  }                                                                               \
  extern "C" __global__ void log_softmax_grad_##sfx(long long cols, T* out,       \
                                                    const T* y, const T* v) {     \
    softmax_grad_row<T>(cols, out, y, v, true);                                   \
  }                                                                               \
  extern "C" __global__ void sum_last_##sfx(long long cols, T* out, const T* x) { \
    sum_row<T>(cols, out, x);                                                     \
  }

ROWWISE(float, f32)
ROWWISE(double, f64)
