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

// A bidirectional two-layer tanh RNN against torch.nn.RNN
// (testdata/make_rnn.py), weights loaded by PyTorch's names.
func TestBidirectionalRNNMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/rnn.json")
	require.NoError(t, err)
	var f map[string][]float64
	require.NoError(t, json.Unmarshal(b, &f))
	m := NewRNN(tensor.NewRNG(1), 3, 4, RNNOptions{Layers: 2, BatchFirst: true, Bidirectional: true, DType: tensor.Float64})
	for _, p := range m.Params() {
		v, ok := f[p.Name]
		require.True(t, ok, "PyTorch has no %s", p.Name)
		copy(p.Value.Float64s(), v)
	}
	g := graph.New()
	out, hn := m.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 3)), g.Const(tensor.FromFloat64s(f["h0"], 4, 2, 4)))
	require.Equal(t, []int{2, 5, 8}, out.Shape())
	numtest.Close(t, f["out"], out.Value(), 1e-12, "out")
	numtest.Close(t, f["hn"], hn.Value(), 1e-12, "hN")
}

func TestRNNGradients(t *testing.T) {
	rng := tensor.NewRNG(2)
	m := NewRNN(rng, 2, 3, RNNOptions{Bidirectional: true, DType: tensor.Float64})
	gradCheckModule(t, "RNN", m.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 2, 2)},
		func(xs []*graph.Node) *graph.Node { out, _ := m.Forward(xs[0], nil); return out }, 2)
	c := NewRNNCell(rng, 2, 3, true, tensor.Float64)
	gradCheckModule(t, "RNNCell", c.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 2), rng.Normal(tensor.Float64, 0, 1, 2, 3)},
		func(xs []*graph.Node) *graph.Node { return c.Forward(xs[0], xs[1]) }, 2)
}
