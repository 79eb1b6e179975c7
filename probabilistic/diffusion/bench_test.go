package diffusion

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkUNetStep times one training step (loss and gradients) of the
// default U-Net on a batch of 64 digits.
func BenchmarkUNetStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	u := NewUNet(rng, UNetOptions{Base: 16}, tensor.Float32)
	s, _ := Linear(1000, 1e-4, 0.02)
	x := Noise(rng, tensor.Float32, 64, 1, 28, 28)
	g := graph.New()
	for b.Loop() {
		g.Reset()
		l := s.Loss(g, u.Forward, x, rng)
		nn.Gradients(l, u.Params())
	}
}
