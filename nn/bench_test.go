package nn_test

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// benchStep measures one training step's forward and backward pass of a
// model on a graph that is Reset between steps, as a training loop does.
func benchStep(b *testing.B, ps []nn.NamedParam, forward func(g *graph.Graph) *graph.Node) {
	g := graph.New()
	b.ReportAllocs()
	for b.Loop() {
		loss := graph.Mean(graph.Square(forward(g)), nil, false)
		nn.Gradients(loss, ps)
		g.Reset()
	}
}

func BenchmarkMLPStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(
		nn.NewLinear(rng, 784, 256, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 256, 10, true, tensor.Float32))
	x := rng.Normal(tensor.Float32, 0, 1, 64, 784)
	benchStep(b, model.Params(), func(g *graph.Graph) *graph.Node { return model.Forward(g.Const(x)) })
}

func BenchmarkLSTMStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	lstm := nn.NewLSTM(rng, 28, 128, nn.RNNOptions{BatchFirst: true})
	x := rng.Normal(tensor.Float32, 0, 1, 64, 28, 28)
	benchStep(b, lstm.Params(), func(g *graph.Graph) *graph.Node {
		_, h, _ := lstm.Forward(g.Const(x), nil, nil)
		return h
	})
}

func BenchmarkConvStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(
		nn.NewConv2D(rng, 1, 32, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
		nn.NewBatchNorm2D(32, tensor.Float32), nn.ReLU{},
		nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}}), nn.NewFlatten(),
		nn.NewLinear(rng, 32*14*14, 10, true, tensor.Float32))
	x := rng.Normal(tensor.Float32, 0, 1, 32, 1, 28, 28)
	benchStep(b, model.Params(), func(g *graph.Graph) *graph.Node { return model.Forward(g.Const(x)) })
}
