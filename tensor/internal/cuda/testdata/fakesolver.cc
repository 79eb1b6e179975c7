// The fake device's cuBLAS triangular routines and dense cuSOLVER, naive
// column-major code following the reference BLAS and LAPACK definitions
// (Anderson et al., 1999, LAPACK Users' Guide): trsm, trmm, potrf, getrf
// and getrs. Included by fakedevice.cc, which also serves
// libcusolver.so.12 through a symlink. Argument checks return the
// libraries' INVALID_VALUE (cuBLAS 7, cuSOLVER 3) so that a binding
// passing its arguments in the wrong order fails.

// op(A)(i, j) for the triangular A with the given fill, transpose and
// unit diagonal; zero outside the triangle.
template <typename T>
static double tri_at(const T* A, int lda, int uplo, int trans, int diag, int i, int j) {
  if (trans) {
    int t = i;
    i = j;
    j = t;
  }
  if (i == j) return diag ? 1 : (double)A[i + j * lda];
  bool lower = i > j;
  if (lower != (uplo == 0)) return 0;
  return A[i + j * lda];
}

// trsm: op(A)·X = alpha·B (side 0) or X·op(A) = alpha·B (side 1), X over B.
template <typename T>
static int trsm(void* h, int side, int uplo, int trans, int diag, int m, int n, const T* alpha,
                uint64_t a, int lda, uint64_t b, int ldb) {
  if (h != HANDLE || current != CTX) return 1;
  int na = side ? n : m;
  if (side < 0 || side > 1 || uplo < 0 || uplo > 1 || trans < 0 || trans > 1 || diag < 0 ||
      diag > 1 || m < 0 || n < 0 || lda < (na > 1 ? na : 1) || ldb < (m > 1 ? m : 1))
    return 7;
  const T* A = (const T*)(uintptr_t)a;
  T* B = (T*)(uintptr_t)b;
  // op(A) is lower when the fill and the transpose disagree.
  bool lower = (uplo == 0) != (trans == 1);
  double* x = new double[na];
  int systems = side ? m : n;
  for (int s = 0; s < systems; s++) {
    // side 0: column s of B; side 1: row s of B, solving op(A)ᵀ·xᵀ = bᵀ.
    for (int i = 0; i < na; i++) x[i] = *alpha * (double)(side ? B[s + i * ldb] : B[i + s * ldb]);
    bool low = side ? !lower : lower;
    for (int t = 0; t < na; t++) {
      int i = low ? t : na - 1 - t;
      double v = x[i];
      for (int j = 0; j < na; j++) {
        if (j == i || (low ? j > i : j < i)) continue;
        v -= (side ? tri_at(A, lda, uplo, trans, diag, j, i) : tri_at(A, lda, uplo, trans, diag, i, j)) * x[j];
      }
      x[i] = v / tri_at(A, lda, uplo, trans, diag, i, i);
    }
    for (int i = 0; i < na; i++) (side ? B[s + i * ldb] : B[i + s * ldb]) = (T)x[i];
  }
  delete[] x;
  return 0;
}
extern "C" int cublasStrsm_v2(void* h, int side, int uplo, int trans, int diag, int m, int n,
                              const float* alpha, uint64_t a, int lda, uint64_t b, int ldb) {
  return trsm<float>(h, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}
extern "C" int cublasDtrsm_v2(void* h, int side, int uplo, int trans, int diag, int m, int n,
                              const double* alpha, uint64_t a, int lda, uint64_t b, int ldb) {
  return trsm<double>(h, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}

// trmm: C = alpha·op(A)·B (side 0) or alpha·B·op(A) (side 1).
template <typename T>
static int trmm(void* h, int side, int uplo, int trans, int diag, int m, int n, const T* alpha,
                uint64_t a, int lda, uint64_t b, int ldb, uint64_t c, int ldc) {
  if (h != HANDLE || current != CTX) return 1;
  int na = side ? n : m;
  if (side < 0 || side > 1 || uplo < 0 || uplo > 1 || trans < 0 || trans > 1 || diag < 0 ||
      diag > 1 || m < 0 || n < 0 || lda < (na > 1 ? na : 1) || ldb < (m > 1 ? m : 1) ||
      ldc < (m > 1 ? m : 1))
    return 7;
  const T *A = (const T*)(uintptr_t)a, *B = (const T*)(uintptr_t)b;
  T* C = (T*)(uintptr_t)c;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < na; l++)
        s += side ? (double)B[i + l * ldb] * tri_at(A, lda, uplo, trans, diag, l, j)
                  : tri_at(A, lda, uplo, trans, diag, i, l) * (double)B[l + j * ldb];
      C[i + j * ldc] = (T)(*alpha * s);
    }
  return 0;
}
extern "C" int cublasStrmm_v2(void* h, int side, int uplo, int trans, int diag, int m, int n,
                              const float* alpha, uint64_t a, int lda, uint64_t b, int ldb,
                              uint64_t c, int ldc) {
  return trmm<float>(h, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb, c, ldc);
}
extern "C" int cublasDtrmm_v2(void* h, int side, int uplo, int trans, int diag, int m, int n,
                              const double* alpha, uint64_t a, int lda, uint64_t b, int ldb,
                              uint64_t c, int ldc) {
  return trmm<double>(h, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb, c, ldc);
}

// ---- cuSOLVER dense.
#define SOLVER ((void*)0xa)
extern "C" int cusolverDnCreate(void** h) {
  if (current != CTX) return 1;
  *h = SOLVER;
  return 0;
}
extern "C" int cusolverDnDestroy(void* h) { return h == SOLVER ? 0 : 1; }
extern "C" int cusolverDnSetStream(void* h, void* stream) { return h == SOLVER && !stream ? 0 : 3; }

// Workspaces: n + 1 elements, checked by potrf (getrf takes no size).
static int buffer_size(void* h, int n, int lda, int* lwork) {
  if (h != SOLVER || current != CTX) return 1;
  if (n < 0 || lda < (n > 1 ? n : 1)) return 3;
  *lwork = n + 1;
  return 0;
}
extern "C" int cusolverDnSpotrf_bufferSize(void* h, int uplo, int n, uint64_t a, int lda, int* lwork) {
  return uplo < 0 || uplo > 1 ? 3 : buffer_size(h, n, lda, lwork);
}
extern "C" int cusolverDnDpotrf_bufferSize(void* h, int uplo, int n, uint64_t a, int lda, int* lwork) {
  return uplo < 0 || uplo > 1 ? 3 : buffer_size(h, n, lda, lwork);
}
extern "C" int cusolverDnSgetrf_bufferSize(void* h, int m, int n, uint64_t a, int lda, int* lwork) {
  return m != n ? 3 : buffer_size(h, n, lda, lwork);
}
extern "C" int cusolverDnDgetrf_bufferSize(void* h, int m, int n, uint64_t a, int lda, int* lwork) {
  return m != n ? 3 : buffer_size(h, n, lda, lwork);
}

// potrf: Cholesky–Crout on the lower factor L (uplo 0: A = L·Lᵀ in the
// lower triangle; uplo 1: A = Uᵀ·U in the upper, U = Lᵀ). A non-positive
// pivot is stored on the diagonal and its 1-based order in devInfo.
template <typename T>
static int potrf(void* h, int uplo, int n, uint64_t a, int lda, uint64_t work, int lwork, uint64_t info) {
  if (h != SOLVER || current != CTX) return 1;
  if (uplo < 0 || uplo > 1 || n < 0 || lda < (n > 1 ? n : 1) || !work || lwork < n + 1 || !info) return 3;
  T* A = (T*)(uintptr_t)a;
  int* inf = (int*)(uintptr_t)info;
  auto L = [&](int i, int j) -> T& { return uplo ? A[j + i * lda] : A[i + j * lda]; };
  *inf = 0;
  for (int j = 0; j < n; j++) {
    double d = L(j, j);
    for (int k = 0; k < j; k++) d -= (double)L(j, k) * L(j, k);
    if (!(d > 0)) {
      L(j, j) = (T)d;
      *inf = j + 1;
      return 0;
    }
    double ljj = sqrt(d);
    L(j, j) = (T)ljj;
    for (int i = j + 1; i < n; i++) {
      double s = L(i, j);
      for (int k = 0; k < j; k++) s -= (double)L(i, k) * L(j, k);
      L(i, j) = (T)(s / ljj);
    }
  }
  return 0;
}
extern "C" int cusolverDnSpotrf(void* h, int uplo, int n, uint64_t a, int lda, uint64_t work, int lwork, uint64_t info) {
  return potrf<float>(h, uplo, n, a, lda, work, lwork, info);
}
extern "C" int cusolverDnDpotrf(void* h, int uplo, int n, uint64_t a, int lda, uint64_t work, int lwork, uint64_t info) {
  return potrf<double>(h, uplo, n, a, lda, work, lwork, info);
}

// getrf: P·A = L·U with partial pivoting, row interchanges applied to
// whole rows; ipiv 1-based; devInfo the first exactly zero pivot.
template <typename T>
static int getrf(void* h, int m, int n, uint64_t a, int lda, uint64_t work, uint64_t ipiv, uint64_t info) {
  if (h != SOLVER || current != CTX) return 1;
  if (m != n || n < 0 || lda < (n > 1 ? n : 1) || !work || !ipiv || !info) return 3;
  T* A = (T*)(uintptr_t)a;
  int *piv = (int*)(uintptr_t)ipiv, *inf = (int*)(uintptr_t)info;
  *inf = 0;
  for (int j = 0; j < n; j++) {
    int p = j;
    for (int i = j + 1; i < n; i++)
      if (fabs((double)A[i + j * lda]) > fabs((double)A[p + j * lda])) p = i;
    piv[j] = p + 1;
    if (p != j)
      for (int c = 0; c < n; c++) {
        T t = A[j + c * lda];
        A[j + c * lda] = A[p + c * lda];
        A[p + c * lda] = t;
      }
    T d = A[j + j * lda];
    if (d == 0) {
      if (!*inf) *inf = j + 1;
      continue;
    }
    for (int i = j + 1; i < n; i++) A[i + j * lda] /= d;
    for (int c = j + 1; c < n; c++)
      for (int i = j + 1; i < n; i++) A[i + c * lda] -= A[i + j * lda] * A[j + c * lda];
  }
  return 0;
}
extern "C" int cusolverDnSgetrf(void* h, int m, int n, uint64_t a, int lda, uint64_t work, uint64_t ipiv, uint64_t info) {
  return getrf<float>(h, m, n, a, lda, work, ipiv, info);
}
extern "C" int cusolverDnDgetrf(void* h, int m, int n, uint64_t a, int lda, uint64_t work, uint64_t ipiv, uint64_t info) {
  return getrf<double>(h, m, n, a, lda, work, ipiv, info);
}

// getrs: op(A)·X = B from getrf's factors. A = Pᵀ·L·U, so trans 0 swaps
// B's rows forwards and solves L then U; trans 1 (Aᵀ = Uᵀ·Lᵀ·P) solves Uᵀ
// then Lᵀ and swaps backwards.
template <typename T>
static int getrs(void* h, int trans, int n, int nrhs, uint64_t a, int lda, uint64_t ipiv, uint64_t b, int ldb, uint64_t info) {
  if (h != SOLVER || current != CTX) return 1;
  if (trans < 0 || trans > 1 || n < 0 || nrhs < 0 || lda < (n > 1 ? n : 1) || ldb < (n > 1 ? n : 1) || !ipiv || !info)
    return 3;
  const T* A = (const T*)(uintptr_t)a;
  const int* piv = (const int*)(uintptr_t)ipiv;
  T* B = (T*)(uintptr_t)b;
  *(int*)(uintptr_t)info = 0;
  for (int c = 0; c < nrhs; c++) {
    T* x = B + c * ldb;
    if (!trans) {
      for (int i = 0; i < n; i++) {
        T t = x[i];
        x[i] = x[piv[i] - 1];
        x[piv[i] - 1] = t;
      }
      for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++) x[i] -= A[i + k * lda] * x[k];
      for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++) x[i] -= A[i + k * lda] * x[k];
        x[i] /= A[i + i * lda];
      }
    } else {
      for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++) x[i] -= A[k + i * lda] * x[k];
        x[i] /= A[i + i * lda];
      }
      for (int i = n - 1; i >= 0; i--)
        for (int k = i + 1; k < n; k++) x[i] -= A[k + i * lda] * x[k];
      for (int i = n - 1; i >= 0; i--) {
        T t = x[i];
        x[i] = x[piv[i] - 1];
        x[piv[i] - 1] = t;
      }
    }
  }
  return 0;
}
extern "C" int cusolverDnSgetrs(void* h, int trans, int n, int nrhs, uint64_t a, int lda, uint64_t ipiv, uint64_t b, int ldb, uint64_t info) {
  return getrs<float>(h, trans, n, nrhs, a, lda, ipiv, b, ldb, info);
}
extern "C" int cusolverDnDgetrs(void* h, int trans, int n, int nrhs, uint64_t a, int lda, uint64_t ipiv, uint64_t b, int ldb, uint64_t info) {
  return getrs<double>(h, trans, n, nrhs, a, lda, ipiv, b, ldb, info);
}

// ---- syevd, geqrf, orgqr and gesvd, naive: cyclic Jacobi for the
// eigenproblem and the SVD (one-sided), LAPACK's Householder convention
// (dlarfg: H = I − tau·v·vᵀ, v₀ = 1, beta = −sign(alpha)·‖x‖) for QR.
static int check_ws(void* h, uint64_t work, int lwork, int need, uint64_t info) {
  if (h != SOLVER || current != CTX) return 1;
  return !work || lwork < need || !info ? 3 : 0;
}

// jacobi_eig diagonalises the symmetric n×n s (row-major, double) in
// place, accumulating the rotations into the columns of v.
static void jacobi_eig(int n, double* s, double* v) {
  for (int i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
  for (int sweep = 0; sweep < 100; sweep++) {
    double off = 0;
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) off += s[i * n + j] * s[i * n + j];
    if (off < 1e-300) break;
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) {
        double apq = s[p * n + q];
        if (apq == 0) continue;
        double theta = (s[q * n + q] - s[p * n + p]) / (2 * apq);
        double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), sn = t * c;
        for (int k = 0; k < n; k++) {  // columns p, q
          double a = s[k * n + p], b = s[k * n + q];
          s[k * n + p] = c * a - sn * b;
          s[k * n + q] = sn * a + c * b;
        }
        for (int k = 0; k < n; k++) {  // rows p, q
          double a = s[p * n + k], b = s[q * n + k];
          s[p * n + k] = c * a - sn * b;
          s[q * n + k] = sn * a + c * b;
        }
        for (int k = 0; k < n; k++) {
          double a = v[k * n + p], b = v[k * n + q];
          v[k * n + p] = c * a - sn * b;
          v[k * n + q] = sn * a + c * b;
        }
      }
  }
}

template <typename T>
static int syevd_size(void* h, int jobz, int uplo, int n, int lda, int* lwork) {
  if (jobz < 0 || jobz > 1 || uplo < 0 || uplo > 1) return 3;
  return buffer_size(h, n, lda, lwork);
}
template <typename T>
static int syevd(void* h, int jobz, int uplo, int n, uint64_t a, int lda, uint64_t w, uint64_t work, int lwork, uint64_t info) {
  if (int r = check_ws(h, work, lwork, n + 1, info)) return r;
  if (jobz != 1 || uplo < 0 || uplo > 1 || n < 0 || lda < (n > 1 ? n : 1) || !w) return 3;
  T *A = (T*)(uintptr_t)a, *W = (T*)(uintptr_t)w;
  double *s = new double[n * n], *v = new double[n * n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      bool stored = uplo ? i <= j : i >= j;  // A(i, j) in the given triangle
      s[i * n + j] = stored ? A[i + j * lda] : A[j + i * lda];
    }
  jacobi_eig(n, s, v);
  int* order = new int[n];
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = 1; i < n; i++)  // insertion sort, ascending
    for (int j = i; j > 0 && s[order[j] * (n + 1)] < s[order[j - 1] * (n + 1)]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int c = 0; c < n; c++) {
    W[c] = (T)s[order[c] * (n + 1)];
    for (int r = 0; r < n; r++) A[r + c * lda] = (T)v[r * n + order[c]];
  }
  *(int*)(uintptr_t)info = 0;
  delete[] s;
  delete[] v;
  delete[] order;
  return 0;
}
extern "C" int cusolverDnSsyevd_bufferSize(void* h, int jobz, int uplo, int n, uint64_t a, int lda, uint64_t w, int* lwork) {
  return syevd_size<float>(h, jobz, uplo, n, lda, lwork);
}
extern "C" int cusolverDnDsyevd_bufferSize(void* h, int jobz, int uplo, int n, uint64_t a, int lda, uint64_t w, int* lwork) {
  return syevd_size<double>(h, jobz, uplo, n, lda, lwork);
}
extern "C" int cusolverDnSsyevd(void* h, int jobz, int uplo, int n, uint64_t a, int lda, uint64_t w, uint64_t work, int lwork, uint64_t info) {
  return syevd<float>(h, jobz, uplo, n, a, lda, w, work, lwork, info);
}
extern "C" int cusolverDnDsyevd(void* h, int jobz, int uplo, int n, uint64_t a, int lda, uint64_t w, uint64_t work, int lwork, uint64_t info) {
  return syevd<double>(h, jobz, uplo, n, a, lda, w, work, lwork, info);
}

static int qr_size(void* h, int m, int n, int lda, int* lwork) {
  if (m < 0 || n < 0) return 3;
  return buffer_size(h, m, lda, lwork);  // m + 1
}
extern "C" int cusolverDnSgeqrf_bufferSize(void* h, int m, int n, uint64_t a, int lda, int* lwork) { return qr_size(h, m, n, lda, lwork); }
extern "C" int cusolverDnDgeqrf_bufferSize(void* h, int m, int n, uint64_t a, int lda, int* lwork) { return qr_size(h, m, n, lda, lwork); }
extern "C" int cusolverDnSorgqr_bufferSize(void* h, int m, int n, int k, uint64_t a, int lda, uint64_t tau, int* lwork) {
  return n > m || k > n ? 3 : qr_size(h, m, n, lda, lwork);
}
extern "C" int cusolverDnDorgqr_bufferSize(void* h, int m, int n, int k, uint64_t a, int lda, uint64_t tau, int* lwork) {
  return n > m || k > n ? 3 : qr_size(h, m, n, lda, lwork);
}

template <typename T>
static int geqrf(void* h, int m, int n, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  if (int r = check_ws(h, work, lwork, m + 1, info)) return r;
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || !tau) return 3;
  T *A = (T*)(uintptr_t)a, *tu = (T*)(uintptr_t)tau;
  int k = m < n ? m : n;
  for (int j = 0; j < k; j++) {
    double alpha = A[j + j * lda], xn = 0;
    for (int i = j + 1; i < m; i++) xn += (double)A[i + j * lda] * A[i + j * lda];
    if (xn == 0) {
      tu[j] = 0;
      continue;
    }
    double beta = -(alpha >= 0 ? 1 : -1) * sqrt(alpha * alpha + xn);
    double t = (beta - alpha) / beta, scale = 1 / (alpha - beta);
    for (int i = j + 1; i < m; i++) A[i + j * lda] = (T)(A[i + j * lda] * scale);
    A[j + j * lda] = (T)beta;
    tu[j] = (T)t;
    for (int c = j + 1; c < n; c++) {  // A[j:, c] −= tau·v·(vᵀ·A[j:, c])
      double d = A[j + c * lda];
      for (int i = j + 1; i < m; i++) d += (double)A[i + j * lda] * A[i + c * lda];
      d *= t;
      A[j + c * lda] = (T)(A[j + c * lda] - d);
      for (int i = j + 1; i < m; i++) A[i + c * lda] = (T)(A[i + c * lda] - d * A[i + j * lda]);
    }
  }
  *(int*)(uintptr_t)info = 0;
  return 0;
}
extern "C" int cusolverDnSgeqrf(void* h, int m, int n, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  return geqrf<float>(h, m, n, a, lda, tau, work, lwork, info);
}
extern "C" int cusolverDnDgeqrf(void* h, int m, int n, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  return geqrf<double>(h, m, n, a, lda, tau, work, lwork, info);
}

// orgqr: the first n columns of H₀·H₁·…·H_{k−1}, applied to the identity
// from the last reflector on.
template <typename T>
static int orgqr(void* h, int m, int n, int k, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  if (int r = check_ws(h, work, lwork, m + 1, info)) return r;
  if (m < 0 || n < 0 || n > m || k < 0 || k > n || lda < (m > 1 ? m : 1) || !tau) return 3;
  T *A = (T*)(uintptr_t)a, *tu = (T*)(uintptr_t)tau;
  double *q = new double[m * n], *v = new double[m];
  for (int c = 0; c < n; c++)
    for (int i = 0; i < m; i++) q[i + c * m] = i == c;
  for (int j = k - 1; j >= 0; j--) {
    for (int i = 0; i < m; i++) v[i] = i < j ? 0 : i == j ? 1 : (double)A[i + j * lda];
    for (int c = 0; c < n; c++) {
      double d = 0;
      for (int i = j; i < m; i++) d += v[i] * q[i + c * m];
      d *= tu[j];
      for (int i = j; i < m; i++) q[i + c * m] -= d * v[i];
    }
  }
  for (int c = 0; c < n; c++)
    for (int i = 0; i < m; i++) A[i + c * lda] = (T)q[i + c * m];
  *(int*)(uintptr_t)info = 0;
  delete[] q;
  delete[] v;
  return 0;
}
extern "C" int cusolverDnSorgqr(void* h, int m, int n, int k, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  return orgqr<float>(h, m, n, k, a, lda, tau, work, lwork, info);
}
extern "C" int cusolverDnDorgqr(void* h, int m, int n, int k, uint64_t a, int lda, uint64_t tau, uint64_t work, int lwork, uint64_t info) {
  return orgqr<double>(h, m, n, k, a, lda, tau, work, lwork, info);
}

extern "C" int cusolverDnSgesvd_bufferSize(void* h, int m, int n, int* lwork) { return qr_size(h, m, n, m > 1 ? m : 1, lwork); }
extern "C" int cusolverDnDgesvd_bufferSize(void* h, int m, int n, int* lwork) { return qr_size(h, m, n, m > 1 ? m : 1, lwork); }

// gesvd with jobu = jobvt = 'S' and m ≥ n, as cuSOLVER requires:
// one-sided Jacobi on the columns of A, V accumulating the rotations.
template <typename T>
static int gesvd(void* h, signed char jobu, signed char jobvt, int m, int n, uint64_t a, int lda, uint64_t s, uint64_t u, int ldu,
                 uint64_t vt, int ldvt, uint64_t work, int lwork, uint64_t rwork, uint64_t info) {
  if (int r = check_ws(h, work, lwork, m + 1, info)) return r;
  if (jobu != 'S' || jobvt != 'S' || m < n || n < 0 || lda < (m > 1 ? m : 1) || ldu < (m > 1 ? m : 1) ||
      ldvt < (n > 1 ? n : 1) || !s || !u || !vt || !rwork)
    return 3;
  T *A = (T*)(uintptr_t)a, *S = (T*)(uintptr_t)s, *U = (T*)(uintptr_t)u, *VT = (T*)(uintptr_t)vt;
  double *w = new double[m * n], *v = new double[n * n], *sv = new double[n];
  for (int c = 0; c < n; c++)
    for (int i = 0; i < m; i++) w[i + c * m] = A[i + c * lda];
  for (int i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
  for (int sweep = 0; sweep < 100; sweep++) {
    bool rotated = false;
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) {
        double al = 0, be = 0, ga = 0;
        for (int i = 0; i < m; i++) {
          al += w[i + p * m] * w[i + p * m];
          be += w[i + q * m] * w[i + q * m];
          ga += w[i + p * m] * w[i + q * m];
        }
        if (fabs(ga) <= 1e-17 * sqrt(al * be)) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga);
        double t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double c = 1 / sqrt(1 + t * t), sn = c * t;
        for (int i = 0; i < m; i++) {
          double x = w[i + p * m], y = w[i + q * m];
          w[i + p * m] = c * x - sn * y;
          w[i + q * m] = sn * x + c * y;
        }
        for (int i = 0; i < n; i++) {
          double x = v[i + p * n], y = v[i + q * n];
          v[i + p * n] = c * x - sn * y;
          v[i + q * n] = sn * x + c * y;
        }
      }
    if (!rotated) break;
  }
  int* order = new int[n];
  for (int c = 0; c < n; c++) {
    double nn = 0;
    for (int i = 0; i < m; i++) nn += w[i + c * m] * w[i + c * m];
    sv[c] = sqrt(nn);
    order[c] = c;
  }
  for (int i = 1; i < n; i++)  // descending
    for (int j = i; j > 0 && sv[order[j]] > sv[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int c = 0; c < n; c++) {
    int o = order[c];
    S[c] = (T)sv[o];
    for (int i = 0; i < m; i++) U[i + c * ldu] = (T)(sv[o] > 0 ? w[i + o * m] / sv[o] : 0);
    for (int i = 0; i < n; i++) VT[c + i * ldvt] = (T)v[i + o * n];
  }
  *(int*)(uintptr_t)info = 0;
  delete[] w;
  delete[] v;
  delete[] sv;
  delete[] order;
  return 0;
}
extern "C" int cusolverDnSgesvd(void* h, signed char jobu, signed char jobvt, int m, int n, uint64_t a, int lda, uint64_t s, uint64_t u,
                                int ldu, uint64_t vt, int ldvt, uint64_t work, int lwork, uint64_t rwork, uint64_t info) {
  return gesvd<float>(h, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info);
}
extern "C" int cusolverDnDgesvd(void* h, signed char jobu, signed char jobvt, int m, int n, uint64_t a, int lda, uint64_t s, uint64_t u,
                                int ldu, uint64_t vt, int ldvt, uint64_t work, int lwork, uint64_t rwork, uint64_t info) {
  return gesvd<double>(h, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info);
}
