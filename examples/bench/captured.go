package main

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// The captured training steps, each three workloads timed in the same
// run: X_eager builds the step eagerly on a Reset graph, X_unfused
// replays it with graph.Capture without fusion, stack views and shared
// packings (CaptureOptions.NoFusion; not for the transformer, whose
// capture takes seconds), and X replays it with them and reports its
// speed-up over the others (`-only
// mlp_train_captured,lstm_train_captured,transformer_block_captured`;
// the target is 1.3×).
//
//   - mlp_train_captured: mlp_train's 784-512-512-10 ReLU MLP on batches
//     of 128 with Adam(1e-3), its loss the softmax cross-entropy against
//     one-hot targets (a tensor, so a captured program reads each batch's
//     labels; losses.CrossEntropy takes them as a []int, which a program
//     would freeze);
//   - lstm_train_captured: lstm_train's LSTM (input 32, hidden 128, 50
//     steps, batch 32), MSE of the final hidden state, Adam(1e-3);
//   - gru_train_captured: the same with gru_train's GRU;
//   - transformer_block_captured: transformer_block's pre-norm encoder
//     layer (width 256, 4 heads, feed-forward 1024), loss sum(out·r),
//     gradients of every parameter, no optimiser step.

// capturedModel is one workload's model: in = (data..., parameters...),
// step returns the loss and its gradients in the parameters, and update
// (nil: none) applies an optimiser step to the gradients.
type capturedModel struct {
	in     []*tensor.Tensor
	step   graph.StepFunc
	update func(grads []*tensor.Tensor)
}

// capturedSecs holds the references' latest seconds per step.
type capturedSecs struct{ eager, unfused float64 }

func capturedWorkloads() []workload {
	var ws []workload
	ws = append(ws, capturedPair("mlp_train_captured", 20, "samples_per_s", 128, true, newCapturedMLP)...)
	ws = append(ws, capturedPair("lstm_train_captured", 5, "sequences_per_s", 32, true, newCapturedLSTM)...)
	ws = append(ws, capturedPair("gru_train_captured", 5, "sequences_per_s", 32, true, newCapturedGRU)...)
	// Capturing the transformer step takes seconds; the bench's test runs
	// every workload, so this one has no unfused variant.
	ws = append(ws, capturedPair("transformer_block_captured", 3, "sequences_per_s", 32, false, newCapturedTransformer)...)
	return ws
}

// capturedPair returns name_eager, name_unfused (when unfused is set) and
// name for the model build makes.
func capturedPair(name string, steps int, metric string, items int, unfused bool, build func(rng *tensor.RNG) *capturedModel) []workload {
	var ref capturedSecs
	rate := throughput(metric, items)
	ws := []workload{
		seeded(name+"_eager", steps, func(n string, sec float64) []Result {
			ref.eager = sec
			return rate(n, sec)
		}, func(rng *tensor.RNG) step {
			c := build(rng)
			g := graph.New()
			nodes := make([]*graph.Node, len(c.in))
			grads := []*tensor.Tensor{}
			return func() {
				g.Reset()
				for i, t := range c.in {
					nodes[i] = g.VarOf(t)
				}
				out := c.step(g, nodes)
				grads = grads[:0]
				for _, n := range out[1:] {
					grads = append(grads, n.Value())
				}
				if c.update != nil {
					c.update(grads)
				}
			}
		}),
	}
	if unfused {
		ws = append(ws,
			seeded(name+"_unfused", steps, func(n string, sec float64) []Result {
				ref.unfused = sec
				return rate(n, sec)
			}, func(rng *tensor.RNG) step { return replay(build(rng), graph.CaptureOptions{NoFusion: true}) }),
		)
	}
	return append(ws,
		seeded(name, steps, func(n string, sec float64) []Result {
			rs := rate(n, sec)
			if ref.eager > 0 {
				rs = append(rs, Result{n, "speedup_over_eager", ref.eager / sec, "x"})
			}
			if ref.unfused > 0 {
				rs = append(rs, Result{n, "speedup_over_unfused", ref.unfused / sec, "x"})
			}
			return rs
		}, func(rng *tensor.RNG) step { return replay(build(rng), graph.CaptureOptions{}) }),
	)
}

// replay captures c's step with opts and returns the step that runs the
// program and updates the parameters.
func replay(c *capturedModel, opts graph.CaptureOptions) step {
	p, err := graph.Capture(c.step, c.in, opts)
	if err != nil {
		panic(err)
	}
	return func() {
		out, err := p.Run(c.in)
		if err != nil {
			panic(err)
		}
		if c.update != nil {
			c.update(out[1:])
		}
	}
}

// adamUpdate returns an Adam(1e-3) step on ps.
func adamUpdate(ps []*tensor.Tensor) func([]*tensor.Tensor) {
	opt := optim.NewAdam(ps, optim.AdamOptions{LR: 1e-3})
	return func(grads []*tensor.Tensor) {
		if err := opt.Step(grads); err != nil {
			panic(err)
		}
	}
}

// newCapturedMLP is the MLP with one batch: in = (x, one-hot y,
// parameters...).
func newCapturedMLP(rng *tensor.RNG) *capturedModel {
	const batch = 128
	m := nn.NewSequential(
		nn.NewLinear(rng, 784, 512, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 512, 512, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 512, 10, true, tensor.Float32),
	)
	y := tensor.New(tensor.Float32, batch, 10)
	for i, c := range labels(rng, batch, 10) {
		y.SetAt(1, i, c)
	}
	ps := nn.Values(m.Params())
	in := append([]*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, batch, 784), y}, ps...)
	return &capturedModel{in: in, update: adamUpdate(ps), step: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		logp := graph.LogSoftmax(m.Forward(in[0]), 1)
		loss := graph.MulScalar(graph.Sum(graph.Mul(logp, in[1]), nil, false), -1/float64(in[0].Shape()[0]))
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
	}}
}

// newCapturedLSTM is lstm_train's model and sequence batch: in = (x,
// target, parameters...).
func newCapturedLSTM(rng *tensor.RNG) *capturedModel { return newCapturedRNN(rng, false) }

// newCapturedGRU is the same with gru_train's GRU.
func newCapturedGRU(rng *tensor.RNG) *capturedModel { return newCapturedRNN(rng, true) }

// newCapturedRNN is an LSTM (or a GRU) of input 32 and hidden 128 over
// 50 steps of batches of 32, the MSE of its final hidden state, and Adam.
func newCapturedRNN(rng *tensor.RNG, gru bool) *capturedModel {
	const batch, seq, inDim, hidden = 32, 50, 32, 128
	var m nn.Module
	var final func(x *graph.Node) *graph.Node
	if gru {
		l := nn.NewGRU(rng, inDim, hidden, nn.RNNOptions{})
		m, final = l, func(x *graph.Node) *graph.Node { _, h := l.Forward(x, nil); return h }
	} else {
		l := nn.NewLSTM(rng, inDim, hidden, nn.RNNOptions{})
		m, final = l, func(x *graph.Node) *graph.Node { _, h, _ := l.Forward(x, nil, nil); return h }
	}
	x := rng.Normal(tensor.Float32, 0, 1, seq, batch, inDim)
	target := rng.Normal(tensor.Float32, 0, 1, 1, batch, hidden)
	ps := nn.Values(m.Params())
	in := append([]*tensor.Tensor{x, target}, ps...)
	return &capturedModel{in: in, update: adamUpdate(ps), step: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		loss := losses.MSE(final(in[0]), in[1], losses.Mean)
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
	}}
}

// newCapturedTransformer is transformer_block's layer and batch: in = (x,
// r, parameters...).
func newCapturedTransformer(rng *tensor.RNG) *capturedModel {
	const batch, seq, width, heads, ff = 32, 128, 256, 4, 1024
	l := nn.NewTransformerEncoderLayer(rng, width, heads, ff, tensor.Float32)
	x := rng.Normal(tensor.Float32, 0, 1, batch, seq, width)
	r := rng.Normal(tensor.Float32, 0, 1, batch, seq, width)
	in := append([]*tensor.Tensor{x, r}, nn.Values(l.Params())...)
	return &capturedModel{in: in, step: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		loss := graph.Sum(graph.Mul(l.Forward(in[0], nil, false), in[1]), nil, false)
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
	}}
}
