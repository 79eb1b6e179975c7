//go:build amd64

package gemm

import (
	"fmt"
	"testing"

	"github.com/gradus-ml/gradus/internal/cpuinfo"
)

// BenchmarkKernel measures the assembly micro-kernels alone on L1-resident
// packed panels (an upper bound for the full GEMM): the AVX2 ones, and the
// AVX-512 ones (s512, d512) where the CPU has them. Besides GFLOP/s it
// reports peak-fraction: the rate over one core's FMA peak at the kernel's
// width and precision, probed right after the timed loop.
func BenchmarkKernel(b *testing.B) {
	type kern struct {
		name   string
		bits   int
		mr, nr int
		s      func(k int, a, b, c *float32, ldc int, alpha, beta float32)
		d      func(k int, a, b, c *float64, ldc int, alpha, beta float64)
	}
	kernels := []kern{{"d", 256, 6, 8, nil, dgemmKernel6x8}, {"s", 256, 6, 16, sgemmKernel6x16, nil}}
	if hasWide {
		kernels = append(kernels, kern{"d512", 512, 6, 16, nil, dgemmKernel6x16}, kern{"s512", 512, 6, 32, sgemmKernel6x32, nil})
	}
	for _, k := range []int{64, 128, 256, 512} {
		for _, kn := range kernels {
			b.Run(fmt.Sprintf("%s/k=%d", kn.name, k), func(b *testing.B) {
				if kn.s != nil {
					a, bb, c := alignedSlice[float32](kn.mr*k), alignedSlice[float32](kn.nr*k), alignedSlice[float32](kn.mr*kn.nr)
					for b.Loop() {
						kn.s(k, &a[0], &bb[0], &c[0], kn.nr, 1, 0)
					}
				} else {
					a, bb, c := alignedSlice[float64](kn.mr*k), alignedSlice[float64](kn.nr*k), alignedSlice[float64](kn.mr*kn.nr)
					for b.Loop() {
						kn.d(k, &a[0], &bb[0], &c[0], kn.nr, 1, 0)
					}
				}
				g := float64(2*kn.mr*kn.nr*k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
				b.ReportMetric(g, "GFLOP/s")
				if peak := cpuinfo.PeakGFLOPS(kn.bits, kn.d != nil, 1, 1_000_000); peak > 0 {
					b.ReportMetric(g/peak, "peak-fraction")
				}
			})
		}
	}
}

// BenchmarkGemmSingleThread is BenchmarkGemm with SetThreads(1).
func BenchmarkGemmSingleThread(b *testing.B) {
	prev := SetThreads(1)
	defer SetThreads(prev)
	BenchmarkGemm(b)
}
