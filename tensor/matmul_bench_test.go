package tensor

import (
	"testing"
)

// BenchmarkBatchedMatMul times the batched products of multi-head
// attention (batch 32 × 4 heads, sequence 128, head width 64): scores
// Q·Kᵀ, context P·V and the gradient products, in float32.
func BenchmarkBatchedMatMul(b *testing.B) {
	rng := NewRNG(1)
	q := rng.Normal(Float32, 0, 1, 32, 4, 128, 64)
	p := rng.Normal(Float32, 0, 1, 32, 4, 128, 128)
	// As attention reads them: heads split from (batch, seq, width) rows.
	qs := Permute(Reshape(rng.Normal(Float32, 0, 1, 32, 128, 256), 32, 128, 4, 64), 0, 2, 1, 3)
	for _, c := range []struct {
		name           string
		x, y           *Tensor
		transX, transY bool
		m, n, k        int
	}{
		{"QKt", q, q, false, true, 128, 128, 64},
		{"PV", p, q, false, false, 128, 64, 128},
		{"PtV", p, q, true, false, 128, 64, 128},
		{"QKt-strided", qs, qs, false, true, 128, 128, 64},
		{"PV-strided", p, qs, false, false, 128, 64, 128},
		{"PtV-strided", p, qs, true, false, 128, 64, 128},
	} {
		dst := New(Float32, 32, 4, c.m, c.n)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				MatMulTTo(dst, c.x, c.y, c.transX, c.transY)
			}
			flops := 2 * float64(32*4*c.m*c.n*c.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
