package tensor

import (
	"fmt"
	"testing"
)

// laReportGFLOPS reports the rate of b.N operations of flops each.
func laReportGFLOPS(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMatMul(b *testing.B) {
	shapes := []struct {
		name    string
		m, k, n int
	}{
		{"128x784x512", 128, 784, 512},
		{"256", 256, 256, 256},
		{"1024", 1024, 1024, 1024},
	}
	for _, dt := range laDTypes {
		for _, s := range shapes {
			b.Run(laDTypeName(dt)+"/"+s.name, func(b *testing.B) {
				x, y := laRandom(dt, 1, s.m, s.k), laRandom(dt, 2, s.k, s.n)
				dst := New(dt, s.m, s.n)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					MatMulTo(dst, x, y)
				}
				laReportGFLOPS(b, 2*float64(s.m)*float64(s.k)*float64(s.n))
			})
		}
	}
}

// BenchmarkMatMulVector times the matrix-vector and vector-matrix
// products (gemv.go; float32 still goes through GEMM) into a reused
// destination; GB/s counts the matrix read once.
func BenchmarkMatMulVector(b *testing.B) {
	for _, dt := range laDTypes {
		for _, n := range []int{256, 1000} {
			a, x := laRandom(dt, 1, n, n), laRandom(dt, 2, n)
			for _, c := range []struct {
				name      string
				dst, l, r *Tensor
			}{
				{"Ax", New(dt, n, 1), a, Reshape(x, n, 1)},
				{"xA", New(dt, 1, n), Reshape(x, 1, n), a},
			} {
				b.Run(fmt.Sprintf("%s/%s/n%d", laDTypeName(dt), c.name, n), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(n * n * dt.Size()))
					for b.Loop() {
						MatMulTo(c.dst, c.l, c.r)
					}
				})
			}
		}
	}
}

func BenchmarkCholesky(b *testing.B) {
	for _, n := range []int{500, 1000, 2000} {
		b.Run(fmt.Sprintf("f64/n%d", n), func(b *testing.B) {
			a := laBenchSPD(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Cholesky(a); err != nil {
					b.Fatal(err)
				}
			}
			laReportGFLOPS(b, float64(n)*float64(n)*float64(n)/3)
		})
		// CholeskyTo into a reused destination: the factorisation alone,
		// without allocating and faulting in a fresh n×n result.
		b.Run(fmt.Sprintf("f64/n%d/To", n), func(b *testing.B) {
			a := laBenchSPD(n)
			dst := New(Float64, n, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := CholeskyTo(dst, a); err != nil {
					b.Fatal(err)
				}
			}
			laReportGFLOPS(b, float64(n)*float64(n)*float64(n)/3)
		})
	}
}

func BenchmarkTriSolve(b *testing.B) {
	const n, k = 1000, 1000
	b.Run(fmt.Sprintf("f64/n%dx%d", n, k), func(b *testing.B) {
		l, err := Cholesky(laBenchSPD(n))
		if err != nil {
			b.Fatal(err)
		}
		rhs := laRandom(Float64, 2, n, k)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			TriSolve(l, rhs, true, false)
		}
		laReportGFLOPS(b, float64(n)*float64(n)*float64(k))
	})
}

func laDTypeName(dt DType) string {
	if dt == Float32 {
		return "f32"
	}
	return "f64"
}

// laBenchSPD returns MᵀM + nI for a random n×n M, built with MatMulT since
// the naive reference product is far too slow at benchmark sizes.
func laBenchSPD(n int) *Tensor {
	m := laRandom(Float64, 1, n, n)
	return Add(MatMulT(m, m, true, false), laScale(Eye(Float64, n), float64(n)))
}

// BenchmarkCholeskyGrad times the reverse sweep of the factorisation into a
// reused destination; GFLOP/s counts the 2n³/3 flops of its GEMM-shaped
// updates.
func BenchmarkCholeskyGrad(b *testing.B) {
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("f64/n%d", n), func(b *testing.B) {
			l, err := Cholesky(laBenchSPD(n))
			if err != nil {
				b.Fatal(err)
			}
			lbar := laRandom(Float64, 3, n, n)
			dst := New(Float64, n, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				CholeskyGradTo(dst, l, lbar)
			}
			laReportGFLOPS(b, 2*float64(n)*float64(n)*float64(n)/3)
		})
	}
}
