package main

import (
	"iter"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// trainer returns a full training step for a module: reset the graph, build
// the loss with lossFn, differentiate it with respect to every parameter and
// take an Adam step (learning rate 1e-3). Everything a real training loop does
// per batch is inside the timed step; the batch itself is fixed synthetic data.
func trainer(ps []nn.NamedParam, lossFn func(g *graph.Graph) *graph.Node) step {
	for _, p := range ps { // to -device, before the optimiser keeps them
		p.Value = onDevice(p.Value)
	}
	g := graph.New()
	opt := optim.NewAdam(nn.Values(ps), optim.AdamOptions{LR: 1e-3})
	return func() {
		g.Reset()
		loss := lossFn(g)
		if err := opt.Step(nn.Gradients(loss, ps)); err != nil {
			panic(err)
		}
	}
}

// labels returns n class labels in [0, classes) drawn from rng.
func labels(rng *tensor.RNG, n, classes int) []int {
	ys := make([]int, n)
	for i := range ys {
		ys[i] = rng.Intn(classes)
	}
	return ys
}

// mlpWorkload trains a 784-512-512-10 ReLU perceptron with softmax
// cross-entropy on batches of 128.
func mlpWorkload() workload {
	const batch = 128
	return seeded("mlp_train", 20, throughput("samples_per_s", batch), func(rng *tensor.RNG) step {
		m := nn.NewSequential(
			nn.NewLinear(rng, 784, 512, true, tensor.Float32), nn.ReLU{},
			nn.NewLinear(rng, 512, 512, true, tensor.Float32), nn.ReLU{},
			nn.NewLinear(rng, 512, 10, true, tensor.Float32),
		)
		x := onDevice(rng.Normal(tensor.Float32, 0, 1, batch, 784))
		ys := labels(rng, batch, 10)
		return trainer(m.Params(), func(g *graph.Graph) *graph.Node {
			return losses.CrossEntropy(m.Forward(g.Const(x)), ys, losses.CrossEntropyOptions{})
		})
	}).onGPU()
}

// mlpLoaderWorkload is mlpWorkload fed by a prefetching data.Loader
// (Workers: 2, of which the loader starts GOMAXPROCS−1 on a small machine;
// shuffled; batches of 128 drawn from 1,024 synthetic examples) instead of
// one pre-made batch: waiting for each batch, converting its labels and
// releasing it back to the loader after the step are inside the timed step,
// so its samples_per_s against mlp_train's in the same run (best with
// -rounds, which alternates them) is the loader's overhead.
func mlpLoaderWorkload() workload {
	const batch, n = 128, 1024
	return seeded("mlp_loader_train", 20, throughput("samples_per_s", batch), func(rng *tensor.RNG) step {
		m := nn.NewSequential(
			nn.NewLinear(rng, 784, 512, true, tensor.Float32), nn.ReLU{},
			nn.NewLinear(rng, 512, 512, true, tensor.Float32), nn.ReLU{},
			nn.NewLinear(rng, 512, 10, true, tensor.Float32),
		)
		ys := labels(rng, n, 10)
		ds := data.TensorDataset{X: rng.Normal(tensor.Float32, 0, 1, n, 784), Labels: ys}
		ld := data.NewLoader(ds, data.LoaderOptions{BatchSize: batch, DropLast: true, Workers: 2,
			Sampler: data.Random{N: n, Seed: 1}})
		epoch := 0
		next, _ := iter.Pull(ld.Epoch(epoch))
		var cur data.Batch
		tr := trainer(m.Params(), func(g *graph.Graph) *graph.Node {
			return losses.CrossEntropy(m.Forward(g.Const(cur.X)), cur.Labels, losses.CrossEntropyOptions{})
		})
		return func() {
			b, ok := next()
			if !ok {
				epoch++
				next, _ = iter.Pull(ld.Epoch(epoch))
				b, _ = next()
			}
			cur = b
			tr()
			ld.Release(b)
		}
	})
}

// cnnWorkload trains a small LeNet-like network on 1×28×28 inputs in batches
// of 64: conv3×3(16) → ReLU → maxpool2 → conv3×3(32) → ReLU → maxpool2 →
// Linear(1568→10), convolutions padded by 1 and without bias.
func cnnWorkload() workload {
	const batch = 64
	return seeded("cnn_train", 10, throughput("samples_per_s", batch), func(rng *tensor.RNG) step {
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
		x := onDevice(rng.Normal(tensor.Float32, 0, 1, batch, 1, 28, 28))
		ys := labels(rng, batch, 10)
		return trainer(m.Params(), func(g *graph.Graph) *graph.Node {
			return losses.CrossEntropy(m.Forward(g.Const(x)), ys, losses.CrossEntropyOptions{})
		})
	}).onGPU()
}

// Recurrent workloads train a stack (input 32, hidden 128) over sequences
// of 50 steps in batches of 32, with the mean squared error of the final
// hidden states against a fixed random target: lstm_train and gru_train
// a one-layer LSTM and GRU, lstm_bi_train a two-layer bidirectional LSTM
// (both directions' hidden products batched into one per step).
func lstmWorkload() workload { return recurrentWorkload("lstm_train", true, nn.RNNOptions{}) }
func gruWorkload() workload  { return recurrentWorkload("gru_train", false, nn.RNNOptions{}) }
func lstmBiWorkload() workload {
	return recurrentWorkload("lstm_bi_train", true, nn.RNNOptions{Layers: 2, Bidirectional: true})
}

func recurrentWorkload(name string, lstm bool, opts nn.RNNOptions) workload {
	const batch, seq, in, hidden = 32, 50, 32, 128
	return seeded(name, 5, throughput("sequences_per_s", batch), func(rng *tensor.RNG) step {
		var forward func(x *graph.Node) *graph.Node // the final hidden states
		var params []nn.NamedParam
		if lstm {
			m := nn.NewLSTM(rng, in, hidden, opts)
			forward = func(x *graph.Node) *graph.Node { _, h, _ := m.Forward(x, nil, nil); return h }
			params = m.Params()
		} else {
			m := nn.NewGRU(rng, in, hidden, opts)
			forward = func(x *graph.Node) *graph.Node { _, h := m.Forward(x, nil); return h }
			params = m.Params()
		}
		states := max(opts.Layers, 1)
		if opts.Bidirectional {
			states *= 2
		}
		x := onDevice(rng.Normal(tensor.Float32, 0, 1, seq, batch, in))
		target := onDevice(rng.Normal(tensor.Float32, 0, 1, states, batch, hidden))
		return trainer(params, func(g *graph.Graph) *graph.Node {
			return losses.MSE(forward(g.Const(x)), g.Const(target), losses.Mean)
		})
	}).onGPU()
}

// vaeWorkload trains a 784-400-20 variational autoencoder (Kingma and Welling
// 2014) on binary images in batches of 128: encoder Linear(784→400), ReLU,
// then Linear(400→20) each for the mean and the log-variance; decoder
// Linear(20→400), ReLU, Linear(400→784) logits. The loss is the summed
// Bernoulli negative log-likelihood (BCE with logits) plus the analytic KL
// divergence to N(0, I); the reparameterisation noise is drawn afresh each
// step, as in PyTorch's example.
func vaeWorkload() workload {
	const batch, dIn, dHid, dLat = 128, 784, 400, 20
	return seeded("vae_train", 20, throughput("samples_per_s", batch), func(rng *tensor.RNG) step {
		enc := nn.NewLinear(rng, dIn, dHid, true, tensor.Float32)
		mu := nn.NewLinear(rng, dHid, dLat, true, tensor.Float32)
		lv := nn.NewLinear(rng, dHid, dLat, true, tensor.Float32)
		dec1 := nn.NewLinear(rng, dLat, dHid, true, tensor.Float32)
		dec2 := nn.NewLinear(rng, dHid, dIn, true, tensor.Float32)
		var ps []nn.NamedParam
		for _, l := range []*nn.Linear{enc, mu, lv, dec1, dec2} {
			ps = append(ps, l.Params()...)
		}
		x := onDevice(rng.Bernoulli(tensor.Float32, 0.5, batch, dIn))
		eps := tensor.Zeros(tensor.Float32, batch, dLat)
		noise := eps.Float32s()
		return trainer(ps, func(g *graph.Graph) *graph.Node {
			for i := range noise {
				noise[i] = float32(rng.NormFloat64())
			}
			xn := g.Const(x)
			h := graph.Relu(enc.Forward(xn))
			m, logvar := mu.Forward(h), lv.Forward(h)
			z := graph.Add(m, graph.Mul(graph.Exp(graph.MulScalar(logvar, 0.5)), g.Const(eps)))
			logits := dec2.Forward(graph.Relu(dec1.Forward(z)))
			rec := losses.BCEWithLogits(logits, xn, losses.Sum)
			return graph.Add(rec, losses.KLDiagGaussian(m, logvar, losses.Sum))
		})
	}).onGPU()
}
