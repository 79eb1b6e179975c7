package nn

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// Bidirectional two-layer tanh RNN, LSTM and GRU stacks against
// torch.nn.RNN, LSTM and GRU (testdata/make_rnn.py), weights loaded by
// PyTorch's names, from given initial states.
func TestBidirectionalStacksMatchPyTorch(t *testing.T) {
	load := func(file string, m Module) map[string][]float64 {
		b, err := os.ReadFile("testdata/" + file)
		require.NoError(t, err)
		var f map[string][]float64
		require.NoError(t, json.Unmarshal(b, &f))
		require.Len(t, m.Params(), 16, file)
		for _, p := range m.Params() {
			v, ok := f[p.Name]
			require.True(t, ok, "PyTorch has no %s", p.Name)
			copy(p.Value.Float64s(), v)
		}
		return f
	}
	opts := RNNOptions{Layers: 2, BatchFirst: true, Bidirectional: true, DType: tensor.Float64}
	g := graph.New()
	state := func(f map[string][]float64, k string) *graph.Node { return g.Const(tensor.FromFloat64s(f[k], 4, 2, 4)) }
	check := func(f map[string][]float64, name string, out *graph.Node, states ...*graph.Node) {
		require.Equal(t, []int{2, 5, 8}, out.Shape(), name)
		numtest.Close(t, f["out"], out.Value(), 1e-12, name+" out")
		for i, k := range []string{"hn", "cn"}[:len(states)] {
			numtest.Close(t, f[k], states[i].Value(), 1e-12, name+" "+k)
		}
	}

	rnn := NewRNN(tensor.NewRNG(1), 3, 4, opts)
	f := load("rnn.json", rnn)
	out, hn := rnn.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 3)), state(f, "h0"))
	check(f, "RNN", out, hn)

	lstm := NewLSTM(tensor.NewRNG(1), 3, 4, opts)
	f = load("lstm.json", lstm)
	out, hn, cn := lstm.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 3)), state(f, "h0"), state(f, "c0"))
	check(f, "LSTM", out, hn, cn)

	gru := NewGRU(tensor.NewRNG(1), 3, 4, opts)
	f = load("gru.json", gru)
	out, hn = gru.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 3)), state(f, "h0"))
	check(f, "GRU", out, hn)
}

func TestRNNGradients(t *testing.T) {
	rng := tensor.NewRNG(2)
	m := NewRNN(rng, 2, 3, RNNOptions{Bidirectional: true, DType: tensor.Float64})
	gradCheckModule(t, "RNN", m.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 2, 2)},
		func(xs []*graph.Node) *graph.Node { out, _ := m.Forward(xs[0], nil); return out }, 2)
	// Bidirectional two-layer LSTM and GRU, through the batched direction
	// products and cells, into the outputs and final states.
	opts := RNNOptions{Layers: 2, Bidirectional: true, DType: tensor.Float64}
	lstm := NewLSTM(rng, 2, 3, opts)
	gradCheckModule(t, "LSTM", lstm.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 2, 2), rng.Normal(tensor.Float64, 0, 0.5, 4, 2, 3)},
		func(xs []*graph.Node) *graph.Node {
			out, h, c := lstm.Forward(xs[0], xs[1], nil)
			return graph.Add(graph.Sum(out, nil, false), graph.Sum(graph.Mul(h, c), nil, false))
		}, 2)
	gru := NewGRU(rng, 2, 3, opts)
	gradCheckModule(t, "GRU", gru.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 2, 2)},
		func(xs []*graph.Node) *graph.Node {
			out, h := gru.Forward(xs[0], nil)
			return graph.Add(graph.Sum(out, nil, false), graph.Sum(h, nil, false))
		}, 2)
	c := NewRNNCell(rng, 2, 3, true, tensor.Float64)
	gradCheckModule(t, "RNNCell", c.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 2), rng.Normal(tensor.Float64, 0, 1, 2, 3)},
		func(xs []*graph.Node) *graph.Node { return c.Forward(xs[0], xs[1]) }, 2)
}
