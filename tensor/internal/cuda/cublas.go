//go:build linux && (amd64 || arm64)

package cuda

// blasAPI holds the cuBLAS functions (NVIDIA, 2025, cuBLAS Library User
// Guide). Matrices are column-major device arrays.
type blasAPI struct {
	create      func(h *uintptr) int32
	destroy     func(h uintptr) int32
	getVersion  func(h uintptr, v *int32) int32
	setStream   func(h uintptr, stream uintptr) int32
	setMathMode func(h uintptr, mode int32) int32
	sgemm       func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32, beta *float32, c uint64, ldc int32) int32
	dgemm       func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, b uint64, ldb int32, beta *float64, c uint64, ldc int32) int32
	sgemmSB     func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float32, c uint64, ldc int32, sc int64, batch int32) int32
	dgemmSB     func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float64, c uint64, ldc int32, sc int64, batch int32) int32
	tri         triAPI // trsm and trmm, blas_tri.go
}

func (a *blasAPI) symbols() []symbol {
	return []symbol{
		{"cublasCreate_v2", &a.create}, {"cublasDestroy_v2", &a.destroy},
		{"cublasGetVersion_v2", &a.getVersion}, {"cublasSetStream_v2", &a.setStream},
		{"cublasSetMathMode", &a.setMathMode},
		{"cublasSgemm_v2", &a.sgemm}, {"cublasDgemm_v2", &a.dgemm},
		{"cublasSgemmStridedBatched", &a.sgemmSB}, {"cublasDgemmStridedBatched", &a.dgemmSB},
		{"cublasStrsm_v2", &a.tri.strsm}, {"cublasDtrsm_v2", &a.tri.dtrsm},
		{"cublasStrmm_v2", &a.tri.strmm}, {"cublasDtrmm_v2", &a.tri.dtrmm},
	}
}

// cublasOperation_t and cublasMath_t values.
const (
	mathDefault   = 0
	mathTF32      = 3 // CUBLAS_TF32_TENSOR_OP_MATH
	defaultStream = 0
)

// BLAS is a cuBLAS handle bound to a Driver's context and to the
// device's default stream, where the package's kernels run too.
type BLAS struct {
	d       *Driver
	api     blasAPI
	handle  uintptr
	path    string
	version int
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
	b := &BLAS{d: d}
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

// SetTF32 lets float32 products use the tensor cores' TF32 format (10
// mantissa bits in the products, float32 accumulation), several times
// faster and accurate to about 1e-3 relative: an opt-in, off by default.
func (b *BLAS) SetTF32(on bool) error {
	mode := int32(mathDefault)
	if on {
		mode = mathTF32
	}
	return b.d.do(func() error {
		if s := b.api.setMathMode(b.handle, mode); s != 0 {
			return blasError("cublasSetMathMode", s)
		}
		return nil
	})
}

// Sgemm computes the float32 product g with alpha and beta.
func (b *BLAS) Sgemm(g Gemm, alpha, beta float32) error {
	c, err := g.colMajor(4)
	if err != nil {
		return err
	}
	return b.d.do(func() error {
		s := b.api.sgemm(b.handle, c.op1, c.op2, c.m, c.n, c.k, &alpha, g.B.ptr, c.ld1, g.A.ptr, c.ld2, &beta, g.C.ptr, c.ldc)
		if s != 0 {
			return blasError("cublasSgemm", s)
		}
		return nil
	})
}

// Dgemm computes the float64 product g with alpha and beta.
func (b *BLAS) Dgemm(g Gemm, alpha, beta float64) error {
	c, err := g.colMajor(8)
	if err != nil {
		return err
	}
	return b.d.do(func() error {
		s := b.api.dgemm(b.handle, c.op1, c.op2, c.m, c.n, c.k, &alpha, g.B.ptr, c.ld1, g.A.ptr, c.ld2, &beta, g.C.ptr, c.ldc)
		if s != 0 {
			return blasError("cublasDgemm", s)
		}
		return nil
	})
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
