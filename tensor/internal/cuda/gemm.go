package cuda

import (
	"errors"
	"fmt"
)

// cublasOperation_t values.
const (
	opN = 0
	opT = 1
)

// A Gemm describes C ← alpha·op(A)·op(B) + beta·C on row-major matrices:
// op(A) is m×k, op(B) is k×n, C is m×n, and TransA (TransB) says A is
// stored k×m (B stored n×k). The buffers hold float32 or float64 as the
// call (Sgemm or Dgemm) says.
type Gemm struct {
	TransA, TransB bool
	M, N, K        int
	A, B, C        *Buffer
}

// colMajorGemm is one cublas<t>gemm call's operands: C (m×n, leading
// dimension ldc) ← op1(X)·op2(Y), X and Y being Gemm's B and A.
type colMajorGemm struct {
	op1, op2, m, n, k, ld1, ld2, ldc int32
}

// colMajor maps the row-major product onto cuBLAS's column-major one. A
// row-major matrix read column-major is its transpose, so computing
// Cᵀ = op(B)ᵀ·op(A)ᵀ in column-major, with B first and m and n swapped,
// leaves C in row-major order with no copy. elem is the element size.
func (g Gemm) colMajor(elem int) (colMajorGemm, error) {
	if g.M <= 0 || g.N <= 0 || g.K <= 0 || g.A == nil || g.B == nil || g.C == nil {
		return colMajorGemm{}, fmt.Errorf("cuda: Gemm %d×%d×%d: sizes must be positive and the buffers set", g.M, g.N, g.K)
	}
	const maxInt32 = 1<<31 - 1
	if g.M > maxInt32 || g.N > maxInt32 || g.K > maxInt32 {
		return colMajorGemm{}, errors.New("cuda: Gemm: a dimension exceeds cuBLAS's 32-bit sizes")
	}
	for _, x := range []struct {
		name string
		b    *Buffer
		n    int
	}{{"A", g.A, g.M * g.K}, {"B", g.B, g.K * g.N}, {"C", g.C, g.M * g.N}} {
		if x.n*elem > x.b.size {
			return colMajorGemm{}, fmt.Errorf("cuda: Gemm %d×%d×%d: %s needs %d bytes, its buffer has %d", g.M, g.N, g.K, x.name, x.n*elem, x.b.size)
		}
	}
	c := colMajorGemm{op1: opN, op2: opN, m: int32(g.N), n: int32(g.M), k: int32(g.K),
		ld1: int32(g.N), ld2: int32(g.K), ldc: int32(g.N)}
	if g.TransB { // B stored n×k
		c.op1, c.ld1 = opT, int32(g.K)
	}
	if g.TransA { // A stored k×m
		c.op2, c.ld2 = opT, int32(g.M)
	}
	return c, nil
}

// colMajorBatched is colMajor for batch products whose matrices lie
// strideA, strideB and strideC elements apart: each buffer must hold its
// last matrix, (batch−1)·stride + its size, and C's stride must keep the
// products' outputs apart (a stride of 0 repeats A or B, never C).
func (g Gemm) colMajorBatched(elem, batch, strideA, strideB, strideC int) (colMajorGemm, error) {
	const maxInt32 = 1<<31 - 1
	if batch < 1 || batch > maxInt32 || strideA < 0 || strideB < 0 || strideC < 0 {
		return colMajorGemm{}, fmt.Errorf("cuda: Gemm batch of %d with strides %d, %d, %d: the batch must be in [1, 2³¹) and strides non-negative", batch, strideA, strideB, strideC)
	}
	c, err := g.colMajor(elem)
	if err != nil {
		return c, err
	}
	if batch > 1 && strideC < g.M*g.N {
		return colMajorGemm{}, fmt.Errorf("cuda: Gemm %d×%d×%d batch of %d: C's stride %d overlaps the %d-element products", g.M, g.N, g.K, batch, strideC, g.M*g.N)
	}
	for _, x := range []struct {
		name      string
		b         *Buffer
		n, stride int
	}{{"A", g.A, g.M * g.K, strideA}, {"B", g.B, g.K * g.N, strideB}, {"C", g.C, g.M * g.N, strideC}} {
		if need := ((batch-1)*x.stride + x.n) * elem; need > x.b.size {
			return colMajorGemm{}, fmt.Errorf("cuda: Gemm %d×%d×%d batch of %d: %s with stride %d needs %d bytes, its buffer has %d", g.M, g.N, g.K, batch, x.name, x.stride, need, x.b.size)
		}
	}
	return c, nil
}
