// Convolution and pooling kernels over contiguous NCHW tensors: im2col and
// its transpose col2im (a convolution is then a GEMM per image and group),
// max pooling with the chosen element's index, average pooling, and their
// gradients. Every backward kernel gathers: one thread per input element
// sums, in a fixed order, the terms that reach it, so there are no atomics
// and the results do not depend on the scheduling.

// Geom is a resolved window geometry (ConvGeom on the host): input
// (n, c, h, w), window kh × kw, output ho × wo, strides, padding,
// dilation.
struct Geom {
  long long n, c, h, w, kh, kw, ho, wo, sh, sw, ph, pw, dh, dw;
};

// im2col_map: i runs over cols (n, c·kh·kw, ho·wo);
// cols[n][(c·kh+i)·kw+j][oh·wo+ow] = x[n][c][oh·sh−ph+i·dh][ow·sw−pw+j·dw],
// 0 outside the image.
template <typename T>
__device__ void im2col_map(long long n, T* cols, const T* x, Geom g) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i;
    long long ow = r % g.wo;
    r /= g.wo;
    long long oh = r % g.ho;
    r /= g.ho;
    long long kj = r % g.kw;
    r /= g.kw;
    long long ki = r % g.kh;
    long long nc = r / g.kh;  // image·c + channel
    long long ih = oh * g.sh - g.ph + ki * g.dh, iw = ow * g.sw - g.pw + kj * g.dw;
    cols[i] = (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) ? x[(nc * g.h + ih) * g.w + iw] : T(0);
  }
}

// col2im_map: i runs over dx (n, c, h, w); dx[i] is the sum, over the taps
// (ki, kj) in order, of the cols entry that read x at i, if any: tap ki
// reads row h at output row oh = (h + ph − ki·dh)/sh when that divides
// exactly and 0 ≤ oh < ho.
template <typename T>
__device__ void col2im_map(long long n, T* dx, const T* cols, Geom g) {
  long long howo = g.ho * g.wo;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long w = i % g.w, r = i / g.w;
    long long h = r % g.h, nc = r / g.h;
    T s = T(0);
    for (long long ki = 0; ki < g.kh; ki++) {
      long long th = h + g.ph - ki * g.dh;
      if (th < 0) break;  // th falls as ki grows
      if (th % g.sh != 0 || th / g.sh >= g.ho) continue;
      long long oh = th / g.sh;
      for (long long kj = 0; kj < g.kw; kj++) {
        long long tw = w + g.pw - kj * g.dw;
        if (tw < 0) break;
        if (tw % g.sw != 0 || tw / g.sw >= g.wo) continue;
        s += cols[((nc * g.kh + ki) * g.kw + kj) * howo + oh * g.wo + tw / g.sw];
      }
    }
    dx[i] = s;
  }
}

// max_pool_map: i runs over y (n, c, ho, wo). The window is clipped to the
// image (padding never wins) and scanned row by row; an element replaces
// the best so far if it is greater, or if it is NaN and the best is not:
// the first maximum, or the first NaN, as tensor's maxPool picks it. idx
// gets its flat index h·w + w within the (n, c) plane.
template <typename T>
__device__ void max_pool_map(long long n, T* y, int* idx, const T* x, Geom g) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long ow = i % g.wo, r = i / g.wo;
    long long oh = r % g.ho, nc = r / g.ho;
    long long h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    long long h1 = h0 + g.kh < g.h ? h0 + g.kh : g.h, w1 = w0 + g.kw < g.w ? w0 + g.kw : g.w;
    h0 = h0 > 0 ? h0 : 0;
    w0 = w0 > 0 ? w0 : 0;
    const T* p = x + nc * g.h * g.w;
    long long at = h0 * g.w + w0;
    T best = p[at];
    for (long long ih = h0; ih < h1; ih++) {
      for (long long iw = w0; iw < w1; iw++) {
        T v = p[ih * g.w + iw];
        if (v > best || (v != v && best == best)) {
          best = v;
          at = ih * g.w + iw;
        }
      }
    }
    y[i] = best;
    idx[i] = (int)at;
  }
}

// out_range sets [o0, o1] to the output positions along one axis whose
// windows (size k, stride s, padding p) cover input position t; empty when
// o0 > o1.
__device__ inline void out_range(long long t, long long k, long long s, long long p, long long nout,
                                 long long* o0, long long* o1) {
  long long lo = t + p - k + 1, hi = (t + p) / s;
  *o0 = lo <= 0 ? 0 : (lo + s - 1) / s;
  *o1 = hi < nout - 1 ? hi : nout - 1;
}

// max_pool_grad_map: i runs over dx (n, c, h, w); dx[i] is the sum, over
// the outputs whose window covers i, in row-major output order, of dy
// where idx chose i: the order in which tensor's MaxPool2DGrad adds them.
template <typename T>
__device__ void max_pool_grad_map(long long n, T* dx, const T* dy, const int* idx, Geom g) {
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long w = i % g.w, r = i / g.w;
    long long h = r % g.h, nc = r / g.h;
    long long oh0, oh1, ow0, ow1;
    out_range(h, g.kh, g.sh, g.ph, g.ho, &oh0, &oh1);
    out_range(w, g.kw, g.sw, g.pw, g.wo, &ow0, &ow1);
    long long base = nc * g.ho * g.wo, self = h * g.w + w;
    T s = T(0);
    for (long long oh = oh0; oh <= oh1; oh++) {
      for (long long ow = ow0; ow <= ow1; ow++) {
        long long o = base + oh * g.wo + ow;
        if (idx[o] == self) s += dy[o];
      }
    }
    dx[i] = s;
  }
}

// avg_pool_map: i runs over y; the sum of the window clipped to the image,
// row by row, times 1/(kh·kw): padding counts as zeros, as in tensor's
// avgPool (PyTorch's count_include_pad=True).
template <typename T>
__device__ void avg_pool_map(long long n, T* y, const T* x, Geom g) {
  T inv = T(1) / T(g.kh * g.kw);
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long ow = i % g.wo, r = i / g.wo;
    long long oh = r % g.ho, nc = r / g.ho;
    long long h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    long long h1 = h0 + g.kh < g.h ? h0 + g.kh : g.h, w1 = w0 + g.kw < g.w ? w0 + g.kw : g.w;
    h0 = h0 > 0 ? h0 : 0;
    w0 = w0 > 0 ? w0 : 0;
    const T* p = x + nc * g.h * g.w;
    T s = T(0);
    for (long long ih = h0; ih < h1; ih++) {
      for (long long iw = w0; iw < w1; iw++) s += p[ih * g.w + iw];
    }
    y[i] = s * inv;
  }
}

// avg_pool_grad_map: i runs over dx; the sum of dy·(1/(kh·kw)) over the
// windows covering i, in row-major output order, as tensor's avgPoolGrad
// adds them.
template <typename T>
__device__ void avg_pool_grad_map(long long n, T* dx, const T* dy, Geom g) {
  T inv = T(1) / T(g.kh * g.kw);
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long w = i % g.w, r = i / g.w;
    long long h = r % g.h, nc = r / g.h;
    long long oh0, oh1, ow0, ow1;
    out_range(h, g.kh, g.sh, g.ph, g.ho, &oh0, &oh1);
    out_range(w, g.kw, g.sw, g.pw, g.wo, &ow0, &ow1);
    const T* d = dy + nc * g.ho * g.wo;
    T s = T(0);
    for (long long oh = oh0; oh <= oh1; oh++) {
      for (long long ow = ow0; ow <= ow1; ow++) s += d[oh * g.wo + ow] * inv;
    }
    dx[i] = s;
  }
}

#define GEOM_KERNELS(T, sfx)                                                                  \
  extern "C" __global__ void im2col_##sfx(long long n, T* cols, const T* x, Geom g) {         \
    im2col_map<T>(n, cols, x, g);                                                             \
  }                                                                                           \
  extern "C" __global__ void col2im_##sfx(long long n, T* dx, const T* cols, Geom g) {        \
    col2im_map<T>(n, dx, cols, g);                                                            \
  }                                                                                           \
  extern "C" __global__ void max_pool_##sfx(long long n, T* y, int* idx, const T* x, Geom g) { \
    max_pool_map<T>(n, y, idx, x, g);                                                         \
  }                                                                                           \
  extern "C" __global__ void max_pool_grad_##sfx(long long n, T* dx, const T* dy,             \
                                                 const int* idx, Geom g) {                    \
    max_pool_grad_map<T>(n, dx, dy, idx, g);                                                  \
  }                                                                                           \
  extern "C" __global__ void avg_pool_##sfx(long long n, T* y, const T* x, Geom g) {          \
    avg_pool_map<T>(n, y, x, g);                                                              \
  }                                                                                           \
  extern "C" __global__ void avg_pool_grad_##sfx(long long n, T* dx, const T* dy, Geom g) {   \
    avg_pool_grad_map<T>(n, dx, dy, g);                                                       \
  }

GEOM_KERNELS(float, f32)
GEOM_KERNELS(double, f64)
