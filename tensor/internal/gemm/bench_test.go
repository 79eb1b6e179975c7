package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchShapes are M×K×N products; f64Only ones are skipped for float32.
var benchShapes = []struct {
	m, k, n int
	f64Only bool
}{
	{64, 64, 64, false}, {128, 128, 128, false}, {256, 256, 256, false},
	{512, 512, 512, false}, {1024, 1024, 1024, false}, {2048, 2048, 2048, false},
	{128, 784, 512, false}, {128, 512, 512, false},
	{2000, 2000, 2000, true},
}

func randSlice[T float](n int, rng *rand.Rand) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*2 - 1)
	}
	return s
}

// BenchmarkGemm reports GFLOP/s (2·M·K·N per op) for C = A·B, row-major, no
// transposes, beta = 0, with the default thread count (see SetThreads).
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, dt := range []string{"f32", "f64"} {
		b.Run(dt, func(b *testing.B) {
			for _, s := range benchShapes {
				if s.f64Only && dt == "f32" {
					continue
				}
				b.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(b *testing.B) {
					flops := 2 * float64(s.m) * float64(s.k) * float64(s.n)
					switch dt {
					case "f32":
						x, y, z := randSlice[float32](s.m*s.k, rng), randSlice[float32](s.k*s.n, rng), make([]float32, s.m*s.n)
						Sgemm(false, false, s.m, s.n, s.k, 1, x, s.k, y, s.n, 0, z, s.n)
						b.ResetTimer()
						for b.Loop() {
							Sgemm(false, false, s.m, s.n, s.k, 1, x, s.k, y, s.n, 0, z, s.n)
						}
					case "f64":
						x, y, z := randSlice[float64](s.m*s.k, rng), randSlice[float64](s.k*s.n, rng), make([]float64, s.m*s.n)
						Dgemm(false, false, s.m, s.n, s.k, 1, x, s.k, y, s.n, 0, z, s.n)
						b.ResetTimer()
						for b.Loop() {
							Dgemm(false, false, s.m, s.n, s.k, 1, x, s.k, y, s.n, 0, z, s.n)
						}
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		})
	}
}
