//go:build amd64

package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkKernel measures the assembly micro-kernels alone on L1-resident
// packed panels (an upper bound for the full GEMM).
func BenchmarkKernel(b *testing.B) {
	for _, k := range []int{64, 128, 256, 512} {
		b.Run(fmt.Sprintf("d/k=%d", k), func(b *testing.B) {
			a := alignedSlice[float64](6 * k)
			bb := alignedSlice[float64](8 * k)
			c := alignedSlice[float64](6 * 8)
			for b.Loop() {
				dgemmKernel6x8(k, &a[0], &bb[0], &c[0], 8, 1, 0)
			}
			b.ReportMetric(float64(2*6*8*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("s/k=%d", k), func(b *testing.B) {
			a := alignedSlice[float32](6 * k)
			bb := alignedSlice[float32](16 * k)
			c := alignedSlice[float32](6 * 16)
			for b.Loop() {
				sgemmKernel6x16(k, &a[0], &bb[0], &c[0], 16, 1, 0)
			}
			b.ReportMetric(float64(2*6*16*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		if !hasWide {
			continue
		}
		b.Run(fmt.Sprintf("d512/k=%d", k), func(b *testing.B) {
			a := alignedSlice[float64](6 * k)
			bb := alignedSlice[float64](16 * k)
			c := alignedSlice[float64](6 * 16)
			for b.Loop() {
				dgemmKernel6x16(k, &a[0], &bb[0], &c[0], 16, 1, 0)
			}
			b.ReportMetric(float64(2*6*16*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("s512/k=%d", k), func(b *testing.B) {
			a := alignedSlice[float32](6 * k)
			bb := alignedSlice[float32](32 * k)
			c := alignedSlice[float32](6 * 32)
			for b.Loop() {
				sgemmKernel6x32(k, &a[0], &bb[0], &c[0], 32, 1, 0)
			}
			b.ReportMetric(float64(2*6*32*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkGemmSingleThread is BenchmarkGemm with SetThreads(1).
func BenchmarkGemmSingleThread(b *testing.B) {
	prev := SetThreads(1)
	defer SetThreads(prev)
	BenchmarkGemm(b)
}
