package cuda

import (
	"math"
	"testing"
)

// gemmColMajor is the reference BLAS gemm on column-major arrays:
// C ← op1(X)·op2(Y) with C m×n (ldc), op1(X) m×k, op2(Y) k×n.
func gemmColMajor(c colMajorGemm, x, y, out []float64) {
	at := func(a []float64, op, ld, i, j int32) float64 { // op(a)[i, j]
		if op == opT {
			return a[j+i*ld]
		}
		return a[i+j*ld]
	}
	for j := int32(0); j < c.n; j++ {
		for i := int32(0); i < c.m; i++ {
			s := 0.0
			for l := int32(0); l < c.k; l++ {
				s += at(x, c.op1, c.ld1, i, l) * at(y, c.op2, c.ld2, l, j)
			}
			out[i+j*c.ldc] = s
		}
	}
}

// TestGemmColMajor checks the row-major trick without a GPU: the
// column-major call that colMajor builds, run by a reference gemm on the
// row-major arrays, must leave the row-major product in C.
func TestGemmColMajor(t *testing.T) {
	const m, n, k = 3, 4, 5
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		ta, tb := tr[0], tr[1]
		a, b := make([]float64, m*k), make([]float64, k*n)
		for i := range a {
			a[i] = float64(i*i%7) - 3
		}
		for i := range b {
			b[i] = float64(i%5) + 0.5
		}
		opA := func(i, l int) float64 { // op(A)[i, l], A stored row-major
			if ta {
				return a[l*m+i]
			}
			return a[i*k+l]
		}
		opB := func(l, j int) float64 {
			if tb {
				return b[j*k+l]
			}
			return b[l*n+j]
		}
		buf := func(elems int) *Buffer { return &Buffer{size: 8 * elems} }
		g := Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, A: buf(m * k), B: buf(k * n), C: buf(m * n)}
		c, err := g.colMajor(8)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, m*n)
		gemmColMajor(c, b, a, got) // cuBLAS is called with B first
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				for l := 0; l < k; l++ {
					want += opA(i, l) * opB(l, j)
				}
				if got[i*n+j] != want {
					t.Fatalf("transA=%v transB=%v: C[%d,%d] = %g, want %g", ta, tb, i, j, got[i*n+j], want)
				}
			}
		}
	}
}

func TestGemmChecks(t *testing.T) {
	small := &Buffer{size: 8 * 6}
	huge := math.MaxInt32
	huge++ // beyond cuBLAS's int (on 32-bit targets it wraps negative: also refused)
	for _, g := range []Gemm{
		{M: 0, N: 2, K: 3, A: small, B: small, C: small},
		{M: 2, N: 2, K: 3, A: small, B: small},
		{M: 2, N: 4, K: 3, A: small, B: small, C: small}, // B needs 12 elements
		{M: huge, N: 1, K: 1, A: small, B: small, C: small},
	} {
		if _, err := g.colMajor(8); err == nil {
			t.Errorf("colMajor(%+v) accepted", g)
		}
	}
}

// TestGemmBatchedChecks: a strided batch must fit each buffer up to its
// last matrix, keep C's products apart and have a positive batch and
// non-negative strides; a stride of 0 repeats A or B.
func TestGemmBatchedChecks(t *testing.T) {
	buf := &Buffer{size: 8 * 100}
	g := Gemm{M: 2, N: 3, K: 4, A: buf, B: buf, C: buf} // A 8, B 12, C 6 elements
	for _, c := range []struct {
		batch, sa, sb, sc int
		ok                bool
	}{
		{4, 8, 12, 6, true},
		{4, 0, 0, 6, true},     // A and B repeated
		{12, 8, 0, 8, true},    // A ends at 11·8+8 = 96 ≤ 100
		{13, 7, 0, 7, true},    // C ends at 12·7+6 = 90
		{14, 0, 8, 7, false},   // B ends at 13·8+12 = 116 > 100
		{4, 8, 12, 5, false},   // C's products overlap
		{1, 8, 12, 0, true},    // one product: C's stride is unused
		{0, 8, 12, 6, false},   // empty batch
		{4, -1, 12, 6, false},  // negative stride
		{9, 12, 12, 12, false}, // A ends at 8·12+8 = 104 > 100
	} {
		_, err := g.colMajorBatched(8, c.batch, c.sa, c.sb, c.sc)
		if (err == nil) != c.ok {
			t.Errorf("colMajorBatched(batch %d, strides %d, %d, %d) = %v, want ok=%v", c.batch, c.sa, c.sb, c.sc, err, c.ok)
		}
	}
}
