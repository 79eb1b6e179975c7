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

func (b *backend) Fill(dt devices.DType, n int, dst devices.Mem, v float64) error {
	return b.k.Fill(dtype(dt), n, buf(dst), v)
}

func (b *backend) Copy(dt devices.DType, shape []int, dst devices.Mem, x devices.View) error {
	return b.k.Copy(dtype(dt), shape, buf(dst), buf(x.Mem), x.Strides)
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

// Gemm runs one cuBLAS product per matrix of the batch.
func (b *backend) Gemm(dt devices.DType, transA, transB bool, batch, m, n, k int, a devices.Mem, strideA int, bm devices.Mem, strideB int, c devices.Mem, alpha, beta float64) error {
	es := dt.Size()
	for i := range batch {
		g := cuda.Gemm{TransA: transA, TransB: transB, M: m, N: n, K: k,
			A: buf(a).Slice(i * strideA * es), B: buf(bm).Slice(i * strideB * es), C: buf(c).Slice(i * m * n * es)}
		var err error
		if dt == devices.F64 {
			err = b.blas.Dgemm(g, alpha, beta)
		} else {
			err = b.blas.Sgemm(g, float32(alpha), float32(beta))
		}
		if err != nil {
			return err
		}
	}
	return nil
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

func (b *backend) Adam(dt devices.DType, n int, p, g, m, v devices.Mem, h [8]float64) error {
	return b.k.Adam(dtype(dt), n, buf(p), buf(g), buf(m), buf(v),
		cuda.AdamStep{W1: h[0], B2: h[1], W2: h[2], StepSize: h[3], C: h[4], Eps: h[5], Decay: h[6], L2: h[7]})
}

func (b *backend) Synchronize() error { return b.d.Synchronize() }
