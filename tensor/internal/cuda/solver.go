//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"path/filepath"
)

// solverAPI holds the dense cuSOLVER functions (NVIDIA, 2025, cuSOLVER
// Library User Guide, section 2.4), S for float and D for double:
//
//	cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle)
//	cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle)
//	cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId)
//	cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t handle,
//	    cublasFillMode_t uplo, int n, float *A, int lda, int *Lwork)
//	cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo,
//	    int n, float *A, int lda, float *Workspace, int Lwork, int *devInfo)
//	cusolverStatus_t cusolverDnSgetrf_bufferSize(cusolverDnHandle_t handle,
//	    int m, int n, float *A, int lda, int *Lwork)
//	cusolverStatus_t cusolverDnSgetrf(cusolverDnHandle_t handle, int m, int n,
//	    float *A, int lda, float *Workspace, int *devIpiv, int *devInfo)
//	cusolverStatus_t cusolverDnSgetrs(cusolverDnHandle_t handle, cublasOperation_t trans,
//	    int n, int nrhs, const float *A, int lda, const int *devIpiv,
//	    float *B, int ldb, int *devInfo)
//
// Lwork counts elements of the dtype; devIpiv and devInfo are int32 in
// device memory.
type solverAPI struct {
	create     func(h *uintptr) int32
	destroy    func(h uintptr) int32
	setStream  func(h uintptr, stream uintptr) int32
	spotrfSize func(h uintptr, uplo, n int32, a uint64, lda int32, lwork *int32) int32
	dpotrfSize func(h uintptr, uplo, n int32, a uint64, lda int32, lwork *int32) int32
	spotrf     func(h uintptr, uplo, n int32, a uint64, lda int32, work uint64, lwork int32, info uint64) int32
	dpotrf     func(h uintptr, uplo, n int32, a uint64, lda int32, work uint64, lwork int32, info uint64) int32
	sgetrfSize func(h uintptr, m, n int32, a uint64, lda int32, lwork *int32) int32
	dgetrfSize func(h uintptr, m, n int32, a uint64, lda int32, lwork *int32) int32
	sgetrf     func(h uintptr, m, n int32, a uint64, lda int32, work, ipiv, info uint64) int32
	dgetrf     func(h uintptr, m, n int32, a uint64, lda int32, work, ipiv, info uint64) int32
	sgetrs     func(h uintptr, trans, n, nrhs int32, a uint64, lda int32, ipiv, b uint64, ldb int32, info uint64) int32
	dgetrs     func(h uintptr, trans, n, nrhs int32, a uint64, lda int32, ipiv, b uint64, ldb int32, info uint64) int32
	eig        eigAPI // syevd, geqrf, orgqr and gesvd: solver_eig.go
}

func (a *solverAPI) symbols() []symbol {
	syms := []symbol{
		{"cusolverDnCreate", &a.create}, {"cusolverDnDestroy", &a.destroy},
		{"cusolverDnSetStream", &a.setStream},
		{"cusolverDnSpotrf_bufferSize", &a.spotrfSize}, {"cusolverDnDpotrf_bufferSize", &a.dpotrfSize},
		{"cusolverDnSpotrf", &a.spotrf}, {"cusolverDnDpotrf", &a.dpotrf},
		{"cusolverDnSgetrf_bufferSize", &a.sgetrfSize}, {"cusolverDnDgetrf_bufferSize", &a.dgetrfSize},
		{"cusolverDnSgetrf", &a.sgetrf}, {"cusolverDnDgetrf", &a.dgetrf},
		{"cusolverDnSgetrs", &a.sgetrs}, {"cusolverDnDgetrs", &a.dgetrs},
	}
	return append(syms, a.eig.symbols()...)
}

// solverStatusNames are cusolverStatus_t's values.
var solverStatusNames = map[int32]string{
	1: "CUSOLVER_STATUS_NOT_INITIALIZED", 2: "CUSOLVER_STATUS_ALLOC_FAILED",
	3: "CUSOLVER_STATUS_INVALID_VALUE", 4: "CUSOLVER_STATUS_ARCH_MISMATCH",
	5: "CUSOLVER_STATUS_MAPPING_ERROR", 6: "CUSOLVER_STATUS_EXECUTION_FAILED",
	7: "CUSOLVER_STATUS_INTERNAL_ERROR", 8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
	9: "CUSOLVER_STATUS_NOT_SUPPORTED",
}

func solverError(call string, s int32) error {
	msg, ok := solverStatusNames[s]
	if !ok {
		msg = "cusolverStatus_t"
	}
	return &Error{Call: call, Msg: fmt.Sprintf("%s (%d)", msg, s)}
}

// Solver is a dense cuSOLVER handle bound to a Driver's context and to
// the default stream, where the kernels and cuBLAS run too, so its work
// is ordered with theirs. Matrices are row-major, as package tensor's.
type Solver struct {
	d      *Driver
	api    solverAPI
	handle uintptr
	path   string
}

// Solver returns the Driver's cuSOLVER handle, loading cuSOLVER on first
// use (after cuBLAS, which it links against). cuSOLVER's other companions,
// libcusparse and libnvJitLink, are loaded first from its folder, or from
// the sibling folders of NVIDIA's CUDA 12 pip wheels (nvidia/*/lib). A
// machine without cuSOLVER gets an error naming the library and the
// places searched; everything else keeps working.
func (d *Driver) Solver() (*Solver, error) {
	if _, err := d.BLAS(); err != nil {
		return nil, err
	}
	err := d.do(func() error {
		if d.solver != nil {
			return nil
		}
		s, err := d.loadSolver()
		d.solver = s
		return err
	})
	if err != nil {
		return nil, err
	}
	return d.solver, nil
}

func (d *Driver) loadSolver() (*Solver, error) {
	s := &Solver{d: d}
	path, err := openLibrary(libSolver, d.search, func(dir string) {
		for _, lib := range []library{libNVJitLink, libSparse, libBLASLt, libBLAS} {
			if f := filesIn(dir, lib.names); len(f) > 0 {
				preload(dir, lib.names)
				continue
			}
			sib, _ := filepath.Glob(filepath.Join(dir, "..", "..", "*", "lib"))
			for _, o := range sib {
				if len(filesIn(o, lib.names)) > 0 {
					preload(o, lib.names)
					break
				}
			}
		}
	}, func(h uintptr, path string) error {
		return bind(h, path, s.api.symbols())
	})
	if err != nil {
		return nil, err
	}
	s.path = path
	if st := s.api.create(&s.handle); st != 0 {
		return nil, solverError("cusolverDnCreate", st)
	}
	if st := s.api.setStream(s.handle, defaultStream); st != 0 {
		_ = s.api.destroy(s.handle)
		return nil, solverError("cusolverDnSetStream", st)
	}
	return s, nil
}

// destroy frees the handle; the caller holds the Driver's lock.
func (s *Solver) destroy() error {
	if st := s.api.destroy(s.handle); st != 0 {
		return solverError("cusolverDnDestroy", st)
	}
	return nil
}

// Path returns the file cuSOLVER was loaded from.
func (s *Solver) Path() string { return s.path }

// checkSolve checks n (and k) and that each buffer holds its bytes.
func checkSolve(call string, n, k int, bufs ...sized) error {
	if n <= 0 || k <= 0 || n > maxDimension || n*n > maxDimension || n*k > maxDimension {
		return fmt.Errorf("cuda: %s of order %d with %d columns: sizes must be positive and within cuSOLVER's 32-bit sizes", call, n, k)
	}
	for i, x := range bufs {
		if x.b == nil || x.b.size < x.bytes {
			return fmt.Errorf("cuda: %s of order %d: operand %d needs %d bytes", call, n, i, x.bytes)
		}
	}
	return nil
}

// sized is an operand and the bytes it must hold.
type sized struct {
	b     *Buffer
	bytes int
}

// workspace calls size, which sets *lwork to a workspace's element count,
// then allocates the workspace.
func (s *Solver) workspace(call string, dt DType, lwork *int32, size func() int32) (*Buffer, error) {
	err := s.d.do(func() error {
		if st := size(); st != 0 {
			return solverError(call+"_bufferSize", st)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.d.Alloc(max(int(*lwork), 1) * dt.Size())
}

// Potrf factors the symmetric positive definite row-major n×n matrix a in
// place as L·Lᵀ, reading and writing its lower triangle only (the upper
// triangle of the column-major matrix cuSOLVER sees, whose factor Uᵀ·U
// is L·Lᵀ read row-major). The int32 info on the device becomes 0, or i
// > 0 when the leading minor of order i is not positive definite (the
// factorisation stops there), as LAPACK's potrf says.
func (s *Solver) Potrf(dt DType, n int, a, info *Buffer) error {
	if err := checkSolve("Potrf", n, 1, sized{a, n * n * dt.Size()}, sized{info, 4}); err != nil {
		return err
	}
	var lwork int32
	work, err := s.workspace("cusolverDnPotrf", dt, &lwork, func() int32 {
		if dt == F64 {
			return s.api.dpotrfSize(s.handle, fillUpper, int32(n), a.ptr, int32(n), &lwork)
		}
		return s.api.spotrfSize(s.handle, fillUpper, int32(n), a.ptr, int32(n), &lwork)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work)
	return s.d.do(func() error {
		var st int32
		if dt == F64 {
			st = s.api.dpotrf(s.handle, fillUpper, int32(n), a.ptr, int32(n), work.ptr, lwork, info.ptr)
		} else {
			st = s.api.spotrf(s.handle, fillUpper, int32(n), a.ptr, int32(n), work.ptr, lwork, info.ptr)
		}
		if st != 0 {
			return solverError("cusolverDnPotrf", st)
		}
		return nil
	})
}

// Getrf factors the column-major n×n matrix A in a (which holds the
// row-major Aᵀ: transpose a row-major matrix into it first) in place as
// P·A = L·U with partial pivoting, L unit lower and U upper, as LAPACK's
// getrf and package tensor's LU do, so det A = ±Π Uᵢᵢ, Uᵢᵢ being a's
// diagonal after the call. The n int32 piv become the 1-based rows
// swapped with each row, and the int32 info 0, or i > 0 when Uᵢᵢ
// (1-based) is exactly zero (the factorisation still completes).
func (s *Solver) Getrf(dt DType, n int, a, piv, info *Buffer) error {
	if err := checkSolve("Getrf", n, 1, sized{a, n * n * dt.Size()}, sized{piv, 4 * n}, sized{info, 4}); err != nil {
		return err
	}
	var lwork int32
	work, err := s.workspace("cusolverDnGetrf", dt, &lwork, func() int32 {
		if dt == F64 {
			return s.api.dgetrfSize(s.handle, int32(n), int32(n), a.ptr, int32(n), &lwork)
		}
		return s.api.sgetrfSize(s.handle, int32(n), int32(n), a.ptr, int32(n), &lwork)
	})
	if err != nil {
		return err
	}
	defer s.d.Release(work)
	return s.d.do(func() error {
		var st int32
		if dt == F64 {
			st = s.api.dgetrf(s.handle, int32(n), int32(n), a.ptr, int32(n), work.ptr, piv.ptr, info.ptr)
		} else {
			st = s.api.sgetrf(s.handle, int32(n), int32(n), a.ptr, int32(n), work.ptr, piv.ptr, info.ptr)
		}
		if st != 0 {
			return solverError("cusolverDnGetrf", st)
		}
		return nil
	})
}

// Getrs solves A·X = B in place given Getrf's factors lu and piv of the
// column-major n×n A, for the column-major n×k B (trans N): b holds the
// row-major k×n Bᵀ, the right-hand sides as its rows, and gets the
// solutions likewise. The int32 info becomes 0 (a negative value names a
// wrong argument).
func (s *Solver) Getrs(dt DType, n, k int, lu, piv, b, info *Buffer) error {
	if err := checkSolve("Getrs", n, k, sized{lu, n * n * dt.Size()}, sized{piv, 4 * n}, sized{b, n * k * dt.Size()}, sized{info, 4}); err != nil {
		return err
	}
	return s.d.do(func() error {
		var st int32
		if dt == F64 {
			st = s.api.dgetrs(s.handle, opN, int32(n), int32(k), lu.ptr, int32(n), piv.ptr, b.ptr, int32(n), info.ptr)
		} else {
			st = s.api.sgetrs(s.handle, opN, int32(n), int32(k), lu.ptr, int32(n), piv.ptr, b.ptr, int32(n), info.ptr)
		}
		if st != 0 {
			return solverError("cusolverDnGetrs", st)
		}
		return nil
	})
}
