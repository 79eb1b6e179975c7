//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// blasAPI holds the cuBLAS functions (NVIDIA, 2025, cuBLAS Library User
// Guide). Matrices are column-major device arrays.
type blasAPI struct {
	create      func(h *uintptr) int32
	destroy     func(h uintptr) int32
	getVersion  func(h uintptr, v *int32) int32
	setStream   func(h uintptr, stream uintptr) int32
	setMathMode func(h uintptr, mode int32) int32
	// sgemm and dgemm are the addresses of cublasSgemm_v2 and
	// cublasDgemm_v2, called through purego.SyscallN (gemm): every
	// Linear layer calls them, and the registered-function path built
	// their arguments with reflection, several allocations a call.
	sgemm, dgemm uintptr
	sgemmSB      func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float32, c uint64, ldc int32, sc int64, batch int32) int32
	dgemmSB      func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float64, c uint64, ldc int32, sc int64, batch int32) int32
	// gemmEx and gemmSBEx take each matrix's data type and the compute
	// type, which is how cuBLAS offers bfloat16 products of float32 data.
	gemmEx   func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, at, lda int32, b uint64, bt, ldb int32, beta *float32, c uint64, ct, ldc, compute, algo int32) int32
	gemmSBEx func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, at, lda int32, sa int64, b uint64, bt, ldb int32, sb int64, beta *float32, c uint64, ct, ldc int32, sc int64, batch, compute, algo int32) int32
	tri      triAPI // trsm and trmm, blas_tri.go
}

// gemm calls cublasSgemm_v2 or cublasDgemm_v2 at fn(h, op1, op2, m, n,
// k, alpha, b, ld1, a, ld2, beta, c, ldc) for the column-major form cm,
// alpha and beta the host addresses of the scalars.
func (a *blasAPI) gemm(fn, h uintptr, cm colMajorGemm, alpha, beta unsafe.Pointer, A, B, C uint64) int32 {
	r, _, _ := purego.SyscallN(fn, h, uintptr(cm.op1), uintptr(cm.op2), uintptr(cm.m), uintptr(cm.n), uintptr(cm.k),
		uintptr(alpha), uintptr(B), uintptr(cm.ld1), uintptr(A), uintptr(cm.ld2), uintptr(beta), uintptr(C), uintptr(cm.ldc))
	return int32(r)
}

func (a *blasAPI) symbols() []symbol {
	return []symbol{
		{"cublasCreate_v2", &a.create}, {"cublasDestroy_v2", &a.destroy},
		{"cublasGetVersion_v2", &a.getVersion}, {"cublasSetStream_v2", &a.setStream},
		{"cublasSetMathMode", &a.setMathMode},
		{"cublasSgemm_v2", &a.sgemm}, {"cublasDgemm_v2", &a.dgemm},
		{"cublasSgemmStridedBatched", &a.sgemmSB}, {"cublasDgemmStridedBatched", &a.dgemmSB},
		{"cublasGemmEx", &a.gemmEx}, {"cublasGemmStridedBatchedEx", &a.gemmSBEx},
		{"cublasStrsm_v2", &a.tri.strsm}, {"cublasDtrsm_v2", &a.tri.dtrsm},
		{"cublasStrmm_v2", &a.tri.strmm}, {"cublasDtrmm_v2", &a.tri.dtrmm},
	}
}

// cublasMath_t, cudaDataType_t, cublasComputeType_t and cublasGemmAlgo_t
// values (cublas_api.h, library_types.h).
const (
	mathDefault     = 0
	mathTF32        = 3 // CUBLAS_TF32_TENSOR_OP_MATH
	defaultStream   = 0
	typeR32F        = 0  // CUDA_R_32F
	computeFast16BF = 75 // CUBLAS_COMPUTE_32F_FAST_16BF
	gemmAlgoDefault = -1 // CUBLAS_GEMM_DEFAULT
)

// Precision says how float32 products are computed. Float64 products are
// always computed in float64.
type Precision int

const (
	// PrecisionFloat32 computes float32 products in float32 (the
	// default).
	PrecisionFloat32 Precision = iota
	// PrecisionTF32 rounds the inputs to TF32 (10 explicit mantissa bits)
	// for the tensor cores and sums in float32.
	PrecisionTF32
	// PrecisionBF16 rounds the inputs to bfloat16 (7 explicit mantissa
	// bits) for the tensor cores and sums in float32.
	PrecisionBF16
)

// String names p as SetPrecision's errors do.
func (p Precision) String() string {
	switch p {
	case PrecisionFloat32:
		return "float32"
	case PrecisionTF32:
		return "tf32"
	case PrecisionBF16:
		return "bf16"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// BLAS is a cuBLAS handle bound to a Driver's context and to the
// device's default stream, where the package's kernels run too.
type BLAS struct {
	d       *Driver
	api     blasAPI
	handle  uintptr
	path    string
	version int
	// precision is read and written under the Driver's lock.
	precision Precision
	// scalars holds a product's alpha and beta, which cuBLAS reads from
	// the host during the call; it is used under the Driver's lock.
	scalars *gemmScalars
}

// gemmScalars is room for alpha and beta of either precision, with the
// Pinner that pins it while cuBLAS or cuDNN reads them.
type gemmScalars struct {
	s   [2]float32
	d   [2]float64
	pin runtime.Pinner
}

// hold writes alpha and beta in both precisions and pins them for one
// call; release unpins them. The caller holds the Driver's lock.
func (sc *gemmScalars) hold(alpha, beta float64) {
	sc.s = [2]float32{float32(alpha), float32(beta)}
	sc.d = [2]float64{alpha, beta}
	sc.pin.Pin(sc)
}

func (sc *gemmScalars) release() { sc.pin.Unpin() }

// enter takes the Driver's lock and holds alpha and beta for a product;
// leave undoes it.
func (b *BLAS) enter(alpha, beta float64) (*gemmScalars, error) {
	if err := b.d.lock(); err != nil {
		return nil, err
	}
	b.scalars.hold(alpha, beta)
	return b.scalars, nil
}

func (b *BLAS) leave() {
	b.scalars.release()
	b.d.unlock()
}

// BLAS returns the Driver's cuBLAS handle, loading cuBLAS on first use.
// cuBLAS's companion libcublasLt is loaded first from the folder where
// libcublas is found, so a toolkit's or pip wheel's copy is used even
// where the loader's path does not reach it.
func (d *Driver) BLAS() (*BLAS, error) {
	err := d.do(func() error {
		if d.blas != nil {
			return nil
		}
		b, err := d.loadBLAS()
		d.blas = b
		return err
	})
	if err != nil {
		return nil, err
	}
	return d.blas, nil
}

func (d *Driver) loadBLAS() (*BLAS, error) {
	b := &BLAS{d: d, scalars: new(gemmScalars)}
	path, err := openLibrary(libBLAS, d.search, func(dir string) {
		preload(dir, libBLASLt.names)
	}, func(h uintptr, path string) error {
		return bind(h, path, b.api.symbols())
	})
	if err != nil {
		return nil, err
	}
	b.path = path
	if s := b.api.create(&b.handle); s != 0 {
		return nil, blasError("cublasCreate", s)
	}
	var v int32
	if s := b.api.getVersion(b.handle, &v); s != 0 {
		return nil, blasError("cublasGetVersion", s)
	}
	b.version = int(v)
	if s := b.api.setStream(b.handle, defaultStream); s != 0 {
		return nil, blasError("cublasSetStream", s)
	}
	return b, nil
}

func blasError(call string, s int32) error { return &Error{Call: call, Msg: blasStatus(s)} }

// destroy frees the handle; the caller holds the Driver's lock.
func (b *BLAS) destroy() error {
	if s := b.api.destroy(b.handle); s != 0 {
		return blasError("cublasDestroy", s)
	}
	return nil
}

// Version returns cuBLAS's version (e.g. 130001) and the library's path.
func (b *BLAS) Version() (int, string) { return b.version, b.path }

// SetPrecision sets how later float32 products are computed. TF32 and
// bfloat16 run on the tensor cores, several times faster than float32
// for a relative error near 1e-3 (TF32) or 1e-2 (bfloat16) instead of
// 1e-7: an opt-in, PrecisionFloat32 by default. TF32 is cuBLAS's
// CUBLAS_TF32_TENSOR_OP_MATH mode; bfloat16 is cublasGemmEx with
// CUBLAS_COMPUTE_32F_FAST_16BF on the float32 matrices (NVIDIA, 2025,
// cuBLAS Library User Guide, §2.8.12 and cublasComputeType_t).
func (b *BLAS) SetPrecision(p Precision) error {
	mode := int32(mathDefault)
	switch p {
	case PrecisionFloat32, PrecisionBF16:
	case PrecisionTF32:
		mode = mathTF32
	default:
		return fmt.Errorf("cuda: SetPrecision: unknown precision %v", p)
	}
	return b.d.do(func() error {
		if s := b.api.setMathMode(b.handle, mode); s != 0 {
			return blasError("cublasSetMathMode", s)
		}
		b.precision = p
		return nil
	})
}

// Sgemm computes the float32 product g with alpha and beta.
func (b *BLAS) Sgemm(g Gemm, alpha, beta float32) error {
	c, err := g.colMajor(4)
	if err != nil {
		return err
	}
	sc, err := b.enter(float64(alpha), float64(beta))
	if err != nil {
		return err
	}
	defer b.leave()
	if b.precision == PrecisionBF16 {
		s := b.api.gemmEx(b.handle, c.op1, c.op2, c.m, c.n, c.k, &sc.s[0], g.B.ptr, typeR32F, c.ld1, g.A.ptr, typeR32F, c.ld2,
			&sc.s[1], g.C.ptr, typeR32F, c.ldc, computeFast16BF, gemmAlgoDefault)
		if s != 0 {
			return blasError("cublasGemmEx", s)
		}
		return nil
	}
	if s := b.api.gemm(b.api.sgemm, b.handle, c, unsafe.Pointer(&sc.s[0]), unsafe.Pointer(&sc.s[1]), g.A.ptr, g.B.ptr, g.C.ptr); s != 0 {
		return blasError("cublasSgemm", s)
	}
	return nil
}

// Dgemm computes the float64 product g with alpha and beta.
func (b *BLAS) Dgemm(g Gemm, alpha, beta float64) error {
	c, err := g.colMajor(8)
	if err != nil {
		return err
	}
	sc, err := b.enter(alpha, beta)
	if err != nil {
		return err
	}
	defer b.leave()
	if s := b.api.gemm(b.api.dgemm, b.handle, c, unsafe.Pointer(&sc.d[0]), unsafe.Pointer(&sc.d[1]), g.A.ptr, g.B.ptr, g.C.ptr); s != 0 {
		return blasError("cublasDgemm", s)
	}
	return nil
}

// SgemmStridedBatched computes batch float32 products g with alpha and
// beta, product i reading A, B and C strideA, strideB and strideC
// elements after product i−1's (a stride of 0 repeats a matrix; C's must
// keep the products apart), in one cublasSgemmStridedBatched call.
func (b *BLAS) SgemmStridedBatched(g Gemm, batch, strideA, strideB, strideC int, alpha, beta float32) error {
	c, err := g.colMajorBatched(4, batch, strideA, strideB, strideC)
	if err != nil {
		return err
	}
	return b.d.do(func() error {
		if b.precision == PrecisionBF16 {
			s := b.api.gemmSBEx(b.handle, c.op1, c.op2, c.m, c.n, c.k, &alpha, g.B.ptr, typeR32F, c.ld1, int64(strideB),
				g.A.ptr, typeR32F, c.ld2, int64(strideA), &beta, g.C.ptr, typeR32F, c.ldc, int64(strideC), int32(batch),
				computeFast16BF, gemmAlgoDefault)
			if s != 0 {
				return blasError("cublasGemmStridedBatchedEx", s)
			}
			return nil
		}
		s := b.api.sgemmSB(b.handle, c.op1, c.op2, c.m, c.n, c.k, &alpha, g.B.ptr, c.ld1, int64(strideB),
			g.A.ptr, c.ld2, int64(strideA), &beta, g.C.ptr, c.ldc, int64(strideC), int32(batch))
		if s != 0 {
			return blasError("cublasSgemmStridedBatched", s)
		}
		return nil
	})
}

// DgemmStridedBatched is SgemmStridedBatched for float64
// (cublasDgemmStridedBatched).
func (b *BLAS) DgemmStridedBatched(g Gemm, batch, strideA, strideB, strideC int, alpha, beta float64) error {
	c, err := g.colMajorBatched(8, batch, strideA, strideB, strideC)
	if err != nil {
		return err
	}
	return b.d.do(func() error {
		s := b.api.dgemmSB(b.handle, c.op1, c.op2, c.m, c.n, c.k, &alpha, g.B.ptr, c.ld1, int64(strideB),
			g.A.ptr, c.ld2, int64(strideA), &beta, g.C.ptr, c.ldc, int64(strideC), int32(batch))
		if s != 0 {
			return blasError("cublasDgemmStridedBatched", s)
		}
		return nil
	})
}
