package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkConv2D times the forward pass and both gradients of the two
// convolutions of the MNIST CNN example and the two strided ones of the
// DCGAN discriminator (examples/bench's dcgan_train), writing into preallocated
// destinations as a training loop would. GFLOP/s counts 2 flops per
// multiply-add of the equivalent GEMM.
func BenchmarkConv2D(b *testing.B) {
	shapes := []struct {
		x, w []int
		p    ConvParams
	}{
		{[]int{64, 1, 28, 28}, []int{16, 1, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
		{[]int{64, 16, 14, 14}, []int{32, 16, 3, 3}, ConvParams{Padding: [2]int{1, 1}}},
		{[]int{64, 1, 28, 28}, []int{64, 1, 4, 4}, ConvParams{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
		{[]int{64, 64, 14, 14}, []int{128, 64, 4, 4}, ConvParams{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}},
	}
	for _, dt := range []DType{Float32, Float64} {
		for _, s := range shapes {
			name := fmt.Sprintf("%v/%dx%dx%dx%d_%dx%dx%dx%d", dt, s.x[0], s.x[1], s.x[2], s.x[3], s.w[0], s.w[1], s.w[2], s.w[3])
			rng := NewRNG(1)
			x := rng.Normal(dt, 0, 1, s.x...)
			w := rng.Normal(dt, 0, 1, s.w...)
			y := Conv2D(x, w, s.p)
			dy := rng.Normal(dt, 0, 1, y.Shape()...)
			dx, dw := ZerosLike(x), ZerosLike(w)
			flops := 2 * float64(y.Size()) * float64(s.w[1]*s.w[2]*s.w[3])
			run := func(pass string, f func()) {
				b.Run(name+"/"+pass, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						f()
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
			run("forward", func() { Conv2DTo(y, x, w, s.p) })
			run("inputgrad", func() { Conv2DInputGradTo(dx, dy, w, s.x, s.p) })
			run("weightgrad", func() { Conv2DWeightGradTo(dw, x, dy, s.w, s.p) })
		}
	}
}
