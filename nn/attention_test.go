package nn

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// PyTorch's nn.MultiheadAttention (testdata/make_attention.py, float64) on
// the same weights, loaded under its state_dict names: plain
// cross-attention, a key-padding mask, and causal self-attention.
func TestMultiheadAttentionMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/attention.json")
	require.NoError(t, err)
	var f map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &f))
	vals := func(name string) []float64 {
		var v []float64
		require.NoError(t, json.Unmarshal(f[name], &v), name)
		return v
	}
	m := NewMultiheadAttention(tensor.NewRNG(1), 8, 2, tensor.Float64)
	for _, p := range m.Params() {
		copy(p.Value.Float64s(), vals(p.Name))
	}
	var pad [][]bool
	require.NoError(t, json.Unmarshal(f["pad"], &pad))
	g := graph.New()
	q := g.Const(tensor.FromFloat64s(vals("q"), 2, 3, 8))
	kv := g.Const(tensor.FromFloat64s(vals("kv"), 2, 4, 8))
	x := g.Const(tensor.FromFloat64s(vals("x"), 2, 4, 8))
	numtest.Close(t, vals("plain"), m.Forward(q, kv, kv, nil, false).Value(), 1e-12, "plain")
	mask := g.Const(KeyPaddingMask(tensor.Float64, pad))
	numtest.Close(t, vals("padded"), m.Forward(q, kv, kv, mask, false).Value(), 1e-12, "key padding")
	numtest.Close(t, vals("causal"), m.Forward(x, x, x, nil, true).Value(), 1e-12, "causal")
}

// Attention by hand: one query q = (1, 0) and keys (1, 0), (0, 1) with E = 2
// give scores (1/√2, 0); the output is the softmax-weighted mean of the
// values (10, 0) and (0, 10). A causal mask on two steps hides the second
// key from the first query.
func TestScaledDotProductAttentionByHand(t *testing.T) {
	g := graph.New()
	q := g.Const(tensor.FromFloat64s([]float64{1, 0}, 1, 2))
	k := g.Const(tensor.FromFloat64s([]float64{1, 0, 0, 1}, 2, 2))
	v := g.Const(tensor.FromFloat64s([]float64{10, 0, 0, 10}, 2, 2))
	w0 := 1 / (1 + math.Exp(-1/math.Sqrt2))
	numtest.Close(t, []float64{10 * w0, 10 * (1 - w0)}, ScaledDotProductAttention(q, k, v, nil, false).Value(), 1e-14)
	qq := g.Const(tensor.FromFloat64s([]float64{1, 0, 0, 1}, 2, 2))
	out := ScaledDotProductAttention(qq, k, v, nil, true).Value()
	assert.Equal(t, []float64{10, 0}, out.Values()[:2], "the first query sees only the first key")
}

// The layer's derivatives with respect to its inputs and parameters, by
// autodiff.GradCheck.
func TestMultiheadAttentionGradients(t *testing.T) {
	rng := tensor.NewRNG(3)
	m := NewMultiheadAttention(rng, 4, 2, tensor.Float64)
	x := rng.Normal(tensor.Float64, 0, 1, 2, 3, 4)
	gradCheckModule(t, "MultiheadAttention", m.Params(), []*tensor.Tensor{x},
		func(xs []*graph.Node) *graph.Node { return m.Forward(xs[0], xs[0], xs[0], nil, true) }, 2)
}

// PE(p, 2i) = sin(p/10000^{2i/d}), PE(p, 2i+1) = cos(…): at p = 1, d = 4:
// sin 1, cos 1, sin 0.01, cos 0.01.
func TestSinusoidalPositions(t *testing.T) {
	pe := SinusoidalPositions(tensor.Float64, 2, 4)
	numtest.CloseValues(t, []float64{0, 1, 0, 1, math.Sin(1), math.Cos(1), math.Sin(0.01), math.Cos(0.01)}, pe.Values(), 1e-15)
}

// The pre-norm encoder block against PyTorch's TransformerEncoderLayer
// (norm_first, GELU, causal mask; testdata/make_transformer.py), weights
// loaded by state_dict name.
func TestTransformerEncoderLayerMatchesPyTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/transformer.json")
	require.NoError(t, err)
	var f map[string][]float64
	require.NoError(t, json.Unmarshal(b, &f))
	l := NewTransformerEncoderLayer(tensor.NewRNG(1), 8, 2, 16, tensor.Float64)
	for _, p := range l.Params() {
		v, ok := f[p.Name]
		require.True(t, ok, "PyTorch has no %s", p.Name)
		copy(p.Value.Float64s(), v)
	}
	g := graph.New()
	out := l.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 8)), nil, true)
	numtest.Close(t, f["out"], out.Value(), 1e-10)
}
