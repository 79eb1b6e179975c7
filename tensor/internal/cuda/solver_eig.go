//go:build linux && (amd64 || arm64)

package cuda

import "fmt"

// eigAPI holds cuSOLVER's dense eigensolver, QR and SVD (NVIDIA, 2025,
// cuSOLVER Library User Guide, sections 2.4.2 and 2.4.3), S for float and
// D for double:
//
//	cusolverStatus_t cusolverDnSsyevd_bufferSize(cusolverDnHandle_t handle,
//	    cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const float *A,
//	    int lda, const float *W, int *lwork)
//	cusolverStatus_t cusolverDnSsyevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz,
//	    cublasFillMode_t uplo, int n, float *A, int lda, float *W, float *work,
//	    int lwork, int *devInfo)
//	cusolverStatus_t cusolverDnSgeqrf_bufferSize(cusolverDnHandle_t handle, int m, int n,
//	    float *A, int lda, int *lwork)
//	cusolverStatus_t cusolverDnSgeqrf(cusolverDnHandle_t handle, int m, int n, float *A,
//	    int lda, float *TAU, float *Workspace, int Lwork, int *devInfo)
//	cusolverStatus_t cusolverDnSorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n,
//	    int k, const float *A, int lda, const float *tau, int *lwork)
//	cusolverStatus_t cusolverDnSorgqr(cusolverDnHandle_t handle, int m, int n, int k,
//	    float *A, int lda, const float *tau, float *work, int lwork, int *devInfo)
//	cusolverStatus_t cusolverDnSgesvd_bufferSize(cusolverDnHandle_t handle, int m, int n,
//	    int *lwork)
//	cusolverStatus_t cusolverDnSgesvd(cusolverDnHandle_t handle, signed char jobu,
//	    signed char jobvt, int m, int n, float *A, int lda, float *S, float *U,
//	    int ldu, float *VT, int ldvt, float *work, int lwork, float *rwork,
//	    int *devInfo)
type eigAPI struct {
	ssyevdSize, dsyevdSize func(h uintptr, jobz, uplo, n int32, a uint64, lda int32, w uint64, lwork *int32) int32
	ssyevd, dsyevd         func(h uintptr, jobz, uplo, n int32, a uint64, lda int32, w, work uint64, lwork int32, info uint64) int32
	sgeqrfSize, dgeqrfSize func(h uintptr, m, n int32, a uint64, lda int32, lwork *int32) int32
	sgeqrf, dgeqrf         func(h uintptr, m, n int32, a uint64, lda int32, tau, work uint64, lwork int32, info uint64) int32
	sorgqrSize, dorgqrSize func(h uintptr, m, n, k int32, a uint64, lda int32, tau uint64, lwork *int32) int32
	sorgqr, dorgqr         func(h uintptr, m, n, k int32, a uint64, lda int32, tau, work uint64, lwork int32, info uint64) int32
	sgesvdSize, dgesvdSize func(h uintptr, m, n int32, lwork *int32) int32
	sgesvd, dgesvd         func(h uintptr, jobu, jobvt int8, m, n int32, a uint64, lda int32, s, u uint64, ldu int32, vt uint64, ldvt int32, work uint64, lwork int32, rwork, info uint64) int32
}

func (a *eigAPI) symbols() []symbol {
	return []symbol{
		{"cusolverDnSsyevd_bufferSize", &a.ssyevdSize}, {"cusolverDnDsyevd_bufferSize", &a.dsyevdSize},
		{"cusolverDnSsyevd", &a.ssyevd}, {"cusolverDnDsyevd", &a.dsyevd},
		{"cusolverDnSgeqrf_bufferSize", &a.sgeqrfSize}, {"cusolverDnDgeqrf_bufferSize", &a.dgeqrfSize},
		{"cusolverDnSgeqrf", &a.sgeqrf}, {"cusolverDnDgeqrf", &a.dgeqrf},
		{"cusolverDnSorgqr_bufferSize", &a.sorgqrSize}, {"cusolverDnDorgqr_bufferSize", &a.dorgqrSize},
		{"cusolverDnSorgqr", &a.sorgqr}, {"cusolverDnDorgqr", &a.dorgqr},
		{"cusolverDnSgesvd_bufferSize", &a.sgesvdSize}, {"cusolverDnDgesvd_bufferSize", &a.dgesvdSize},
		{"cusolverDnSgesvd", &a.sgesvd}, {"cusolverDnDgesvd", &a.dgesvd},
	}
}

// cusolverEigMode_t's CUSOLVER_EIG_MODE_VECTOR, and gesvd's job 'S' (the
// first min(m, n) singular vectors).
const (
	eigModeVector = 1
	jobThin       = int8('S')
)

// run calls f with the Driver's context current and turns a failing
// cusolverStatus_t into an error naming call.
func (s *Solver) run(call string, f func() int32) error {
	return s.d.do(func() error {
		if st := f(); st != 0 {
			return solverError(call, st)
		}
		return nil
	})
}

// Syevd computes the eigenvalues, ascending, into w (n elements) and the
// orthonormal eigenvectors of the symmetric column-major n×n a, reading
// its upper triangle (a row-major matrix's lower one) and overwriting a
// with the eigenvectors as its columns (the rows of a row-major matrix).
// The int32 info becomes 0, or i > 0 when i off-diagonal elements of an
// intermediate tridiagonal form did not converge.
func (s *Solver) Syevd(dt DType, n int, a, w, info *Buffer) error {
	if err := checkSolve("Syevd", n, 1, sized{a, n * n * dt.Size()}, sized{w, n * dt.Size()}, sized{info, 4}); err != nil {
		return err
	}
	var lwork int32
	work, err := s.workspace("cusolverDnSyevd", dt, &lwork, func() int32 {
		if dt == F64 {
			return s.api.eig.dsyevdSize(s.handle, eigModeVector, fillUpper, int32(n), a.ptr, int32(n), w.ptr, &lwork)
		}
		return s.api.eig.ssyevdSize(s.handle, eigModeVector, fillUpper, int32(n), a.ptr, int32(n), w.ptr, &lwork)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work)
	return s.run("cusolverDnSyevd", func() int32 {
		if dt == F64 {
			return s.api.eig.dsyevd(s.handle, eigModeVector, fillUpper, int32(n), a.ptr, int32(n), w.ptr, work.ptr, lwork, info.ptr)
		}
		return s.api.eig.ssyevd(s.handle, eigModeVector, fillUpper, int32(n), a.ptr, int32(n), w.ptr, work.ptr, lwork, info.ptr)
	})
}

// QR computes the thin factorisation A = Q·R of the column-major m×n a,
// k = min(m, n): geqrf, R (column-major k×n, upper trapezoidal, zeros
// below) copied into r, then orgqr, which overwrites a's first k columns
// with Q (column-major m×k). tau holds k elements of scratch. R's
// diagonal has whatever signs the reflectors give; info becomes 0.
func (s *Solver) QR(dt DType, m, n int, a, r, tau, info *Buffer) error {
	k, e := min(m, n), dt.Size()
	if err := checkSolve("QR", m, n, sized{a, m * n * e}, sized{r, k * n * e}, sized{tau, k * e}, sized{info, 4}); err != nil {
		return err
	}
	var lwork, lwork2 int32
	work, err := s.workspace("cusolverDnGeqrf", dt, &lwork, func() int32 {
		if dt == F64 {
			return s.api.eig.dgeqrfSize(s.handle, int32(m), int32(n), a.ptr, int32(m), &lwork)
		}
		return s.api.eig.sgeqrfSize(s.handle, int32(m), int32(n), a.ptr, int32(m), &lwork)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work)
	work2, err := s.workspace("cusolverDnOrgqr", dt, &lwork2, func() int32 {
		if dt == F64 {
			return s.api.eig.dorgqrSize(s.handle, int32(m), int32(k), int32(k), a.ptr, int32(m), tau.ptr, &lwork2)
		}
		return s.api.eig.sorgqrSize(s.handle, int32(m), int32(k), int32(k), a.ptr, int32(m), tau.ptr, &lwork2)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work2)
	err = s.run("cusolverDnGeqrf", func() int32 {
		if dt == F64 {
			return s.api.eig.dgeqrf(s.handle, int32(m), int32(n), a.ptr, int32(m), tau.ptr, work.ptr, lwork, info.ptr)
		}
		return s.api.eig.sgeqrf(s.handle, int32(m), int32(n), a.ptr, int32(m), tau.ptr, work.ptr, lwork, info.ptr)
	})
	if err != nil {
		return err
	}
	// R's column j: the first min(j+1, k) entries of a's column j.
	if err := s.d.Zero(r, k*n*e); err != nil {
		return err
	}
	for j := range n {
		if err := s.d.CopyDevice(r.Slice(j*k*e), a.Slice(j*m*e), min(j+1, k)*e); err != nil {
			return err
		}
	}
	return s.run("cusolverDnOrgqr", func() int32 {
		if dt == F64 {
			return s.api.eig.dorgqr(s.handle, int32(m), int32(k), int32(k), a.ptr, int32(m), tau.ptr, work2.ptr, lwork2, info.ptr)
		}
		return s.api.eig.sorgqr(s.handle, int32(m), int32(k), int32(k), a.ptr, int32(m), tau.ptr, work2.ptr, lwork2, info.ptr)
	})
}

// Gesvd computes the thin singular value decomposition A = U·diag(S)·Vᵀ
// of the column-major m×n a (m ≥ n, as cuSOLVER's gesvd requires; a is
// overwritten): the n singular values, descending, into sv, the
// column-major m×n U into u and the column-major n×n Vᵀ into vt (which,
// read row-major, is V). The int32 info becomes 0, or i > 0 when i
// superdiagonals of the bidiagonal form did not converge.
func (s *Solver) Gesvd(dt DType, m, n int, a, sv, u, vt, info *Buffer) error {
	if m < n {
		return fmt.Errorf("cuda: Gesvd of a %d×%d matrix: cuSOLVER's gesvd needs m ≥ n (decompose the transpose)", m, n)
	}
	e := dt.Size()
	if err := checkSolve("Gesvd", m, n, sized{a, m * n * e}, sized{sv, n * e}, sized{u, m * n * e}, sized{vt, n * n * e}, sized{info, 4}); err != nil {
		return err
	}
	var lwork int32
	work, err := s.workspace("cusolverDnGesvd", dt, &lwork, func() int32 {
		if dt == F64 {
			return s.api.eig.dgesvdSize(s.handle, int32(m), int32(n), &lwork)
		}
		return s.api.eig.sgesvdSize(s.handle, int32(m), int32(n), &lwork)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work)
	rwork, err := s.d.Alloc(max(n-1, 1) * e) // the unconverged superdiagonal
	if err != nil {
		return err
	}
	defer s.d.Release(rwork)
	return s.run("cusolverDnGesvd", func() int32 {
		if dt == F64 {
			return s.api.eig.dgesvd(s.handle, jobThin, jobThin, int32(m), int32(n), a.ptr, int32(m), sv.ptr, u.ptr, int32(m), vt.ptr, int32(n), work.ptr, lwork, rwork.ptr, info.ptr)
		}
		return s.api.eig.sgesvd(s.handle, jobThin, jobThin, int32(m), int32(n), a.ptr, int32(m), sv.ptr, u.ptr, int32(m), vt.ptr, int32(n), work.ptr, lwork, rwork.ptr, info.ptr)
	})
}
