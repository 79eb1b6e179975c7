package main

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// The captured training step: mlp_train's 784-512-512-10 ReLU MLP on
// batches of 128 with Adam(1e-3), its loss the softmax cross-entropy
// against one-hot targets (a tensor, so a captured program reads each
// batch's labels; losses.CrossEntropy takes them as a []int, which a
// program would freeze). mlp_train_captured_eager builds that step
// eagerly on a Reset graph, mlp_train_captured replays it with
// graph.Capture; the second reports its speed-up over the first measured
// in the same run (`-only mlp_train_captured`; the target is
// 1.3×).

// capturedSecs holds the eager reference's latest seconds per step.
type capturedSecs struct{ eager float64 }

func capturedWorkloads() []workload {
	const batch = 128
	var ref capturedSecs
	samples := throughput("samples_per_s", batch)
	return []workload{
		seeded("mlp_train_captured_eager", 20, func(name string, sec float64) []Result {
			ref.eager = sec
			return samples(name, sec)
		}, func(rng *tensor.RNG) step {
			c := newCapturedMLP(rng, batch)
			g := graph.New()
			return func() {
				g.Reset()
				nodes := make([]*graph.Node, len(c.in))
				for i, t := range c.in {
					nodes[i] = g.VarOf(t)
				}
				out := c.step(g, nodes)
				grads := make([]*tensor.Tensor, len(out)-1)
				for i, n := range out[1:] {
					grads[i] = n.Value()
				}
				c.update(grads)
			}
		}),
		seeded("mlp_train_captured", 20, func(name string, sec float64) []Result {
			rs := samples(name, sec)
			if ref.eager > 0 {
				rs = append(rs, Result{name, "speedup_over_eager", ref.eager / sec, "x"})
			}
			return rs
		}, func(rng *tensor.RNG) step {
			c := newCapturedMLP(rng, batch)
			p, err := graph.Capture(c.step, c.in, graph.CaptureOptions{})
			if err != nil {
				panic(err)
			}
			return func() {
				out, err := p.Run(c.in)
				if err != nil {
					panic(err)
				}
				c.update(out[1:])
			}
		}),
	}
}

// capturedMLP is the model, its optimiser and one batch: in = (x, one-hot
// y, parameters...).
type capturedMLP struct {
	m   *nn.Sequential
	opt *optim.Adam
	in  []*tensor.Tensor
}

func newCapturedMLP(rng *tensor.RNG, batch int) *capturedMLP {
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
	return &capturedMLP{m: m, opt: optim.NewAdam(ps, optim.AdamOptions{LR: 1e-3}), in: in}
}

// step returns the loss and its gradients in the parameters.
func (c *capturedMLP) step(g *graph.Graph, in []*graph.Node) []*graph.Node {
	logp := graph.LogSoftmax(c.m.Forward(in[0]), 1)
	loss := graph.MulScalar(graph.Sum(graph.Mul(logp, in[1]), nil, false), -1/float64(in[0].Shape()[0]))
	return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
}

func (c *capturedMLP) update(grads []*tensor.Tensor) {
	if err := c.opt.Step(grads); err != nil {
		panic(err)
	}
}
