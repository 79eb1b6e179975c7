package nn

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// readFixture reads a JSON object of flat float64 arrays from testdata.
func readFixture(t *testing.T, name string) map[string][]float64 {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	var f map[string][]float64
	require.NoError(t, json.Unmarshal(b, &f))
	return f
}

// failure returns the message of the *tensor.Error f panics with ("" if
// it does not panic).
func failure(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			err, ok := r.(*tensor.Error)
			require.True(t, ok, "panic value %v is not a *tensor.Error", r)
			msg = err.Error()
		}
	}()
	f()
	return ""
}

// PyTorch's TransformerDecoderLayer (norm_first, GELU, no dropout;
// testdata/make_decoder.py) on the same weights, loaded by state_dict name:
// the output with a causal target mask and a padded memory key, and the
// gradients of sum(out·r) with respect to every parameter, the target and
// the memory.
func TestTransformerDecoderLayerMatchesPyTorch(t *testing.T) {
	f := readFixture(t, "decoder.json")
	l := NewTransformerDecoderLayer(tensor.NewRNG(1), 8, 2, 16, true, tensor.Float64)
	ps := l.Params()
	require.Len(t, ps, 18)
	for _, p := range ps {
		v, ok := f[p.Name]
		require.True(t, ok, "PyTorch has no %s", p.Name)
		require.Len(t, v, p.Value.Size(), p.Name)
		copy(p.Value.Float64s(), v)
	}
	pad := make([][]bool, 2)
	for b := range pad {
		for j := range 4 {
			pad[b] = append(pad[b], f["pad"][b*4+j] == 1)
		}
	}
	g := graph.New()
	x := g.Var(tensor.FromFloat64s(f["x"], 2, 5, 8))
	mem := g.Var(tensor.FromFloat64s(f["memory"], 2, 4, 8))
	out := l.Forward(x, mem, nil, g.Const(KeyPaddingMask(tensor.Float64, pad)), true)
	numtest.Close(t, f["out"], out.Value(), 1e-10, "output")

	loss := graph.Sum(graph.Mul(out, g.Const(tensor.FromFloat64s(f["r"], 2, 5, 8))), nil, false)
	for i, gr := range Gradients(loss, ps) {
		numtest.Close(t, f["grad."+ps[i].Name], gr, 1e-10, "gradient of %s", ps[i].Name)
	}
	gs := autodiff.Grad(loss, x, mem)
	numtest.Close(t, f["grad.x"], gs[0].Value(), 1e-10, "gradient of the target")
	numtest.Close(t, f["grad.memory"], gs[1].Value(), 1e-10, "gradient of the memory")
}

// Without cross-attention the decoder block computes what the encoder block
// computes (norm3 in norm2's place): PyTorch's TransformerEncoderLayer with
// a causal mask (testdata/transformer.json).
func TestDecoderOnlyBlockIsCausalEncoderBlock(t *testing.T) {
	f := readFixture(t, "transformer.json")
	l := NewTransformerDecoderLayer(tensor.NewRNG(1), 8, 2, 16, false, tensor.Float64)
	for _, p := range l.Params() {
		name := p.Name
		if name == "norm3.weight" || name == "norm3.bias" {
			name = "norm2" + name[5:]
		}
		copy(p.Value.Float64s(), f[name])
	}
	g := graph.New()
	out := l.Forward(g.Const(tensor.FromFloat64s(f["x"], 2, 5, 8)), nil, nil, nil, true)
	numtest.Close(t, f["out"], out.Value(), 1e-10)
}

// The block's derivatives with respect to its inputs and parameters, by
// autodiff.GradCheck, with and without cross-attention.
func TestTransformerDecoderLayerGradients(t *testing.T) {
	rng := tensor.NewRNG(5)
	x := rng.Normal(tensor.Float64, 0, 1, 1, 3, 4)
	mem := rng.Normal(tensor.Float64, 0, 1, 1, 2, 4)
	cross := NewTransformerDecoderLayer(rng, 4, 2, 6, true, tensor.Float64)
	gradCheckModule(t, "TransformerDecoderLayer", cross.Params(), []*tensor.Tensor{x, mem},
		func(xs []*graph.Node) *graph.Node { return cross.Forward(xs[0], xs[1], nil, nil, true) }, 1)
	self := NewTransformerDecoderLayer(rng, 4, 2, 6, false, tensor.Float64)
	gradCheckModule(t, "TransformerDecoderLayer-selfonly", self.Params(), []*tensor.Tensor{x},
		func(xs []*graph.Node) *graph.Node { return self.Forward(xs[0], nil, nil, nil, true) }, 1)
}

// A learned table adds row p to step p of every sequence; its gradient is
// the cotangent summed over the batch, on the rows used only. A sequence
// longer than the table is an error naming both lengths.
func TestPositionEmbedding(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			p := NewPositionEmbedding(tensor.NewRNG(1), 3, 2, dt)
			tensor.CopyInto(p.Weight.Value, tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2))
			g := graph.New()
			// (B=2, L=2, D=2): rows 0 and 1 of the table are added.
			x := g.Const(tensor.FromValues(dt, []float64{0, 0, 1, 1, 10, 10, 20, 20}, 2, 2, 2))
			y := p.Forward(x)
			numtest.Close(t, []float64{1, 2, 4, 5, 11, 12, 23, 24}, y.Value(), numtest.Tol(dt))
			loss := graph.Sum(graph.Mul(y, g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2))), nil, false)
			// d/dW[p, d] = Σ_b r[b, p, d]; row 2 is unused.
			numtest.Close(t, []float64{6, 8, 10, 12, 0, 0}, Gradients(loss, p.Params())[0], numtest.Tol(dt))

			msg := failure(t, func() { p.Forward(g.Const(tensor.Zeros(dt, 1, 4, 2))) })
			assert.Contains(t, msg, "PositionEmbedding(3, 2)")
			assert.Contains(t, msg, "4 steps")
			assert.Contains(t, msg, "3 positions")
			assert.Contains(t, failure(t, func() { p.Forward(g.Const(tensor.Zeros(dt, 1, 2, 3))) }), "want (..., L, 2)")
		})
	}
}

// The fixed table is SinusoidalPositions, has no parameters and refuses
// sequences longer than itself.
func TestSinusoidalEmbedding(t *testing.T) {
	p := NewSinusoidalEmbedding(4, 2, tensor.Float64)
	assert.Empty(t, p.Params())
	g := graph.New()
	y := p.Forward(g.Const(tensor.Zeros(tensor.Float64, 3, 2)))
	numtest.Close(t, []float64{0, 1, math.Sin(1), math.Cos(1), math.Sin(2), math.Cos(2)}, y.Value(), 1e-15)
	msg := failure(t, func() { p.Forward(g.Const(tensor.Zeros(tensor.Float64, 5, 2))) })
	assert.Contains(t, msg, "SinusoidalEmbedding(4, 2)")
	assert.Contains(t, msg, "5 steps")
}

// Bad input to attention and the transformer blocks: masks that do not
// broadcast to the scores, a head count that does not divide the width, a
// memory where none is expected and none where one is.
func TestAttentionBadInput(t *testing.T) {
	rng := tensor.NewRNG(2)
	g := graph.New()
	x := g.Const(rng.Normal(tensor.Float64, 0, 1, 2, 3, 4))
	m := NewMultiheadAttention(rng, 4, 2, tensor.Float64)
	msg := failure(t, func() { m.Forward(x, x, x, g.Const(tensor.Zeros(tensor.Float64, 2, 1, 1, 5)), false) })
	assert.Contains(t, msg, "MultiheadAttention(4, heads=2)")
	assert.Contains(t, msg, "mask (2, 1, 1, 5)")
	assert.Contains(t, msg, "(2, 2, 3, 3)")
	msg = failure(t, func() { m.Forward(x, x, x, g.Const(tensor.Zeros(tensor.Float32, 3, 3)), false) })
	assert.Contains(t, msg, "float32")

	q := g.Const(tensor.Zeros(tensor.Float64, 3, 4))
	k := g.Const(tensor.Zeros(tensor.Float64, 5, 4))
	msg = failure(t, func() { ScaledDotProductAttention(q, k, k, g.Const(tensor.Zeros(tensor.Float64, 3, 3)), false) })
	assert.Contains(t, msg, "nn.ScaledDotProductAttention")
	assert.Contains(t, msg, "(3, 5)")
	assert.Empty(t, failure(t, func() { ScaledDotProductAttention(q, k, k, g.Const(tensor.Zeros(tensor.Float64, 5)), false) }))

	assert.Contains(t, failure(t, func() { NewMultiheadAttention(rng, 10, 3, tensor.Float64) }), "embed 10 must be a positive multiple of heads 3")
	assert.Contains(t, failure(t, func() { NewTransformerDecoderLayer(rng, 10, 4, 16, false, tensor.Float64) }),
		"width 10 must be a positive multiple of the head count 4")

	dec := NewTransformerDecoderLayer(rng, 4, 2, 8, false, tensor.Float64)
	assert.Contains(t, failure(t, func() { dec.Forward(x, x, nil, nil, true) }), "block without cross-attention")
	crossDec := NewTransformerDecoderLayer(rng, 4, 2, 8, true, tensor.Float64)
	assert.Contains(t, failure(t, func() { crossDec.Forward(x, nil, nil, nil, true) }), "no memory was given")
}
