package data

import (
	"testing"

	"github.com/gradus-ml/gradus/tensor"
)

// benchDataset is the examples/bench loader workload's data: 1,024 float32
// rows of 784 features.
func benchDataset() TensorDataset {
	rng := tensor.NewRNG(1)
	labels := make([]int, 1024)
	for i := range labels {
		labels[i] = rng.Intn(10)
	}
	return TensorDataset{X: rng.Normal(tensor.Float32, 0, 1, 1024, 784), Labels: labels}
}

// BenchmarkLoaderEpoch times one shuffled epoch of eight batches of 128
// (-benchmem shows the allocations), the consumer releasing each batch.
func BenchmarkLoaderEpoch(b *testing.B) {
	for _, w := range []int{0, 1} {
		b.Run(map[int]string{0: "sync", 1: "prefetch"}[w], func(b *testing.B) {
			l := NewLoader(benchDataset(), LoaderOptions{BatchSize: 128, DropLast: true, Workers: w,
				Sampler: Random{N: 1024, Seed: 1}})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for bt := range l.Epoch(i) {
					l.Release(bt)
				}
			}
		})
	}
}
