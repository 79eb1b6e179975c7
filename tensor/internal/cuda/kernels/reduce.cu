// Reductions along the last axis of a rows × cols contiguous matrix
// beyond sum_last (softmax.cu): max, min, product, log-sum-exp and
// variance, one BLOCK-thread block per row (grid = rows), each with the
// CPU's special cases (tensor/reduce.go).

// pick_first: the CPU scans a row in order and keeps m unless v > m (max)
// or v < m (min) or v is NaN, so it returns a NaN if the row has one and
// otherwise the first of the extreme values (which matters for ±0). With
// each value's index i along, the scan's result does not depend on the
// order values are combined in: a NaN wins, else the extreme value, else
// (equal values) the lower index. An index of −1 marks an empty slot.
template <typename T, bool IsMax>
__device__ inline void pick_first(T& m, long long& i, T v, long long j) {
  if (j < 0 || m != m) return;
  bool take = i < 0 || v != v || (IsMax ? v > m : v < m) || (v == m && j < i);
  if (take) {
    m = v;
    i = j;
  }
}

template <typename T, bool IsMax>
__device__ void extreme_row(long long cols, T* out, const T* x) {
  __shared__ T sv[BLOCK];
  __shared__ long long si[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  T m = 0;
  long long i = -1;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) pick_first<T, IsMax>(m, i, x[j], j);
  sv[threadIdx.x] = m;
  si[threadIdx.x] = i;
  __syncthreads();
  for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      T a = sv[threadIdx.x];
      long long ia = si[threadIdx.x];
      pick_first<T, IsMax>(a, ia, sv[threadIdx.x + s], si[threadIdx.x + s]);
      sv[threadIdx.x] = a;
      si[threadIdx.x] = ia;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[row] = sv[0];
}

template <typename T> struct Times {
  __device__ T operator()(T a, T b) const { return a * b; }
};

template <typename T>
__device__ void prod_row(long long cols, T* out, const T* x) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  T p = 1;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) p *= x[j];
  p = block_reduce(p, sh, Times<T>());
  if (threadIdx.x == 0) out[row] = p;
}

// logsumexp_row: m + log Σ exp(x − m) with m the row's maximum (NaN if
// the row has a NaN), and m taken as 0 when it is ±Inf, as the CPU does:
// a row of −Inf gives log 0 = −Inf, a +Inf gives +Inf, not Inf − Inf.
template <typename T>
__device__ void logsumexp_row(long long cols, T* out, const T* x) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  T m = x[0];
  for (long long j = threadIdx.x; j < cols; j += BLOCK) m = Max<T>()(m, x[j]);
  m = block_reduce(m, sh, Max<T>());
  if (is_inf(m)) m = 0;
  T s = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) s += math_exp(x[j] - m);
  s = block_reduce(s, sh, Plus<T>());
  if (threadIdx.x == 0) out[row] = m + math_log(s);
}

// variance_row: the corrected two-pass variance of the CPU (Chan, Golub
// and LeVeque, 1983, "Algorithms for computing the sample variance", The
// American Statistician 37(3)): mean = Σx/n, then (Σd² − (Σd)²/n)/(n −
// ddof) with d = x − mean, which cancels the rounding error of the mean
// to first order; NaN when n − ddof ≤ 0.
template <typename T>
__device__ void variance_row(long long cols, T* out, const T* x, long long ddof) {
  __shared__ T sh[BLOCK];
  long long row = blockIdx.x;
  x += row * cols;
  T s = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) s += x[j];
  T mean = block_reduce(s, sh, Plus<T>()) / T(cols);
  T sd = 0, sq = 0;
  for (long long j = threadIdx.x; j < cols; j += BLOCK) {
    T d = x[j] - mean;
    sd += d;
    sq += d * d;
  }
  sd = block_reduce(sd, sh, Plus<T>());
  sq = block_reduce(sq, sh, Plus<T>());
  if (threadIdx.x == 0) out[row] = cols - ddof <= 0 ? quiet_nan<T>() : (sq - sd * sd / T(cols)) / T(cols - ddof);
}

extern "C" __global__ void max_last_f32(long long cols, float* out, const float* x) {
  extreme_row<float, true>(cols, out, x);
}
extern "C" __global__ void max_last_f64(long long cols, double* out, const double* x) {
  extreme_row<double, true>(cols, out, x);
}
extern "C" __global__ void min_last_f32(long long cols, float* out, const float* x) {
  extreme_row<float, false>(cols, out, x);
}
extern "C" __global__ void min_last_f64(long long cols, double* out, const double* x) {
  extreme_row<double, false>(cols, out, x);
}
extern "C" __global__ void prod_last_f32(long long cols, float* out, const float* x) {
  prod_row<float>(cols, out, x);
}
extern "C" __global__ void prod_last_f64(long long cols, double* out, const double* x) {
  prod_row<double>(cols, out, x);
}
extern "C" __global__ void logsumexp_last_f32(long long cols, float* out, const float* x) {
  logsumexp_row<float>(cols, out, x);
}
extern "C" __global__ void logsumexp_last_f64(long long cols, double* out, const double* x) {
  logsumexp_row<double>(cols, out, x);
}
extern "C" __global__ void variance_last_f32(long long cols, float* out, const float* x, long long ddof) {
  variance_row<float>(cols, out, x, ddof);
}
extern "C" __global__ void variance_last_f64(long long cols, double* out, const double* x, long long ddof) {
  variance_row<double>(cols, out, x, ddof);
}
