// The fused recurrent cells of graph/lstm.go and graph/gru.go: the LSTM
// cell (Hochreiter and Schmidhuber, 1997, "Long short-term memory"; gates
// i, f, g, o in PyTorch's order) and the GRU cell (Cho et al., 2014,
// "Learning phrase representations using RNN encoder-decoder for
// statistical machine translation"; gates r, z, n, the reset gate
// multiplying the recurrent projection of n), each with its
// vector-Jacobian product. One thread per (row, hidden unit) reads that
// unit's gates and state once and writes its outputs, in the operations
// and order of the CPU's kernels (graph/rnn_kernels.go), with the
// elementwise functors of elementwise.cu, so the results are those of the
// GPU's unfused ops.
//
// Every cell kernel takes (rows, h, out, a, b, c, d, sa, sb, sc, sd): out
// is contiguous (rows, W·h) for the op's output width W; operand k starts
// row r at element r·s_k of its pointer and holds its units contiguously
// (graph's views of a step of a sequence have any row stride). The
// forward cells use a, b, c (xp, hp and the state) and ignore d; the
// gradients take a = ct, b = xp, c = hp, d = the state.

template <typename T>
__device__ void lstm_cell(long long rows, long long h, T* out, const T* xp, const T* hp, const T* cs,
                          long long sx, long long sh, long long sc) {
  Sigmoid<T> sig;
  Tanh<T> th;
  long long n = rows * h;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / h, j = i - r * h;
    const T* x = xp + r * sx + j;
    const T* p = hp + r * sh + j;
    T gi = sig(x[0] + p[0]), gf = sig(x[h] + p[h]);
    T gg = th(x[2 * h] + p[2 * h]), go = sig(x[3 * h] + p[3 * h]);
    T t = gf * cs[r * sc + j];
    T c2 = gi * gg;
    c2 = t + c2;
    T* y = out + r * 2 * h + j;
    y[0] = go * th(c2);
    y[h] = c2;
  }
}

// lstm_cell_grad writes [da_i, da_f, da_g, da_o | dc] (rows, 5h) given
// ct = [dh' | dc'] (rows, 2h):
//   e = dc' + tanh_grad(dh'·o, tanh c'),  da_o = sigmoid_grad(dh'·tanh c', a_o),
//   da_i = sigmoid_grad(e·g, a_i),  da_f = sigmoid_grad(e·c, a_f),
//   da_g = tanh_grad(e·i, g),  dc = e·f.
template <typename T>
__device__ void lstm_cell_grad(long long rows, long long h, T* out, const T* ct, const T* xp,
                               const T* hp, const T* cs, long long sv, long long sx, long long sh,
                               long long sc) {
  Sigmoid<T> sig;
  Tanh<T> th;
  SigmoidGrad<T> sg;
  TanhGrad<T> tg;
  long long n = rows * h;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / h, j = i - r * h;
    const T* x = xp + r * sx + j;
    const T* p = hp + r * sh + j;
    T ai = x[0] + p[0], af = x[h] + p[h], ag = x[2 * h] + p[2 * h], ao = x[3 * h] + p[3 * h];
    T gi = sig(ai), gf = sig(af), gg = th(ag), go = sig(ao);
    T c = cs[r * sc + j];
    T t = gf * c;
    T c2 = gi * gg;
    c2 = t + c2;
    T k = th(c2);
    T u = ct[r * sv + j], w = ct[r * sv + h + j];
    T* y = out + r * 5 * h + j;
    T e = w + tg(u * go, k);
    y[3 * h] = sg(u * k, ao);
    y[0] = sg(e * gg, ai);
    y[h] = sg(e * c, af);
    y[2 * h] = tg(e * gi, gg);
    y[4 * h] = e * gf;
  }
}

// gru_cell: r, z = σ(xp_r + hp_r), σ(xp_z + hp_z), n = tanh(xp_n + r·hp_n),
// h' = n + z·(h − n).
template <typename T>
__device__ void gru_cell(long long rows, long long h, T* out, const T* xp, const T* hp, const T* hs,
                         long long sx, long long sh, long long ss) {
  Sigmoid<T> sig;
  Tanh<T> th;
  long long n = rows * h;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / h, j = i - r * h;
    const T* x = xp + r * sx + j;
    const T* p = hp + r * sh + j;
    T gr = sig(x[0] + p[0]), gz = sig(x[h] + p[h]);
    T t = gr * p[2 * h];
    T gn = th(x[2 * h] + t);
    t = hs[r * ss + j] - gn;
    t = gz * t;
    out[i] = gn + t;
  }
}

// gru_cell_grad writes [dxp (3h) | dhp (3h) | dh (h)] (rows, 7h) given
// ct = dh' (rows, h):
//   da_n = tanh_grad(dh' − dh'·z, n),  da_z = sigmoid_grad(dh'·(h − n), a_z),
//   da_r = sigmoid_grad(da_n·hp_n, a_r),  dxp = (da_r, da_z, da_n),
//   dhp = (da_r, da_z, da_n·r),  dh = dh'·z.
template <typename T>
__device__ void gru_cell_grad(long long rows, long long h, T* out, const T* ct, const T* xp,
                              const T* hp, const T* hs, long long sv, long long sx, long long sh,
                              long long ss) {
  Sigmoid<T> sig;
  Tanh<T> th;
  SigmoidGrad<T> sg;
  TanhGrad<T> tg;
  long long n = rows * h;
  for (long long i = first_index(); i < n; i += grid_stride()) {
    long long r = i / h, j = i - r * h;
    const T* x = xp + r * sx + j;
    const T* p = hp + r * sh + j;
    T ar = x[0] + p[0], az = x[h] + p[h];
    T gr = sig(ar), gz = sig(az);
    T t = gr * p[2 * h];
    T gn = th(x[2 * h] + t);
    T u = ct[r * sv + j];
    T* y = out + r * 7 * h + j;
    t = u * gz;
    y[6 * h] = t;
    t = u - t;
    T dn = tg(t, gn);
    t = hs[r * ss + j] - gn;
    t = u * t;
    T dz = sg(t, az);
    T dr = sg(dn * p[2 * h], ar);
    y[0] = dr;
    y[h] = dz;
    y[2 * h] = dn;
    y[3 * h] = dr;
    y[4 * h] = dz;
    y[5 * h] = dn * gr;
  }
}

// The kernels, one signature for all (see above); the forward cells ignore d.
extern "C" __global__ void lstm_cell_f32(long long rows, long long h, float* out, const float* a, const float* b,
    const float* c, const float* d, long long sa, long long sb, long long sc, long long sd) {
  (void)d;
  (void)sd;
  lstm_cell<float>(rows, h, out, a, b, c, sa, sb, sc);
}
extern "C" __global__ void lstm_cell_f64(long long rows, long long h, double* out, const double* a, const double* b,
    const double* c, const double* d, long long sa, long long sb, long long sc, long long sd) {
  (void)d;
  (void)sd;
  lstm_cell<double>(rows, h, out, a, b, c, sa, sb, sc);
}
extern "C" __global__ void lstm_cell_grad_f32(long long rows, long long h, float* out, const float* a, const float* b,
    const float* c, const float* d, long long sa, long long sb, long long sc, long long sd) {
  lstm_cell_grad<float>(rows, h, out, a, b, c, d, sa, sb, sc, sd);
}
extern "C" __global__ void lstm_cell_grad_f64(long long rows, long long h, double* out, const double* a, const double* b,
    const double* c, const double* d, long long sa, long long sb, long long sc, long long sd) {
  lstm_cell_grad<double>(rows, h, out, a, b, c, d, sa, sb, sc, sd);
}
extern "C" __global__ void gru_cell_f32(long long rows, long long h, float* out, const float* a, const float* b,
    const float* c, const float* d, long long sa, long long sb, long long sc, long long sd) {
  (void)d;
  (void)sd;
  gru_cell<float>(rows, h, out, a, b, c, sa, sb, sc);
}
extern "C" __global__ void gru_cell_f64(long long rows, long long h, double* out, const double* a, const double* b,
    const double* c, const double* d, long long sa, long long sb, long long sc, long long sd) {
  (void)d;
  (void)sd;
  gru_cell<double>(rows, h, out, a, b, c, sa, sb, sc);
}
extern "C" __global__ void gru_cell_grad_f32(long long rows, long long h, float* out, const float* a, const float* b,
    const float* c, const float* d, long long sa, long long sb, long long sc, long long sd) {
  gru_cell_grad<float>(rows, h, out, a, b, c, d, sa, sb, sc, sd);
}
extern "C" __global__ void gru_cell_grad_f64(long long rows, long long h, double* out, const double* a, const double* b,
    const double* c, const double* d, long long sa, long long sb, long long sc, long long sd) {
  gru_cell_grad<double>(rows, h, out, a, b, c, d, sa, sb, sc, sd);
}
