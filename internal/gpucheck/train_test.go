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

// mlpTask is examples/bench's mlp_train: a 784-512-512-10 ReLU perceptron
// with softmax cross-entropy and Adam (learning rate 1e-3) on a fixed
// batch of 128, built from seed on the CPU and moved to dev. short
// shrinks it (784-64-10, batch 32) for the fake device.
type mlpTask struct {
	model *nn.Sequential
	x     *tensor.Tensor
	ys    []int
	g     *graph.Graph
	opt   *optim.Adam
}

func newMLPTask(dev tensor.Device, short bool) *mlpTask {
	rng := tensor.NewRNG(7)
	batch, hidden := 128, []int{512, 512}
	if short {
		batch, hidden = 32, []int{64}
	}
	var layers []nn.Layer
	in := 784
	for _, h := range hidden {
		layers = append(layers, nn.NewLinear(rng, in, h, true, tensor.Float32), nn.ReLU{})
		in = h
	}
	layers = append(layers, nn.NewLinear(rng, in, 10, true, tensor.Float32))
	m := nn.NewSequential(layers...)
	x := rng.Normal(tensor.Float32, 0, 1, batch, 784)
	ys := make([]int, batch)
	for i := range ys {
		ys[i] = rng.Intn(10)
	}
	nn.To(m, dev)
	return &mlpTask{model: m, x: x.To(dev), ys: ys, g: graph.New(),
		opt: optim.NewAdam(nn.Values(m.Params()), optim.AdamOptions{LR: 1e-3})}
}

// step runs one training step and returns its loss node.
func (s *mlpTask) step(tb testing.TB) *graph.Node {
	s.g.Reset()
	loss := losses.CrossEntropy(s.model.Forward(s.g.Const(s.x)), s.ys, losses.CrossEntropyOptions{})
	if err := s.opt.Step(nn.Gradients(loss, s.model.Params())); err != nil {
		tb.Fatal(err)
	}
	return loss
}

// TestMLPTrainMatchesCPU trains the same perceptron from the same start
// on the GPU and on the CPU: every step's loss, and the parameters after
// the last, agree within float32 rounding grown over the steps (cuBLAS
// and the GPU's reductions add in other orders than the CPU).
func TestMLPTrainMatchesCPU(t *testing.T) {
	dev := device(t)
	steps := 100
	if testing.Short() {
		steps = 10
	}
	gpu, cpu := newMLPTask(dev, testing.Short()), newMLPTask(tensor.CPU, testing.Short())
	compareTraining(t, dev, steps, 0.5, gpu.step, cpu.step)
	for i, p := range gpu.model.Params() {
		near(t, p.Name, p.Value, cpu.model.Params()[i].Value, 1e-3)
	}
}

// compareTraining runs steps training steps on the GPU and on the CPU
// from one start: every step's loss must agree within 10⁻⁵ of the first
// step's (the loss can fall by orders of magnitude as the net learns the
// batch, so differences are measured against where it started), and the
// CPU's last loss must be below drop times its first.
func compareTraining(t *testing.T, dev tensor.Device, steps int, drop float64, gpu, cpu func(testing.TB) *graph.Node) {
	t.Helper()
	worst := 0.0
	var first, last [2]float64
	for i := range steps {
		lg, lc := gpu(t).Value().Item(), cpu(t).Value().Item()
		if i == 0 {
			first = [2]float64{lg, lc}
		}
		r := math.Abs(lg-lc) / math.Abs(first[1])
		worst = max(worst, r)
		if !(r <= 1e-5) {
			t.Fatalf("step %d: loss %v on %v, %v on the CPU (difference %.3g of the first loss)", i, lg, dev, lc, r)
		}
		last = [2]float64{lg, lc}
	}
	if !(last[1] < drop*first[1]) {
		t.Errorf("the loss went from %v to %v on the CPU: not training", first[1], last[1])
	}
	t.Logf("%d steps: loss %.6g -> %.6g on %v, %.6g -> %.6g on the CPU; worst difference %.3g of the first loss",
		steps, first[0], last[0], dev, first[1], last[1], worst)
}

// BenchmarkMLPTrain times examples/bench's mlp_train step on the GPU; its
// examples/s compare with torch_bench.py --device cuda's mlp_train.
func BenchmarkMLPTrain(b *testing.B) {
	dev := device(b)
	s := newMLPTask(dev, false)
	benchSteps(b, dev, s.x.Shape()[0], func() { s.step(b) })
}

// vaeTask is examples/bench's vae_train: a 784-400-20 Gaussian VAE with a
// Bernoulli decoder, summed losses and Adam (1e-3), on a fixed binary
// batch of 128; the reparameterisation noise is drawn on the host each
// step, from one seed on both devices, and copied in. short shrinks it.
type vaeTask struct {
	layers []*nn.Linear
	x      *tensor.Tensor
	noise  *tensor.Tensor // on the host
	eps    *tensor.Tensor // on the device
	rng    *tensor.RNG
	g      *graph.Graph
	opt    *optim.Adam
}

func newVAETask(dev tensor.Device, short bool) *vaeTask {
	rng := tensor.NewRNG(11)
	batch, dIn, dHid, dLat := 128, 784, 400, 20
	if short {
		batch, dHid = 16, 32
	}
	s := &vaeTask{rng: tensor.NewRNG(12), g: graph.New()}
	for _, io := range [][2]int{{dIn, dHid}, {dHid, dLat}, {dHid, dLat}, {dLat, dHid}, {dHid, dIn}} {
		l := nn.NewLinear(rng, io[0], io[1], true, tensor.Float32)
		nn.To(l, dev)
		s.layers = append(s.layers, l)
	}
	s.x = rng.Bernoulli(tensor.Float32, 0.5, batch, dIn).To(dev)
	s.noise = tensor.Zeros(tensor.Float32, batch, dLat)
	s.eps = tensor.NewOn(dev, tensor.Float32, batch, dLat)
	var ps []*tensor.Tensor
	for _, l := range s.layers {
		ps = append(ps, nn.Values(l.Params())...)
	}
	s.opt = optim.NewAdam(ps, optim.AdamOptions{LR: 1e-3})
	return s
}

func (s *vaeTask) step(tb testing.TB) *graph.Node {
	s.g.Reset()
	noise := s.noise.Float32s()
	for i := range noise {
		noise[i] = float32(s.rng.NormFloat64())
	}
	tensor.CopyInto(s.eps, s.noise)
	enc, mu, lv, dec1, dec2 := s.layers[0], s.layers[1], s.layers[2], s.layers[3], s.layers[4]
	xn := s.g.Const(s.x)
	h := graph.Relu(enc.Forward(xn))
	m, logvar := mu.Forward(h), lv.Forward(h)
	z := graph.Add(m, graph.Mul(graph.Exp(graph.MulScalar(logvar, 0.5)), s.g.Const(s.eps)))
	logits := dec2.Forward(graph.Relu(dec1.Forward(z)))
	loss := graph.Add(losses.BCEWithLogits(logits, xn, losses.Sum), losses.KLDiagGaussian(m, logvar, losses.Sum))
	var ps []nn.NamedParam
	for _, l := range s.layers {
		ps = append(ps, l.Params()...)
	}
	if err := s.opt.Step(nn.Gradients(loss, ps)); err != nil {
		tb.Fatal(err)
	}
	return loss
}

// TestVAETrainMatchesCPU is TestMLPTrainMatchesCPU for the VAE.
func TestVAETrainMatchesCPU(t *testing.T) {
	dev := device(t)
	steps := 100
	if testing.Short() {
		steps = 10
	}
	gpu, cpu := newVAETask(dev, testing.Short()), newVAETask(tensor.CPU, testing.Short())
	compareTraining(t, dev, steps, 1, gpu.step, cpu.step)
}

// BenchmarkVAETrain times examples/bench's vae_train step on the GPU.
func BenchmarkVAETrain(b *testing.B) {
	dev := device(b)
	s := newVAETask(dev, false)
	benchSteps(b, dev, s.x.Shape()[0], func() { s.step(b) })
}
