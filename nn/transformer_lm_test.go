package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Step t's logits depend on tokens 0…t only: changing the last token
// leaves every earlier step's logits unchanged and changes the last step's.
// The parameter count is the sum of the parts'.
func TestTransformerLMIsCausal(t *testing.T) {
	c := TransformerLMOptions{Vocab: 7, Context: 6, Width: 8, Heads: 2, Layers: 2, FF: 12}
	m := NewTransformerLM(tensor.NewRNG(1), c, tensor.Float64)
	block := (3*8*8 + 3*8 + 8*8 + 8) + (12*8 + 12 + 8*12 + 8) + 2*2*8 // attention, feed-forward, norm1 and norm3
	assert.Equal(t, 7*8+6*8+2*block+2*8+8*7+7, NumParams(m))

	g := graph.New()
	a := m.Forward(g, []int{1, 2, 3, 4, 5, 6, 0, 1, 2}, 3).Value() // (3, 3, 7)
	b := m.Forward(g, []int{1, 2, 0, 4, 5, 1, 0, 1, 3}, 3).Value()
	require.Equal(t, []int{3, 3, 7}, a.Shape())
	av, bv := a.Values(), b.Values()
	for s := range 3 {
		for step := range 3 {
			off := (s*3 + step) * 7
			if step < 2 {
				assert.Equal(t, av[off:off+7], bv[off:off+7], "sequence %d step %d", s, step)
			} else {
				assert.NotEqual(t, av[off:off+7], bv[off:off+7], "sequence %d step %d", s, step)
			}
		}
	}
}

// The model's derivatives with respect to every parameter, by GradCheck.
func TestTransformerLMGradients(t *testing.T) {
	m := NewTransformerLM(tensor.NewRNG(2), TransformerLMOptions{Vocab: 5, Context: 3, Width: 4, Heads: 2, Layers: 1, FF: 4}, tensor.Float64)
	for _, p := range m.Params() { // GPT's 0.02 scale makes the check too easy: larger weights
		tensor.MulScalarTo(p.Value, p.Value, 20)
	}
	gradCheckModule(t, "TransformerLM", m.Params(), nil,
		func([]*graph.Node) *graph.Node { return m.Forward(checkGraph, []int{0, 4, 2, 1, 3, 3}, 2) }, 1)
}

// Temperature 0 takes the argmax of the last step's logits; at temperature
// T the token frequencies follow softmax(logits/T): logits (0, ln 3) give
// p(1) = 3/4 at T = 1 and √3/(1+√3) ≈ 0.634 at T = 2.
func TestTransformerLMSampling(t *testing.T) {
	m := NewTransformerLM(tensor.NewRNG(3), TransformerLMOptions{Vocab: 6, Context: 4, Width: 8, Heads: 2, Layers: 1}, tensor.Float64)
	out := m.Sample(tensor.NewRNG(1), []int{1, 2, 3, 4, 5}, 3, 0)
	require.Len(t, out, 3)
	seq := []int{1, 2, 3, 4, 5}
	for _, tok := range out { // greedy decoding, by hand
		g := graph.New()
		v := m.Forward(g, seq[len(seq)-4:], 1).Value().Values()
		last := v[len(v)-6:]
		best := 0
		for i := range last {
			if last[i] > last[best] {
				best = i
			}
		}
		assert.Equal(t, best, tok)
		seq = append(seq, tok)
	}

	rng := tensor.NewRNG(4)
	p := make([]float64, 2)
	for _, c := range []struct{ temp, want float64 }{{1, 0.75}, {2, math.Sqrt(3) / (1 + math.Sqrt(3))}} {
		ones := 0
		const n = 20000
		for range n {
			ones += nextToken(rng, []float64{0, math.Log(3)}, p, c.temp)
		}
		// Binomial standard error √(p(1−p)/n) ≈ 0.003: 4 of them.
		assert.InDelta(t, c.want, float64(ones)/n, 0.013, "temperature %g", c.temp)
	}

	assert.Contains(t, failure(t, func() { m.Forward(graph.New(), []int{1, 2, 3, 4, 5}, 1) }), "longer than the context of 4")
	assert.Contains(t, failure(t, func() { m.Forward(graph.New(), []int{1, 2, 3}, 2) }), "3 tokens do not split into 2 sequences")
	assert.Contains(t, failure(t, func() { m.Sample(rng, nil, 3, 1) }), "need a prompt")
	assert.Contains(t, failure(t, func() {
		NewTransformerLM(rng, TransformerLMOptions{Vocab: 6, Context: 4, Width: 6, Heads: 4, Layers: 1}, tensor.Float64)
	}),
		"width 6 must be a multiple of the head count 4")
}

// GPT-2's initialisation: weights N(0, 0.02²), the residual projections
// N(0, (0.02/√(2·Layers))²), zero biases, LayerNorms at (1, 0).
func TestTransformerLMInit(t *testing.T) {
	m := NewTransformerLM(tensor.NewRNG(4), TransformerLMOptions{Vocab: 50, Context: 32, Width: 64, Heads: 4, Layers: 2}, tensor.Float64)
	sd := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s / float64(len(v)))
	}
	for _, p := range m.Params() {
		v := p.Value.Values()
		switch p.Name {
		case "tok.weight", "pos.weight", "blocks.1.linear1.weight", "head.weight", "blocks.0.self_attn.in_proj_weight":
			assert.InEpsilon(t, 0.02, sd(v), 0.1, p.Name)
		case "blocks.0.linear2.weight", "blocks.1.self_attn.out_proj.weight":
			assert.InEpsilon(t, 0.01, sd(v), 0.1, p.Name)
		case "head.bias", "blocks.0.linear1.bias", "blocks.0.self_attn.in_proj_bias", "norm.bias", "blocks.1.norm3.bias":
			assert.Zero(t, sd(v), p.Name)
		case "norm.weight", "blocks.0.norm1.weight":
			assert.Equal(t, 1.0, sd(v), p.Name)
		}
	}
}
