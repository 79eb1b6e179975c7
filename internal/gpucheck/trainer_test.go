//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// TestTrainerOnGPU fits the same classifier with train.Trainer on the GPU
// and on the CPU (SGD with momentum, two micro-batches per step, gradient
// clipping, a best checkpoint): the losses of every epoch and the final
// parameters agree within float32 rounding grown over the steps, the
// checkpoint holds the GPU model's parameters, and train.Predict runs the
// GPU model on CPU rows, returning the CPU model's classes.
func TestTrainerOnGPU(t *testing.T) {
	dev := device(t)
	rng := tensor.NewRNG(3)
	const n, in, classes = 96, 12, 3
	x := rng.Normal(tensor.Float32, 0, 1, n, in)
	labels := make([]int, n)
	xv := x.Values()
	for i := range labels { // the class is the largest of three features
		labels[i] = int(slices.Index(xv[i*in:i*in+3], slices.Max(xv[i*in:i*in+3])))
	}
	ds := data.TensorDataset{X: x, Labels: labels}
	newModel := func(d tensor.Device) (*nn.Sequential, *optim.SGD) {
		r := tensor.NewRNG(5)
		m := nn.NewSequential(nn.NewLinear(r, in, 16, true, tensor.Float32), nn.Tanh{}, nn.NewLinear(r, 16, classes, true, tensor.Float32))
		nn.To(m, d)
		return m, optim.NewSGD(nn.Values(m.Params()), optim.SGDOptions{LR: 0.2, Momentum: 0.9})
	}
	fit := func(d tensor.Device, best string) (*nn.Sequential, *optim.SGD, train.History) {
		m, opt := newModel(d)
		loss := func(g *graph.Graph, b data.Batch, _ *tensor.RNG) *graph.Node {
			return losses.CrossEntropy(m.Forward(g.Const(b.X)), b.Labels, losses.CrossEntropyOptions{})
		}
		loader := data.NewLoader(ds, data.LoaderOptions{BatchSize: 16, Sampler: data.Random{N: n, Seed: 9}})
		tr := train.New(m, opt, loss, loader, train.Options{Epochs: 3, Accumulate: 2, ClipNorm: 1,
			Monitor: "train_loss", BestPath: best})
		h, err := tr.Fit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return m, opt, h
	}
	dir := t.TempDir()
	gm, gopt, gh := fit(dev, filepath.Join(dir, "gpu.safetensors"))
	cm, _, ch := fit(tensor.CPU, filepath.Join(dir, "cpu.safetensors"))
	for e := range ch.Records {
		gl, _ := gh.Records[e].Value("train_loss")
		cl, _ := ch.Records[e].Value("train_loss")
		if d := gl - cl; d > 1e-4 || d < -1e-4 {
			t.Fatalf("epoch %d: train loss %v on the GPU, %v on the CPU", e+1, gl, cl)
		}
	}
	for i, p := range gm.Params() {
		if p.Value.Device() != dev {
			t.Fatalf("%s lives on %v after training, want %v", p.Name, p.Value.Device(), dev)
		}
		near(t, p.Name, p.Value, cm.Params()[i].Value, 1e-4)
	}
	saved, _, err := checkpoint.ReadFile(filepath.Join(dir, "gpu.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range gm.Params() {
		if _, ok := saved[p.Name]; !ok {
			t.Fatalf("the GPU model's checkpoint lacks %s (it holds %d tensors)", p.Name, len(saved))
		}
	}
	// A full checkpoint (parameters and optimiser state) of the GPU run
	// restores into a fresh model and optimiser on the GPU, bit for bit.
	full := filepath.Join(dir, "full.safetensors")
	if err := checkpoint.Save(full, gm, checkpoint.SaveOptions{Optimizer: gopt}); err != nil {
		t.Fatal(err)
	}
	rm, ropt := newModel(dev)
	if _, err := checkpoint.LoadInto(full, rm, checkpoint.LoadOptions{Optimizer: ropt}); err != nil {
		t.Fatal(err)
	}
	for i, p := range rm.Params() {
		if p.Value.Device() != dev {
			t.Fatalf("restored %s lives on %v", p.Name, p.Value.Device())
		}
		near(t, "restored "+p.Name, p.Value, gm.Params()[i].Value.To(tensor.CPU), 0)
	}
	names := nn.Names(gm.Params())
	want, got := gopt.State(names), ropt.State(names)
	for k, v := range want {
		near(t, "restored optimiser state "+k, got[k], v.To(tensor.CPU), 0)
	}

	forward := func(m *nn.Sequential) train.Forward {
		return func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return m.Forward(g.Const(xb)) }
	}
	gc, gp := train.Predict(x, 40, forward(gm))
	cc, cp := train.Predict(x, 40, forward(cm))
	if gp.Device() != tensor.CPU {
		t.Errorf("Predict's probabilities live on %v, want the CPU", gp.Device())
	}
	if !slices.Equal(gc, cc) {
		t.Errorf("Predict's classes differ between the GPU and the CPU model")
	}
	near(t, "probabilities", gp, cp, 1e-4)
}
