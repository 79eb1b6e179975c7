package main

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Per-example gradients of a 784-128-10 ReLU MLP on a batch of 128 in
// float32 (what DP-SGD clips), three ways: perexample_batch_grad is one
// gradient of the batch's summed loss (the reference), perexample_loop one
// gradient per example, and perexample Vmap of Grad (autodiff.PerExampleGrads).
// `-only perexample` runs the three; perexample then also reports its time
// as a ratio to each of the others, measured in the same run (the target
// is at most 3× the batch gradient).

const perExampleBatch = 128

// perExampleSecs holds the references' latest seconds per step.
type perExampleSecs struct{ batch, loop float64 }

func perExampleWorkloads() []workload {
	var ref perExampleSecs
	ms := func(name string, sec float64) Result { return Result{name, "ms_per_batch", sec * 1e3, "ms"} }
	return []workload{
		seeded("perexample_batch_grad", 10, func(name string, sec float64) []Result {
			ref.batch = sec
			return []Result{ms(name, sec)}
		}, func(rng *tensor.RNG) step {
			return perExampleStep(rng, func(g *graph.Graph, ps []*graph.Node, x, y *graph.Node) {
				autodiff.Grad(mlpExampleLoss(ps, x, y), ps...)
			})
		}),
		seeded("perexample_loop", 2, func(name string, sec float64) []Result {
			ref.loop = sec
			return []Result{ms(name, sec)}
		}, func(rng *tensor.RNG) step {
			return perExampleStep(rng, func(g *graph.Graph, ps []*graph.Node, x, y *graph.Node) {
				for k := range perExampleBatch {
					xk := graph.Squeeze(graph.Slice(x, 0, k, k+1, 1), 0)
					yk := graph.Squeeze(graph.Slice(y, 0, k, k+1, 1), 0)
					autodiff.Grad(mlpExampleLoss(ps, xk, yk), ps...)
				}
			})
		}),
		seeded("perexample", 10, func(name string, sec float64) []Result {
			rs := []Result{ms(name, sec)}
			if ref.batch > 0 {
				rs = append(rs, Result{name, "ratio_to_batch_grad", sec / ref.batch, "x"})
			}
			if ref.loop > 0 {
				rs = append(rs, Result{name, "speedup_over_loop", ref.loop / sec, "x"})
			}
			return rs
		}, func(rng *tensor.RNG) step {
			return perExampleStep(rng, func(g *graph.Graph, ps []*graph.Node, x, y *graph.Node) {
				autodiff.PerExampleGrads(func(ps, ex []*graph.Node) *graph.Node { return mlpExampleLoss(ps, ex[0], ex[1]) },
					ps, []*graph.Node{x, y})
			})
		}),
	}
}

// perExampleStep draws the MLP's parameters and a batch, and returns the
// step that resets a graph and calls grads on them.
func perExampleStep(rng *tensor.RNG, grads func(g *graph.Graph, ps []*graph.Node, x, y *graph.Node)) step {
	pt := []*tensor.Tensor{
		rng.Normal(tensor.Float32, 0, 0.05, 128, 784), tensor.New(tensor.Float32, 128),
		rng.Normal(tensor.Float32, 0, 0.1, 10, 128), tensor.New(tensor.Float32, 10),
	}
	x := rng.Normal(tensor.Float32, 0, 1, perExampleBatch, 784)
	y := tensor.OneHot(tensor.Float32, labels(rng, perExampleBatch, 10), 10)
	g := graph.New()
	ps := make([]*graph.Node, len(pt))
	return func() {
		g.Reset()
		for i, p := range pt {
			ps[i] = g.Var(p)
		}
		grads(g, ps, g.Const(x), g.Const(y))
	}
}

// mlpExampleLoss is the cross-entropy of one example x (784) with one-hot
// label y (10), or the summed one of a batch (B, 784) and (B, 10).
func mlpExampleLoss(ps []*graph.Node, x, y *graph.Node) *graph.Node {
	h := graph.Relu(graph.Linear(x, ps[0], ps[1]))
	logp := graph.LogSoftmax(graph.Linear(h, ps[2], ps[3]), -1)
	return graph.Neg(graph.Sum(graph.Mul(y, logp), nil, false))
}
