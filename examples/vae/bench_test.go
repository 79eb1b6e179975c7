package main

import (
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/train"
)

// BenchmarkStep measures one training step of the 784-400-20 VAE on a
// batch of 128 embedded MNIST digits.
func BenchmarkStep(b *testing.B) {
	x, _, err := data.MNIST("train")
	if err != nil {
		b.Fatal(err)
	}
	t, err := newTrainer(options{Hidden: 400, Training: cli.Training{Batch: 128, LR: 1e-3}, Latent: 20, Seed: 1}, x, train.Options{})
	if err != nil {
		b.Fatal(err)
	}
	idx := make([]int, 128)
	for i := range idx {
		idx[i] = i
	}
	xb := data.NewGatherer(x).Gather(idx)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := t.step(xb); err != nil {
			b.Fatal(err)
		}
	}
}
