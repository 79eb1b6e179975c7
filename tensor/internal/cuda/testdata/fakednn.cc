// The fake device's cuDNN (libcudnn.so.9 through a symlink): the legacy
// convolution API in naive loops accumulating in double, following the
// definitions of cuDNN's API reference (cross-correlation of NCHW float32
// tensors, groups, padding, strides and dilation). Included by
// fakedevice.cc. Arguments a binding could pass in the wrong order or
// with the wrong enum are checked and answered with CUDNN_STATUS_BAD_PARAM
// (2000) or _NOT_SUPPORTED (3000), cuDNN 9's codes.

enum { DNN_OK = 0, DNN_NOT_INITIALIZED = 1001, DNN_BAD_PARAM = 2000, DNN_NOT_SUPPORTED = 3000 };
#define DNN_HANDLE ((void*)0x11)

struct FakeTensor4d {
  int set, n, c, h, w;
  int filter;  // made by cudnnCreateFilterDescriptor
};
struct FakeConv2d {
  int set, ph, pw, sh, sw, dh, dw, groups, math;
};

extern "C" int cudnnCreate(void** h) {
  if (current != CTX) return DNN_NOT_INITIALIZED;
  *h = DNN_HANDLE;
  return DNN_OK;
}
extern "C" int cudnnDestroy(void* h) { return h == DNN_HANDLE ? DNN_OK : DNN_BAD_PARAM; }
extern "C" size_t cudnnGetVersion(void) { return 91000; }
extern "C" const char* cudnnGetErrorString(int s) {
  switch (s) {
    case DNN_OK: return "CUDNN_STATUS_SUCCESS";
    case DNN_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case DNN_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case DNN_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
  }
  return "CUDNN_STATUS_UNKNOWN";
}
extern "C" int cudnnSetStream(void* h, void* stream) {
  return h == DNN_HANDLE && !stream ? DNN_OK : DNN_BAD_PARAM;
}

// Tensors and filters share one descriptor shape: (n, c, h, w) or (k, c,
// kh, kw). Only NCHW (0) float32 (0) is served.
template <typename D>
static int create_desc(void** d) {
  *d = new D();
  return DNN_OK;
}
extern "C" int cudnnCreateTensorDescriptor(void** d) { return create_desc<FakeTensor4d>(d); }
extern "C" int cudnnCreateFilterDescriptor(void** d) {
  create_desc<FakeTensor4d>(d);
  ((FakeTensor4d*)*d)->filter = 1;
  return DNN_OK;
}
extern "C" int cudnnCreateConvolutionDescriptor(void** d) { return create_desc<FakeConv2d>(d); }
extern "C" int cudnnDestroyTensorDescriptor(void* d) { delete (FakeTensor4d*)d; return DNN_OK; }
extern "C" int cudnnDestroyFilterDescriptor(void* d) { delete (FakeTensor4d*)d; return DNN_OK; }
extern "C" int cudnnDestroyConvolutionDescriptor(void* d) { delete (FakeConv2d*)d; return DNN_OK; }

static int set4d(FakeTensor4d* d, int filter, int format, int dt, int n, int c, int h, int w) {
  if (!d || d->filter != filter || n <= 0 || c <= 0 || h <= 0 || w <= 0) return DNN_BAD_PARAM;
  if (format != 0 || dt != 0) return DNN_NOT_SUPPORTED;
  *d = FakeTensor4d{1, n, c, h, w, filter};
  return DNN_OK;
}
extern "C" int cudnnSetTensor4dDescriptor(void* d, int format, int dt, int n, int c, int h, int w) {
  return set4d((FakeTensor4d*)d, 0, format, dt, n, c, h, w);
}
extern "C" int cudnnSetFilter4dDescriptor(void* d, int dt, int format, int k, int c, int h, int w) {
  return set4d((FakeTensor4d*)d, 1, format, dt, k, c, h, w);
}
extern "C" int cudnnSetConvolution2dDescriptor(void* d, int ph, int pw, int sh, int sw, int dh, int dw,
                                               int mode, int compute) {
  FakeConv2d* c = (FakeConv2d*)d;
  if (!c || ph < 0 || pw < 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0) return DNN_BAD_PARAM;
  if (mode != 1 || compute != 0) return DNN_NOT_SUPPORTED;  // cross-correlation in float32 only
  *c = FakeConv2d{1, ph, pw, sh, sw, dh, dw, 1, 0};
  return DNN_OK;
}
extern "C" int cudnnSetConvolutionGroupCount(void* d, int groups) {
  FakeConv2d* c = (FakeConv2d*)d;
  if (!c || !c->set || groups <= 0) return DNN_BAD_PARAM;
  c->groups = groups;
  return DNN_OK;
}
extern "C" int cudnnSetConvolutionMathType(void* d, int math) {
  FakeConv2d* c = (FakeConv2d*)d;
  if (!c || !c->set || math < 0 || math > 3) return DNN_BAD_PARAM;
  c->math = math;
  return DNN_OK;
}

// conv_check checks that x, w and y are one convolution's tensors under
// c, as cuDNN does before computing, and returns the groups' sizes.
static int conv_check(void* h, const FakeTensor4d* x, const FakeTensor4d* w, const FakeConv2d* c,
                      const FakeTensor4d* y, int algo) {
  if (h != DNN_HANDLE || current != CTX) return DNN_NOT_INITIALIZED;
  if (!x || !w || !c || !y || !x->set || !w->set || !c->set || !y->set) return DNN_BAD_PARAM;
  if (x->filter || y->filter || !w->filter) return DNN_BAD_PARAM;  // a descriptor of the wrong kind
  if (algo != 1) return DNN_NOT_SUPPORTED;  // the algorithms the binding uses
  int g = c->groups;
  if (x->c % g || w->n % g || w->c != x->c / g || y->n != x->n || y->c != w->n) return DNN_BAD_PARAM;
  int ho = (x->h + 2 * c->ph - c->dh * (w->h - 1) - 1) / c->sh + 1;
  int wo = (x->w + 2 * c->pw - c->dw * (w->w - 1) - 1) / c->sw + 1;
  if (y->h != ho || y->w != wo) return DNN_BAD_PARAM;
  return DNN_OK;
}

// The fake's forward algorithm, like an algorithm of a real cuDNN that
// lacks a case, does not serve dilated grouped convolutions: the
// binding's fallback to the kernels is exercised on them.
static bool fwd_unsupported(const FakeConv2d* c) { return c->groups > 1 && (c->dh > 1 || c->dw > 1); }

// The workspace each call asks for: nonzero, so that the binding's
// workspace is exercised (and checked for at least this size).
static size_t conv_workspace(const FakeTensor4d* x) { return 256 + 4 * (size_t)x->c; }

extern "C" int cudnnGetConvolutionForwardWorkspaceSize(void* h, void* x, void* w, void* c, void* y,
                                                       int algo, size_t* bytes) {
  int s = conv_check(h, (FakeTensor4d*)x, (FakeTensor4d*)w, (FakeConv2d*)c, (FakeTensor4d*)y, algo);
  if (s == DNN_OK && fwd_unsupported((FakeConv2d*)c)) return DNN_NOT_SUPPORTED;
  if (s == DNN_OK) *bytes = conv_workspace((FakeTensor4d*)x);
  return s;
}
extern "C" int cudnnGetConvolutionBackwardDataWorkspaceSize(void* h, void* w, void* dy, void* c,
                                                            void* dx, int algo, size_t* bytes) {
  int s = conv_check(h, (FakeTensor4d*)dx, (FakeTensor4d*)w, (FakeConv2d*)c, (FakeTensor4d*)dy, algo);
  if (s == DNN_OK) *bytes = conv_workspace((FakeTensor4d*)dx);
  return s;
}
extern "C" int cudnnGetConvolutionBackwardFilterWorkspaceSize(void* h, void* x, void* dy, void* c,
                                                              void* dw, int algo, size_t* bytes) {
  int s = conv_check(h, (FakeTensor4d*)x, (FakeTensor4d*)dw, (FakeConv2d*)c, (FakeTensor4d*)dy, algo);
  if (s == DNN_OK) *bytes = conv_workspace((FakeTensor4d*)x);
  return s;
}

// conv_loop calls f(xi, wi, yi) for every (input, filter, output) triple
// of the convolution that multiplies: y[yi] += x[xi]·w[wi].
template <typename F>
static void conv_loop(const FakeTensor4d* x, const FakeTensor4d* w, const FakeConv2d* c,
                      const FakeTensor4d* y, F f) {
  int kg = w->n / c->groups, cg = w->c;
  for (int n = 0; n < y->n; n++)
    for (int k = 0; k < y->c; k++)
      for (int oh = 0; oh < y->h; oh++)
        for (int ow = 0; ow < y->w; ow++) {
          long yi = (((long)n * y->c + k) * y->h + oh) * y->w + ow;
          for (int ci = 0; ci < cg; ci++) {
            int xc = k / kg * cg + ci;
            for (int i = 0; i < w->h; i++) {
              int ih = oh * c->sh - c->ph + i * c->dh;
              if (ih < 0 || ih >= x->h) continue;
              for (int j = 0; j < w->w; j++) {
                int iw = ow * c->sw - c->pw + j * c->dw;
                if (iw < 0 || iw >= x->w) continue;
                long xi = (((long)n * x->c + xc) * x->h + ih) * x->w + iw;
                long wi = (((long)k * w->c + ci) * w->h + i) * w->w + j;
                f(xi, wi, yi);
              }
            }
          }
        }
}

// conv_run checks the call, then accumulates into a double array of the
// output's size with acc, and writes out = alpha·acc + beta·out.
template <typename F>
static int conv_run(void* h, const float* alpha, const FakeTensor4d* x, const FakeTensor4d* w,
                    const FakeConv2d* c, const FakeTensor4d* y, int algo, uint64_t ws, size_t wsBytes,
                    const float* beta, const FakeTensor4d* o, uint64_t out, F acc) {
  int s = conv_check(h, x, w, c, y, algo);
  if (s != DNN_OK) return s;
  if (wsBytes < conv_workspace(x) || !ws) return DNN_BAD_PARAM;
  // The binding asks for FMA (3) or TF32 (1) math, never the default
  // (TF32 allowed silently) or FP16 conversion (2).
  if (c->math != 1 && c->math != 3) return DNN_BAD_PARAM;
  long n = (long)o->n * o->c * o->h * o->w;
  double* sum = new double[n]();
  round_bits = c->math == 1 ? 13 : 0;  // TF32
  conv_loop(x, w, c, y, [&](long xi, long wi, long yi) { acc(sum, xi, wi, yi); });
  round_bits = 0;
  float* O = (float*)(uintptr_t)out;
  for (long i = 0; i < n; i++) O[i] = (float)(*alpha * sum[i]) + (*beta == 0 ? 0 : *beta * O[i]);
  delete[] sum;
  return DNN_OK;
}

extern "C" int cudnnConvolutionForward(void* h, const float* alpha, void* xd, uint64_t x, void* wd,
                                       uint64_t w, void* cd, int algo, uint64_t ws, size_t wsBytes,
                                       const float* beta, void* yd, uint64_t y) {
  const float *X = (const float*)(uintptr_t)x, *W = (const float*)(uintptr_t)w;
  if (cd && fwd_unsupported((FakeConv2d*)cd)) return DNN_NOT_SUPPORTED;
  return conv_run(h, alpha, (FakeTensor4d*)xd, (FakeTensor4d*)wd, (FakeConv2d*)cd, (FakeTensor4d*)yd,
                  algo, ws, wsBytes, beta, (FakeTensor4d*)yd, y, [&](double* s, long xi, long wi, long yi) {
                    s[yi] += (double)round_input(X[xi]) * round_input(W[wi]);
                  });
}
extern "C" int cudnnConvolutionBackwardData(void* h, const float* alpha, void* wd, uint64_t w,
                                            void* dyd, uint64_t dy, void* cd, int algo, uint64_t ws,
                                            size_t wsBytes, const float* beta, void* dxd, uint64_t dx) {
  const float *W = (const float*)(uintptr_t)w, *DY = (const float*)(uintptr_t)dy;
  return conv_run(h, alpha, (FakeTensor4d*)dxd, (FakeTensor4d*)wd, (FakeConv2d*)cd, (FakeTensor4d*)dyd,
                  algo, ws, wsBytes, beta, (FakeTensor4d*)dxd, dx, [&](double* s, long xi, long wi, long yi) {
                    s[xi] += (double)round_input(DY[yi]) * round_input(W[wi]);
                  });
}
extern "C" int cudnnConvolutionBackwardFilter(void* h, const float* alpha, void* xd, uint64_t x,
                                              void* dyd, uint64_t dy, void* cd, int algo, uint64_t ws,
                                              size_t wsBytes, const float* beta, void* dwd, uint64_t dw) {
  const float *X = (const float*)(uintptr_t)x, *DY = (const float*)(uintptr_t)dy;
  return conv_run(h, alpha, (FakeTensor4d*)xd, (FakeTensor4d*)dwd, (FakeConv2d*)cd, (FakeTensor4d*)dyd,
                  algo, ws, wsBytes, beta, (FakeTensor4d*)dwd, dw, [&](double* s, long xi, long wi, long yi) {
                    s[wi] += (double)round_input(X[xi]) * round_input(DY[yi]);
                  });
}
