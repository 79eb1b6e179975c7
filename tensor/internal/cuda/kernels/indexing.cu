// Layout kernels: a strided (or broadcast) operand copied to contiguous
// memory, and gather and scatter-add along one axis of a tensor seen as
// (outer, axis, inner), with int64 indices the host has checked.

// copy_map sets the contiguous out of shape s.shape to x read with the
// strides s.a (0 repeats x along a dimension); s.b is unused.
template <typename T>
__device__ void copy_map(long long n, T* out, const T* x, Strides s) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i, ix = 0;
    for (int d = (int)s.ndim - 1; d >= 0; d--) {
      long long q = r / s.shape[d];
      ix += (r - q * s.shape[d]) * s.a[d];
      r = q;
    }
    out[i] = x[ix];
  }
}

// gather_map: out is (outer, nidx, inner) and x (outer, axis, inner);
// out[o, k, j] = x[o, idx[k], j], one element per iteration.
template <typename T>
__device__ void gather_map(long long n, T* out, const T* x, const long long* idx,
                           long long nidx, long long axis, long long inner) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / inner, j = i - r * inner, o = r / nidx, k = r - o * nidx;
    out[i] = x[(o * axis + idx[k]) * inner + j];
  }
}

// scatter_add_map: dst is (outer, axis, inner) and src (outer, nidx,
// inner); dst[o, idx[k], j] += src[o, k, j]. Where idx repeats, several
// threads add into one element: atomicAdd makes each addition whole, but
// their order, hence the rounding of the sum, is unspecified (as in
// PyTorch's index_add_ on CUDA).
template <typename T>
__device__ void scatter_add_map(long long n, T* dst, const T* src, const long long* idx,
                                long long nidx, long long axis, long long inner) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / inner, j = i - r * inner, o = r / nidx, k = r - o * nidx;
    atomicAdd(&dst[(o * axis + idx[k]) * inner + j], src[i]);
  }
}

extern "C" __global__ void copy_f32(long long n, float* out, const float* x, Strides s) {
  copy_map<float>(n, out, x, s);
}
extern "C" __global__ void copy_f64(long long n, double* out, const double* x, Strides s) {
  copy_map<double>(n, out, x, s);
}
extern "C" __global__ void gather_f32(long long n, float* out, const float* x, const long long* idx,
                                      long long nidx, long long axis, long long inner) {
  gather_map<float>(n, out, x, idx, nidx, axis, inner);
}
extern "C" __global__ void gather_f64(long long n, double* out, const double* x, const long long* idx,
                                      long long nidx, long long axis, long long inner) {
  gather_map<double>(n, out, x, idx, nidx, axis, inner);
}
extern "C" __global__ void scatter_add_f32(long long n, float* dst, const float* src,
                                           const long long* idx, long long nidx, long long axis,
                                           long long inner) {
  scatter_add_map<float>(n, dst, src, idx, nidx, axis, inner);
}
extern "C" __global__ void scatter_add_f64(long long n, double* dst, const double* src,
                                           const long long* idx, long long nidx, long long axis,
                                           long long inner) {
  scatter_add_map<double>(n, dst, src, idx, nidx, axis, inner);
}
