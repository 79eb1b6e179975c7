package train_test

import (
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// BenchmarkLoaderFeedingMLP compares the MLP training step of
// examples/bench (784-512-512-10, batch 128, float32) fed by the
// prefetching data.Loader (2 workers, shuffled, collating from the
// embedded MNIST rows) with the same steps on batches made beforehand: the
// ratio of the two sub-benchmarks' ns/op is the loader's cost (issue 16
// asks for under 5 %).
func BenchmarkLoaderFeedingMLP(b *testing.B) {
	x, labels, err := data.MNIST("train")
	if err != nil {
		b.Fatal(err)
	}
	ds := data.TensorDataset{X: x, Labels: labels}
	const batch = 128
	setup := func() (*train.Trainer, *data.Loader) {
		rng := tensor.NewRNG(1)
		model := nn.NewSequential(nn.NewLinear(rng, 784, 512, true, tensor.Float32), nn.ReLU{},
			nn.NewLinear(rng, 512, 512, true, tensor.Float32), nn.ReLU{}, nn.NewLinear(rng, 512, 10, true, tensor.Float32))
		loss := func(g *graph.Graph, bt data.Batch, _ *tensor.RNG) *graph.Node {
			return losses.CrossEntropy(model.Forward(g.Const(bt.X)), bt.Labels, losses.CrossEntropyOptions{})
		}
		loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: batch, DropLast: true, Workers: 2,
			Sampler: data.Random{N: ds.Len(), Seed: 1}})
		return train.New(model, optim.NewAdam(nn.Values(model.Params()), optim.AdamOptions{LR: 1e-3}), loss, loader, train.Options{Epochs: 1}), loader
	}
	b.Run("loader", func(b *testing.B) {
		tr, loader := setup()
		b.ResetTimer()
		steps := 0
		for epoch := 0; steps < b.N; epoch++ {
			for bt := range loader.Epoch(epoch) {
				if _, err := tr.Step(bt); err != nil {
					b.Fatal(err)
				}
				if steps++; steps == b.N {
					break
				}
			}
		}
	})
	b.Run("premade", func(b *testing.B) {
		tr, loader := setup()
		var batches []data.Batch
		for bt := range loader.Epoch(0) {
			batches = append(batches, bt)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := tr.Step(batches[i%len(batches)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
