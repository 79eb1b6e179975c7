package main

import (
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/train"
)

// BenchmarkStep measures one training step of the 784-400-20 VAE on a
// batch of 128 embedded MNIST digits.
func BenchmarkStep(b *testing.B) {
	xb := firstDigits(b, 128)
	t, err := newTrainer(options{Hidden: 400, Training: cli.Training{Batch: 128, LR: 1e-3}, Latent: 20}, 1, xb, train.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := t.step(xb); err != nil {
			b.Fatal(err)
		}
	}
}
