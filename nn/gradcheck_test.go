package nn

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// gradCheckModule checks the derivatives of forward with respect to the
// inputs and every parameter of ps by autodiff.GradCheck (float64). Inside
// GradCheck each parameter is bound to the Var GradCheck made for it, so
// the module computes with (and is differentiated through) that node.
func gradCheckModule(t *testing.T, name string, ps []NamedParam, inputs []*tensor.Tensor,
	forward func(xs []*graph.Node) *graph.Node, order int) {
	t.Helper()
	all := append([]*tensor.Tensor{}, inputs...)
	for _, p := range ps {
		all = append(all, p.Value)
	}
	k := len(inputs)
	f := func(xs []*graph.Node) *graph.Node {
		checkGraph = xs[0].Graph()
		for i, p := range ps {
			checkGraph.Bind(p.Value, xs[k+i])
		}
		y := forward(xs[:k])
		// The output must depend on every input, or the check of that input
		// would pass vacuously.
		used := ancestors(y)
		for i, x := range xs {
			if !used[x] {
				t.Errorf("%s: the output does not depend on input %d", name, i)
			}
		}
		return y
	}
	rep, err := autodiff.GradCheck(f, all, autodiff.GradCheckOptions{Name: name, Order: order, Seed: 1})
	require.NoError(t, err, "%s: %+v", name, rep)
}

// checkGraph is the graph of gradCheckModule's current evaluation, for
// modules (Embedding) whose Forward takes a graph rather than a node.
var checkGraph *graph.Graph

// ancestors returns the nodes y is computed from, y included.
func ancestors(y *graph.Node) map[*graph.Node]bool {
	seen := map[*graph.Node]bool{y: true}
	stack := []*graph.Node{y}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, in := range n.Inputs() {
			if !seen[in] {
				seen[in] = true
				stack = append(stack, in)
			}
		}
	}
	return seen
}

// flat joins nodes into one vector, so a module with several outputs is
// checked as one function.
func flat(ns ...*graph.Node) *graph.Node {
	parts := make([]*graph.Node, len(ns))
	for i, n := range ns {
		parts[i] = graph.Reshape(n, -1)
	}
	return graph.Concat(0, parts...)
}

func TestGradCheckModules(t *testing.T) {
	const dt = tensor.Float64
	rng := tensor.NewRNG(21)
	normal := func(shape ...int) *tensor.Tensor { return rng.Normal(dt, 0, 1, shape...) }

	lin := NewLinear(rng, 3, 4, true, dt)
	conv := NewConv2D(rng, 2, 4, [2]int{2, 2}, Conv2DOptions{Stride: [2]int{1, 2}, Padding: [2]int{1, 0}, Groups: 2, DType: dt})
	ln := NewLayerNorm([]int{4}, 1e-5, true, dt)
	Normal(rng, ln.Weight.Value, 1, 0.3)
	Normal(rng, ln.Bias.Value, 0, 0.3)
	bn := NewBatchNorm2D(2, dt)
	Normal(rng, bn.Weight.Value, 1, 0.3)
	bn1 := NewBatchNorm1D(3, dt)
	lstmCell := NewLSTMCell(rng, 3, 2, true, dt)
	gruCell := NewGRUCell(rng, 3, 2, true, dt)
	lstm := NewLSTM(rng, 3, 2, RNNOptions{Layers: 2, DType: dt})
	lstmBF := NewLSTM(rng, 2, 2, RNNOptions{BatchFirst: true, DType: dt})
	gru := NewGRU(rng, 3, 2, RNNOptions{Layers: 2, BatchFirst: true, DType: dt})
	emb := NewEmbedding(rng, 5, 3, dt)
	mlp := NewSequential(NewLinear(rng, 3, 4, true, dt), Tanh{}, NewLinear(rng, 4, 2, true, dt))
	// Max pooling is only differentiable away from ties: distinct values.
	pooled := tensor.Reshape(tensor.FromValues(dt, perm(rng, 32), 32), 1, 2, 4, 4)

	cases := []struct {
		name   string
		ps     []NamedParam
		inputs []*tensor.Tensor
		f      func(xs []*graph.Node) *graph.Node
		order  int
	}{
		{"Linear", lin.Params(), []*tensor.Tensor{normal(2, 3)},
			func(xs []*graph.Node) *graph.Node { return lin.Forward(xs[0]) }, 2},
		{"Conv2D", conv.Params(), []*tensor.Tensor{normal(2, 2, 3, 4)},
			func(xs []*graph.Node) *graph.Node { return conv.Forward(xs[0]) }, 2},
		{"MaxPool2D", nil, []*tensor.Tensor{pooled},
			func(xs []*graph.Node) *graph.Node {
				return NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}, Stride: [2]int{1, 2}}).Forward(xs[0])
			}, 2},
		{"AvgPool2D", nil, []*tensor.Tensor{normal(1, 2, 4, 4)},
			func(xs []*graph.Node) *graph.Node {
				return NewAvgPool2D(tensor.PoolParams{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}}).Forward(xs[0])
			}, 2},
		{"LayerNorm", ln.Params(), []*tensor.Tensor{normal(3, 4)},
			func(xs []*graph.Node) *graph.Node { return ln.Forward(xs[0]) }, 2},
		{"BatchNorm2D", bn.Params(), []*tensor.Tensor{normal(3, 2, 2, 2)},
			func(xs []*graph.Node) *graph.Node { return bn.Forward(xs[0]) }, 2},
		{"BatchNorm1D", bn1.Params(), []*tensor.Tensor{normal(4, 3)},
			func(xs []*graph.Node) *graph.Node { return bn1.Forward(xs[0]) }, 2},
		{"LSTMCell", lstmCell.Params(), []*tensor.Tensor{normal(2, 3), normal(2, 2), normal(2, 2)},
			func(xs []*graph.Node) *graph.Node { return flat(lstmCell.Forward(xs[0], xs[1], xs[2])) }, 2},
		{"GRUCell", gruCell.Params(), []*tensor.Tensor{normal(2, 3), normal(2, 2)},
			func(xs []*graph.Node) *graph.Node { return gruCell.Forward(xs[0], xs[1]) }, 2},
		{"LSTM", lstm.Params(), []*tensor.Tensor{normal(2, 2, 3), normal(2, 2, 2), normal(2, 2, 2)},
			func(xs []*graph.Node) *graph.Node {
				out, h, c := lstm.Forward(xs[0], xs[1], xs[2])
				return flat(out, h, c)
			}, 2},
		{"LSTM-batchFirst-zeroState", lstmBF.Params(), []*tensor.Tensor{normal(2, 2, 2)},
			func(xs []*graph.Node) *graph.Node {
				out, h, c := lstmBF.Forward(xs[0], nil, nil)
				return flat(out, h, c)
			}, 2},
		{"GRU", gru.Params(), []*tensor.Tensor{normal(2, 2, 3), normal(2, 2, 2)},
			func(xs []*graph.Node) *graph.Node {
				out, h := gru.Forward(xs[0], xs[1])
				return flat(out, h)
			}, 2},
		{"Embedding", emb.Params(), nil,
			func(xs []*graph.Node) *graph.Node {
				return emb.Forward(checkGraph, []int{4, 0, 4, 2})
			}, 2},
		{"Sequential", mlp.Params(), []*tensor.Tensor{normal(2, 3)},
			func(xs []*graph.Node) *graph.Node { return mlp.Forward(xs[0]) }, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gradCheckModule(t, c.name, c.ps, c.inputs, c.f, c.order)
		})
	}
}

// perm returns 0, 1, …, n−1 in random order as float64s.
func perm(rng *tensor.RNG, n int) []float64 {
	out := make([]float64, n)
	for i, k := range rng.Perm(n) {
		out[i] = float64(k) / 4
	}
	return out
}
