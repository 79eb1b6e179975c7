package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
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

// BenchmarkOuterBatch writes the per-example weight gradients of a
// 784-128 layer at batch 128 (128 outer products of 128×784, 51 MB in
// float32) in several ways, interleaved per iteration so that a shared
// machine's load falls on all of them alike, and reports the median time
// of each: the packed GEMM with k = 1 (the path before the rank-1
// kernels), the rank-1 kernel with plain and with streaming stores, on one
// and two goroutines, and Go's memset of the same 51 MB as a floor. (On
// the Zen 5 machines measured, zeros are written two to three times
// faster than other data by the same streaming stores, so memset is a
// floor below what any gradient can reach.)
func BenchmarkOuterBatch(b *testing.B) {
	const nb, m, n = 128, 128, 784
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := randSlice[float32](nb*m, rng), randSlice[float32](nb*n, rng)
	c := make([]float32, nb*m*n)
	each := func(threads int, f func(bi int)) {
		done := make(chan struct{})
		for t := range threads {
			go func() {
				for bi := t; bi < nb; bi += threads {
					f(bi)
				}
				done <- struct{}{}
			}()
		}
		for range threads {
			<-done
		}
	}
	packed := func(bi int) {
		jb := job[float32]{p: pick(n, portableParamsS, asmParamsS, wideParamsS), transA: true, k: 1, alpha: 1,
			a: x[bi*m:], lda: m, b: y[bi*n:], ldb: n, c: c[bi*m*n:], ldc: n}
		execute(jb, &poolS, m, n, 1)
	}
	rank1 := func(stream bool) func(bi int) {
		return func(bi int) { SouterSerial(m, n, x[bi*m:], 1, y[bi*n:], c[bi*m*n:], n, false, stream) }
	}
	variants := []struct {
		name string
		f    func()
	}{
		{"packed_gemm_2", func() { each(2, packed) }},
		{"rank1_store_2", func() { each(2, rank1(false)) }},
		{"rank1_stream_2", func() { each(2, rank1(true)) }},
		{"rank1_stream_1", func() { each(1, rank1(true)) }},
		{"memset_1", func() { clear(c) }},
	}
	times := make([][]float64, len(variants))
	b.SetBytes(int64(4 * len(c) * len(variants)))
	for i := range b.N {
		for k := range variants {
			v := (i + k) % len(variants) // rotate the order
			t0 := time.Now()
			variants[v].f()
			times[v] = append(times[v], float64(time.Since(t0)))
		}
	}
	for k, v := range variants {
		slices.Sort(times[k])
		b.ReportMetric(times[k][len(times[k])/2]/1e3, v.name+"-µs")
	}
}
