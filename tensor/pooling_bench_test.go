package tensor

import "testing"

// BenchmarkMaxPool2D times 2×2 max pooling and its gradient on the first
// pooling of the CNN benchmark (64×16×28×28, float32) into reused buffers.
func BenchmarkMaxPool2D(b *testing.B) {
	rng := NewRNG(1)
	x := rng.Normal(Float32, 0, 1, 64, 16, 28, 28)
	p := PoolParams{Kernel: [2]int{2, 2}}
	y, argmax := MaxPool2D(x, p)
	dx := ZerosLike(x)
	b.Run("forward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			MaxPool2DTo(y, argmax, x, p)
		}
	})
	b.Run("grad", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			MaxPool2DGradTo(dx, y, argmax, x.Shape())
		}
	})
}
