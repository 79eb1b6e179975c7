package autodiff_test

import (
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// Per-example gradients of the nn package's models equal, to 1e-12 in
// float64, the gradients of each example's loss computed one at a time.

// crossEntropy is −Σ onehot·log softmax(logits) for one example's logits
// (1, classes) or (classes) and its one-hot label.
func crossEntropy(logits, onehot *graph.Node) *graph.Node {
	logits = graph.Reshape(logits, onehot.Shape()...)
	return graph.Neg(graph.Sum(graph.Mul(onehot, graph.LogSoftmax(logits, -1)), nil, false))
}

// perExampleModel is a model and one example's loss under it.
type perExampleModel struct {
	name   string
	params []nn.NamedParam
	// loss builds one example's loss; example holds the input without its
	// batch axis and the one-hot label.
	loss func(example []*graph.Node) *graph.Node
	// inputs draws a batch: the inputs with B on axis 0 and the labels.
	inputs  func(rng *tensor.RNG, b int) *tensor.Tensor
	classes int
}

func perExampleModels() []perExampleModel {
	const dt = tensor.Float64
	rng := tensor.NewRNG(11)
	fc1, fc2 := nn.NewLinear(rng, 6, 5, true, dt), nn.NewLinear(rng, 5, 3, true, dt)
	conv := nn.NewConv2D(rng, 2, 3, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}, DType: dt})
	pool := nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}})
	head := nn.NewLinear(rng, 3*3*3, 4, true, dt)
	lstm := nn.NewLSTM(rng, 3, 4, nn.RNNOptions{DType: dt})
	out := nn.NewLinear(rng, 4, 2, true, dt)
	return []perExampleModel{
		{name: "MLP", params: append(fc1.Params(), fc2.Params()...), classes: 3,
			loss: func(ex []*graph.Node) *graph.Node {
				return crossEntropy(fc2.Forward(graph.Tanh(fc1.Forward(ex[0]))), ex[1])
			},
			inputs: func(rng *tensor.RNG, b int) *tensor.Tensor { return rng.Normal(dt, 0, 1, b, 6) }},
		{name: "CNN (conv, relu, max pool)", params: append(conv.Params(), head.Params()...), classes: 4,
			loss: func(ex []*graph.Node) *graph.Node {
				x := graph.Unsqueeze(ex[0], 0) // (1, C, H, W)
				h := pool.Forward(graph.Relu(conv.Forward(x)))
				return crossEntropy(head.Forward(graph.Reshape(h, 1, -1)), ex[1])
			},
			inputs: func(rng *tensor.RNG, b int) *tensor.Tensor { return rng.Normal(dt, 0, 1, b, 2, 6, 6) }},
		{name: "LSTM", params: append(lstm.Params(), out.Params()...), classes: 2,
			loss: func(ex []*graph.Node) *graph.Node {
				x := graph.Unsqueeze(ex[0], 1) // (T, 1, In)
				_, h, _ := lstm.Forward(x, nil, nil)
				return crossEntropy(out.Forward(graph.Reshape(h, 1, 4)), ex[1])
			},
			inputs: func(rng *tensor.RNG, b int) *tensor.Tensor { return rng.Normal(dt, 0, 1, b, 5, 3) }},
	}
}

func TestPerExampleGradsEqualTheLoop(t *testing.T) {
	const b = 4
	for _, m := range perExampleModels() {
		t.Run(m.name, func(t *testing.T) {
			rng := tensor.NewRNG(5)
			x := m.inputs(rng, b)
			labels := make([]int, b)
			for i := range labels {
				labels[i] = rng.Intn(m.classes)
			}
			y := tensor.OneHot(tensor.Float64, labels, m.classes)

			g := graph.New()
			params := paramNodes(g, m.params)
			got := autodiff.PerExampleGrads(func(ps, ex []*graph.Node) *graph.Node { return m.loss(ex) },
				params, []*graph.Node{g.Const(x), g.Const(y)})

			for k := range b {
				lg := graph.New()
				ps := paramNodes(lg, m.params)
				xk := lg.Const(tensor.Reshape(tensor.Slice(x, 0, k, k+1, 1), x.Shape()[1:]...))
				yk := lg.Const(tensor.Reshape(tensor.Slice(y, 0, k, k+1, 1), m.classes))
				want := autodiff.Grad(m.loss([]*graph.Node{xk, yk}), ps...)
				for i, w := range want {
					gk := tensor.Reshape(tensor.Slice(got[i].Value(), 0, k, k+1, 1), w.Shape()...)
					if e := maxDiff(gk, w.Value()); !(e <= batchTol) {
						t.Errorf("%s, example %d: per-example gradient differs from the loop's by %.3g", m.params[i].Name, k, e)
					}
				}
			}
		})
	}
}

func paramNodes(g *graph.Graph, ps []nn.NamedParam) []*graph.Node {
	out := make([]*graph.Node, len(ps))
	for i, p := range ps {
		out[i] = p.Node(g)
	}
	return out
}
