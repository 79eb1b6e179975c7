package graph_test

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkMLPStepOps builds a small MLP forward pass and its reverse rules
// on a recycled graph, the pattern of a training step, to watch per-op
// overhead and allocations.
func BenchmarkMLPStepOps(b *testing.B) {
	rng := tensor.NewRNG(1)
	x := rng.Normal(tensor.Float32, 0, 1, 32, 64)
	w1 := rng.Normal(tensor.Float32, 0, 0.1, 64, 64)
	b1 := rng.Normal(tensor.Float32, 0, 0.1, 64)
	w2 := rng.Normal(tensor.Float32, 0, 0.1, 64, 10)
	g := graph.New()
	b.ReportAllocs()
	for b.Loop() {
		g.Reset()
		xn, w1n, b1n, w2n := g.Const(x), g.Var(w1), g.Var(b1), g.Var(w2)
		h := graph.Relu(graph.Add(graph.MatMul(xn, w1n), b1n))
		y := graph.LogSoftmax(graph.MatMul(h, w2n), -1)
		loss := graph.Mean(y, nil, false)
		// Hand-chained VJPs (what autodiff does), newest node first.
		ct := g.Scalar(tensor.Float32, 1)
		nodes := g.Nodes()
		cts := map[*graph.Node]*graph.Node{loss: ct}
		for i := loss.ID(); i >= 0; i-- {
			n := nodes[i]
			c := cts[n]
			if c == nil || n.Op() == nil {
				continue
			}
			for j, in := range n.Op().VJP(n, c, needAll(n)) {
				if in == nil {
					continue
				}
				if prev := cts[n.Inputs()[j]]; prev != nil {
					in = graph.Add(prev, in)
				}
				cts[n.Inputs()[j]] = in
			}
		}
	}
}

// BenchmarkSmallOpsForward builds, forward only, a chain of small ops of
// the kinds whose constructors validate and whose Forwards call tensor's
// unchecked kernels (broadcast add, matmul, relu, scalar ops, a reduction),
// so the time is mostly the per-op cost of graph and validation rather
// than arithmetic. One b.N iteration is 100 ops.
func BenchmarkSmallOpsForward(b *testing.B) {
	rng := tensor.NewRNG(1)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 4)
	w := rng.Normal(tensor.Float32, 0, 0.5, 4, 4)
	bias := rng.Normal(tensor.Float32, 0, 0.1, 4)
	g := graph.New()
	b.ReportAllocs()
	for b.Loop() {
		g.Reset()
		y, wn, bn := g.Const(x), g.Var(w), g.Var(bias)
		for range 20 {
			y = graph.Relu(graph.Add(graph.MatMul(y, wn), bn))
			y = graph.MulScalar(graph.Sub(y, graph.Mean(y, []int{1}, true)), 0.5)
		}
	}
}
