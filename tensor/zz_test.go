package tensor

import (
	"testing"
)

func BenchmarkZZG1024(b *testing.B) {
	n := 1024
	x := NewRNG(1).Normal(Float32, 0, 1, n, n)
	w := NewRNG(2).Normal(Float32, 0, 1, n, n)
	dst := New(Float32, n, n)
	for b.Loop() {
		MatMulTo(dst, x, w)
	}
	b.ReportMetric(float64(2*n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
