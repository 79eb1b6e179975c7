//go:build linux && (amd64 || arm64)

package cuda

import (
	"fmt"
	"slices"

	"github.com/gradus-ml/gradus/tensor/internal/cuda"
	"github.com/gradus-ml/gradus/tensor/internal/devices"
)

// backend runs package tensor's operations on one CUDA device: memory
// from the driver's pool, Gradus's kernels, and cuBLAS for products.
type backend struct {
	d    *cuda.Driver
	k    *cuda.Kernels
	blas *cuda.BLAS
	dnn  dnnState // cuDNN's convolutions, dnn.go
}

// newBackend loads the kernels and cuBLAS for d.
func newBackend(d *cuda.Driver) (devices.Backend, error) {
	k, err := d.Kernels()
	if err != nil {
		return nil, err
	}
	b, err := d.BLAS()
	if err != nil {
		return nil, err
	}
	return &backend{d: d, k: k, blas: b}, nil
}

func dtype(t devices.DType) cuda.DType {
	if t == devices.F64 {
		return cuda.F64
	}
	return cuda.F32
}

func buf(m devices.Mem) *cuda.Buffer { return m.(*cuda.Buffer) }

func (b *backend) Name() string { return b.d.Name() }

func (b *backend) Alloc(dt devices.DType, n int) (devices.Mem, error) {
	return b.d.Alloc(n * dt.Size())
}

func (b *backend) Free(m devices.Mem) { b.d.Release(buf(m)) }

func (b *backend) Slice(m devices.Mem, dt devices.DType, off int) devices.Mem {
	return buf(m).Slice(off * dt.Size())
}

func (b *backend) Upload(dst devices.Mem, src any) error {
	switch s := src.(type) {
	case []float32:
		return cuda.Upload(b.d, buf(dst), s)
	case []float64:
		return cuda.Upload(b.d, buf(dst), s)
	}
	return fmt.Errorf("cuda: Upload of %T", src)
}

func (b *backend) Download(dst any, src devices.Mem) error {
	switch d := dst.(type) {
	case []float32:
		return cuda.Download(b.d, d, buf(src))
	case []float64:
		return cuda.Download(b.d, d, buf(src))
	}
	return fmt.Errorf("cuda: Download into %T", dst)
}

func (b *backend) Cast(to devices.DType, n int, dst, x devices.Mem) error {
	return b.k.Cast(dtype(to), n, buf(dst), buf(x))
}

func (b *backend) Fill(dt devices.DType, n int, dst devices.Mem, v float64) error {
	return b.k.Fill(dtype(dt), n, buf(dst), v)
}

func (b *backend) Copy(dt devices.DType, shape []int, dst devices.View, x devices.View) error {
	if dst.Strides == nil {
		return b.k.Copy(dtype(dt), shape, buf(dst.Mem), buf(x.Mem), x.Strides)
	}
	return b.k.CopyStrided(dtype(dt), shape, buf(dst.Mem), dst.Strides, buf(x.Mem), x.Strides)
}

func (b *backend) HasUnary(op string) bool  { return slices.Contains(cuda.UnaryOps, op) }
func (b *backend) HasBinary(op string) bool { return slices.Contains(cuda.BinaryOps, op) }

func (b *backend) Unary(op string, dt devices.DType, n int, dst, x devices.Mem) error {
	return b.k.Unary(op, dtype(dt), n, buf(dst), buf(x))
}

func (b *backend) Binary(op string, dt devices.DType, shape []int, dst devices.Mem, x, y devices.View) error {
	return b.k.Binary(op, dtype(dt), shape, buf(dst), buf(x.Mem), x.Strides, buf(y.Mem), y.Strides)
}

func (b *backend) Scalar(op string, dt devices.DType, n int, dst, x devices.Mem, s float64) error {
	return b.k.Scalar(op, dtype(dt), n, buf(dst), buf(x), s)
}

// Gemm is one cuBLAS product, strided-batched when batch > 1.
func (b *backend) Gemm(dt devices.DType, transA, transB bool, batch, m, n, k int, a devices.Mem, strideA int, bm devices.Mem, strideB int, c devices.Mem, strideC int, alpha, beta float64) error {
	g := cuda.Gemm{TransA: transA, TransB: transB, M: m, N: n, K: k, A: buf(a), B: buf(bm), C: buf(c)}
	switch {
	case batch == 1 && dt == devices.F64:
		return b.blas.Dgemm(g, alpha, beta)
	case batch == 1:
		return b.blas.Sgemm(g, float32(alpha), float32(beta))
	case dt == devices.F64:
		return b.blas.DgemmStridedBatched(g, batch, strideA, strideB, strideC, alpha, beta)
	}
	return b.blas.SgemmStridedBatched(g, batch, strideA, strideB, strideC, float32(alpha), float32(beta))
}

func (b *backend) Softmax(dt devices.DType, rows, cols int, dst, x devices.Mem, log bool) error {
	return b.k.Softmax(dtype(dt), rows, cols, buf(dst), buf(x), log)
}

func (b *backend) SoftmaxGrad(dt devices.DType, rows, cols int, dst, y, v devices.Mem, log bool) error {
	return b.k.SoftmaxGrad(dtype(dt), rows, cols, buf(dst), buf(y), buf(v), log)
}

func (b *backend) SumLast(dt devices.DType, rows, cols int, dst, x devices.Mem) error {
	return b.k.SumLast(dtype(dt), rows, cols, buf(dst), buf(x))
}

func (b *backend) Gather(dt devices.DType, outer, axis, inner int, dst, x devices.Mem, idx []int) error {
	return b.k.Gather(dtype(dt), outer, axis, inner, buf(dst), buf(x), idx)
}

func (b *backend) ScatterAdd(dt devices.DType, outer, axis, inner int, dst devices.Mem, idx []int, src devices.Mem) error {
	return b.k.ScatterAdd(dtype(dt), outer, axis, inner, buf(dst), idx, buf(src))
}

func (b *backend) NonFinite(dt devices.DType, n int, x devices.Mem) (bool, error) {
	return b.k.NonFinite(dtype(dt), n, buf(x))
}

func (b *backend) NonFiniteAll(dts []devices.DType, ns []int, xs []devices.Mem) (bool, error) {
	ts, bs := make([]cuda.DType, len(dts)), make([]*cuda.Buffer, len(xs))
	for i := range dts {
		ts[i] = dtype(dts[i])
	}
	for i := range xs {
		bs[i] = buf(xs[i])
	}
	return b.k.NonFiniteAll(ts, ns, bs)
}

func (b *backend) Update(rule string, dt devices.DType, n int, p, g devices.Mem, state [3]devices.Mem, h [8]float64) error {
	var bufs [3]*cuda.Buffer
	for i, m := range state {
		if m != nil {
			bufs[i] = buf(m)
		}
	}
	return b.k.Update(rule, dtype(dt), n, buf(p), buf(g), bufs, h)
}

func (b *backend) HasParam(op string) bool { return slices.Contains(cuda.ParamOps, op) }

func (b *backend) Param(op string, dt devices.DType, n int, dst, x devices.Mem, p, q float64) error {
	return b.k.Param(op, dtype(dt), n, buf(dst), buf(x), p, q)
}

func (b *backend) ParamBinary(op string, dt devices.DType, shape []int, dst devices.Mem, x, y devices.View, p float64) error {
	return b.k.ParamBinary(op, dtype(dt), shape, buf(dst), buf(x.Mem), x.Strides, buf(y.Mem), y.Strides, p)
}

func (b *backend) Where(dt devices.DType, shape []int, dst devices.Mem, cond, x, y devices.View) error {
	return b.k.Where(dtype(dt), shape, buf(dst), buf(cond.Mem), cond.Strides, buf(x.Mem), x.Strides, buf(y.Mem), y.Strides)
}

func (b *backend) ReduceLast(op string, dt devices.DType, rows, cols, ddof int, dst, x devices.Mem) error {
	t, d, s := dtype(dt), buf(dst), buf(x)
	switch op {
	case "sum":
		return b.k.SumLast(t, rows, cols, d, s)
	case "max":
		return b.k.MaxLast(t, rows, cols, d, s)
	case "min":
		return b.k.MinLast(t, rows, cols, d, s)
	case "prod":
		return b.k.ProdLast(t, rows, cols, d, s)
	case "logsumexp":
		return b.k.LogSumExpLast(t, rows, cols, d, s)
	case "variance":
		return b.k.VarianceLast(t, rows, cols, ddof, d, s)
	}
	return fmt.Errorf("cuda: no row reduction %q", op)
}

func geom(g devices.ConvGeom) cuda.ConvGeom { return cuda.ConvGeom(g) }

func (b *backend) Im2Col(dt devices.DType, g devices.ConvGeom, cols, x devices.Mem) error {
	return b.k.Im2Col(dtype(dt), geom(g), buf(cols), buf(x))
}

func (b *backend) Col2Im(dt devices.DType, g devices.ConvGeom, dx, cols devices.Mem) error {
	return b.k.Col2Im(dtype(dt), geom(g), buf(dx), buf(cols))
}

func (b *backend) MaxPool(dt devices.DType, g devices.ConvGeom, y, idx, x devices.Mem) error {
	return b.k.MaxPool(dtype(dt), geom(g), buf(y), buf(idx), buf(x))
}

func (b *backend) MaxPoolGrad(dt devices.DType, g devices.ConvGeom, dx, dy, idx devices.Mem) error {
	return b.k.MaxPoolGrad(dtype(dt), geom(g), buf(dx), buf(dy), buf(idx))
}

func (b *backend) AvgPool(dt devices.DType, g devices.ConvGeom, y, x devices.Mem) error {
	return b.k.AvgPool(dtype(dt), geom(g), buf(y), buf(x))
}

func (b *backend) AvgPoolGrad(dt devices.DType, g devices.ConvGeom, dx, dy devices.Mem) error {
	return b.k.AvgPoolGrad(dtype(dt), geom(g), buf(dx), buf(dy))
}

func (b *backend) UploadInt32(dst devices.Mem, src []int32) error {
	return cuda.Upload(b.d, buf(dst), src)
}

func (b *backend) DownloadInt32(dst []int32, src devices.Mem) error {
	return cuda.Download(b.d, dst, buf(src))
}

func (b *backend) SetMatMulPrecision(p int) error { return b.blas.SetPrecision(cuda.Precision(p)) }

func (b *backend) Synchronize() error { return b.d.Synchronize() }

// Cell runs a fused recurrent cell of kernels/rnn.cu.
func (b *backend) Cell(op string, dt devices.DType, rows, h int, dst devices.Mem, in []devices.View) error {
	ops := make([]cuda.RowOperand, len(in))
	for i, v := range in {
		if len(v.Strides) != 1 {
			return fmt.Errorf("cuda: %s: operand %d has %d strides, want its row stride", op, i, len(v.Strides))
		}
		ops[i] = cuda.RowOperand{Buf: buf(v.Mem), RowStride: v.Strides[0]}
	}
	return b.k.Cell(op, dtype(dt), rows, h, buf(dst), ops)
}

// Special runs a special function of kernels/special.cu.
func (b *backend) Special(op string, dt devices.DType, n int, dst devices.Mem, in []devices.Mem, p []int) error {
	t := dtype(dt)
	switch {
	case op == "gamma_p_deriv" && len(in) == 2 && len(p) == 2:
		return b.k.GammaPDeriv(t, n, buf(dst), buf(in[0]), buf(in[1]), p[0], p[1])
	case op == "gamma_p_inv" && len(in) == 3:
		return b.k.GammaPInv(t, n, buf(dst), buf(in[0]), buf(in[1]), buf(in[2]))
	}
	return fmt.Errorf("cuda: no special function %q of %d operands and %d parameters", op, len(in), len(p))
}

// Dense linear algebra: cuBLAS's triangular routines, and cuSOLVER,
// loaded on the first factorisation (tensor/internal/cuda/solver.go).

func (b *backend) Trsm(dt devices.DType, lower, trans bool, n, k int, a, x devices.Mem) error {
	return b.blas.Trsm(dtype(dt), lower, trans, n, k, buf(a), buf(x))
}

func (b *backend) Trmm(dt devices.DType, lower, trans bool, n, k int, a, x, c devices.Mem) error {
	return b.blas.Trmm(dtype(dt), lower, trans, n, k, buf(a), buf(x), buf(c))
}

func (b *backend) Potrf(dt devices.DType, n int, a, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.Potrf(dtype(dt), n, buf(a), buf(info))
}

func (b *backend) Getrf(dt devices.DType, n int, a, piv, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.Getrf(dtype(dt), n, buf(a), buf(piv), buf(info))
}

func (b *backend) Getrs(dt devices.DType, n, k int, lu, piv, x, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.Getrs(dtype(dt), n, k, buf(lu), buf(piv), buf(x), buf(info))
}

func (b *backend) Syevd(dt devices.DType, n int, a, w, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.Syevd(dtype(dt), n, buf(a), buf(w), buf(info))
}

func (b *backend) QR(dt devices.DType, m, n int, a, r, tau, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.QR(dtype(dt), m, n, buf(a), buf(r), buf(tau), buf(info))
}

func (b *backend) Gesvd(dt devices.DType, m, n int, a, sv, u, vt, info devices.Mem) error {
	s, err := b.d.Solver()
	if err != nil {
		return err
	}
	return s.Gesvd(dtype(dt), m, n, buf(a), buf(sv), buf(u), buf(vt), buf(info))
}
