//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// cnnTask is examples/bench's cnn_train: two 3×3 convolutions (16 and 32
// channels, no bias) with ReLU and 2×2 max pooling, a linear classifier,
// cross-entropy and Adam (1e-3) on a fixed batch of 64 28×28 images.
// short shrinks the batch to 8.
type cnnTask struct {
	model *nn.Sequential
	x     *tensor.Tensor
	ys    []int
	g     *graph.Graph
	opt   *optim.Adam
}

func newCNNTask(dev tensor.Device, short bool) *cnnTask {
	rng := tensor.NewRNG(13)
	batch := 64
	if short {
		batch = 8
	}
	conv := nn.Conv2DOptions{Padding: [2]int{1, 1}, NoBias: true}
	pool := tensor.PoolParams{Kernel: [2]int{2, 2}}
	m := nn.NewSequential(
		nn.NewConv2D(rng, 1, 16, [2]int{3, 3}, conv), nn.ReLU{},
		nn.NewMaxPool2D(pool),
		nn.NewConv2D(rng, 16, 32, [2]int{3, 3}, conv), nn.ReLU{},
		nn.NewMaxPool2D(pool),
		nn.NewFlatten(),
		nn.NewLinear(rng, 32*7*7, 10, true, tensor.Float32),
	)
	x := rng.Normal(tensor.Float32, 0, 1, batch, 1, 28, 28)
	ys := make([]int, batch)
	for i := range ys {
		ys[i] = rng.Intn(10)
	}
	nn.To(m, dev)
	return &cnnTask{model: m, x: x.To(dev), ys: ys, g: graph.New(),
		opt: optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 1e-3})}
}

func (s *cnnTask) step(tb testing.TB) *graph.Node {
	s.g.Reset()
	loss := losses.CrossEntropy(s.model.Forward(s.g.Const(s.x)), s.ys, losses.CrossEntropyOptions{})
	if err := s.opt.Step(nn.Gradients(loss, s.model.Params())); err != nil {
		tb.Fatal(err)
	}
	return loss
}

// TestCNNTrainMatchesCPU is TestMLPTrainMatchesCPU for the CNN.
func TestCNNTrainMatchesCPU(t *testing.T) {
	dev := device(t)
	steps := 100
	if testing.Short() {
		steps = 5
	}
	gpu, cpu := newCNNTask(dev, testing.Short()), newCNNTask(tensor.CPU, testing.Short())
	compareTraining(t, dev, steps, 1, gpu.step, cpu.step)
}

// BenchmarkCNNTrain times examples/bench's cnn_train step on the GPU.
func BenchmarkCNNTrain(b *testing.B) {
	dev := device(b)
	s := newCNNTask(dev, false)
	benchSteps(b, dev, s.x.Shape()[0], func() { s.step(b) })
}

// transformerTask is examples/bench's transformer_block: a pre-norm
// encoder block (width 256, 4 heads, feed-forward 1024, GELU), forward
// and the gradients of sum(out·r) for every parameter, on 32 sequences
// of 128 steps. short shrinks it to width 32, 2 heads, 4 × 16 steps.
type transformerTask struct {
	layer *nn.TransformerEncoderLayer
	x, r  *tensor.Tensor
	g     *graph.Graph
}

func newTransformerTask(dev tensor.Device, short bool) *transformerTask {
	rng := tensor.NewRNG(17)
	batch, seq, width, heads, ff := 32, 128, 256, 4, 1024
	if short {
		batch, seq, width, heads, ff = 4, 16, 32, 2, 64
	}
	l := nn.NewTransformerEncoderLayer(rng, width, heads, ff, tensor.Float32)
	nn.To(l, dev)
	x := rng.Normal(tensor.Float32, 0, 1, batch, seq, width)
	r := rng.Normal(tensor.Float32, 0, 1, batch, seq, width)
	return &transformerTask{layer: l, x: x.To(dev), r: r.To(dev), g: graph.New()}
}

// step returns the loss and the parameters' gradients.
func (s *transformerTask) step() (*graph.Node, []*tensor.Tensor) {
	s.g.Reset()
	out := s.layer.Forward(s.g.Const(s.x), nil, false)
	loss := graph.Sum(graph.Mul(out, s.g.Const(s.r)), nil, false)
	return loss, nn.Gradients(loss, s.layer.Params())
}

// TestTransformerBlockMatchesCPU compares the block's loss and every
// parameter's gradient on the GPU with the CPU's.
func TestTransformerBlockMatchesCPU(t *testing.T) {
	dev := device(t)
	gpu, cpu := newTransformerTask(dev, testing.Short()), newTransformerTask(tensor.CPU, testing.Short())
	lg, gg := gpu.step()
	lc, gc := cpu.step()
	if r := math.Abs(lg.Value().Item()-lc.Value().Item()) / max(1, math.Abs(lc.Value().Item())); !(r <= 1e-4) {
		t.Fatalf("loss %v on %v, %v on the CPU", lg.Value().Item(), dev, lc.Value().Item())
	}
	for i, p := range gpu.layer.Params() {
		scale := 0.0
		for _, v := range gc[i].Values() {
			scale = max(scale, math.Abs(v))
		}
		// Gradients are sums over the batch and the sequence: measure
		// their differences against the largest of them.
		near(t, p.Name+" gradient", tensor.MulScalar(gg[i].To(tensor.CPU), 1/scale), tensor.MulScalar(gc[i], 1/scale), 1e-4)
	}
}

// BenchmarkTransformerBlock times examples/bench's transformer_block
// step on the GPU.
func BenchmarkTransformerBlock(b *testing.B) {
	dev := device(b)
	s := newTransformerTask(dev, false)
	benchSteps(b, dev, s.x.Shape()[0], func() { s.step() })
}

// benchSteps times step after three warm-up calls, waiting for the
// device at both ends, and reports examples per second.
func benchSteps(b *testing.B, dev tensor.Device, examples int, step func()) {
	for range 3 {
		step()
	}
	if err := dev.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		step()
	}
	if err := dev.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*examples)/b.Elapsed().Seconds(), "examples/s")
}
