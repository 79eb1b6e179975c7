package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// TransformerLMOptions sizes a TransformerLM.
type TransformerLMOptions struct {
	Vocab   int // number of tokens (characters)
	Context int // longest sequence: the size of the position table
	Width   int // model width dModel
	Heads   int // attention heads; must divide Width
	Layers  int // decoder blocks
	FF      int // feed-forward width (0: 4·Width)
}

// TransformerLM is a decoder-only (GPT-style) transformer language model:
// token embeddings plus learned position embeddings, Layers pre-norm
// causal TransformerDecoderLayer blocks without cross-attention, a final
// LayerNorm and a linear head to one logit per token of the vocabulary.
// Step t's logits predict token t+1 from tokens 0…t.
type TransformerLM struct {
	Config TransformerLMOptions
	Tok    *Embedding         // (Vocab, Width)
	Pos    *PositionEmbedding // (Context, Width), learned
	Blocks []*TransformerDecoderLayer
	Norm   *LayerNorm
	Head   *Linear // Width → Vocab
}

// NewTransformerLM returns the model initialised as GPT-2 is: embeddings
// and linear weights from N(0, 0.02²), the output projections of each
// block's attention and feed-forward scaled down by 1/√(2·Layers) so the
// residual stream does not grow with depth, zero biases, unit LayerNorms.
// It panics if a size is not positive or Heads does not divide Width.
func NewTransformerLM(rng *tensor.RNG, c TransformerLMOptions, dt tensor.DType) *TransformerLM {
	if c.FF == 0 {
		c.FF = 4 * c.Width
	}
	if c.Vocab <= 0 || c.Context <= 0 || c.Width <= 0 || c.Heads <= 0 || c.Layers <= 0 || c.FF <= 0 {
		tensor.Fail("nn.NewTransformerLM", "sizes must be positive, got %+v", c)
	}
	if c.Width%c.Heads != 0 {
		tensor.Fail("nn.NewTransformerLM", "width %d must be a multiple of the head count %d", c.Width, c.Heads)
	}
	m := &TransformerLM{Config: c,
		Tok:  NewEmbedding(rng, c.Vocab, c.Width, dt),
		Pos:  NewPositionEmbedding(rng, c.Context, c.Width, dt),
		Norm: NewLayerNorm([]int{c.Width}, 1e-5, true, dt),
		Head: NewLinear(rng, c.Width, c.Vocab, true, dt),
	}
	for range c.Layers {
		m.Blocks = append(m.Blocks, NewTransformerDecoderLayer(rng, c.Width, c.Heads, c.FF, false, dt))
	}
	const std = 0.02
	resid := std / math.Sqrt(2*float64(c.Layers))
	for _, p := range m.Params() {
		switch name := p.Name; {
		case strings.HasPrefix(name, "norm") || strings.Contains(name, ".norm"): // LayerNorms stay (1, 0)
		case strings.HasSuffix(name, "bias"):
			p.Value.Fill(0)
		case strings.HasSuffix(name, "out_proj.weight") || strings.HasSuffix(name, "linear2.weight"):
			Normal(rng, p.Value, 0, resid)
		default:
			Normal(rng, p.Value, 0, std)
		}
	}
	return m
}

// String names the model in errors.
func (m *TransformerLM) String() string {
	c := m.Config
	return fmt.Sprintf("TransformerLM(vocab=%d, context=%d, width=%d, heads=%d, layers=%d)", c.Vocab, c.Context, c.Width, c.Heads, c.Layers)
}

// Params returns "tok.weight", "pos.weight", "blocks.0.self_attn.in_proj_weight",
// …, "norm.weight", "norm.bias", "head.weight", "head.bias".
func (m *TransformerLM) Params() []NamedParam {
	ps := append(Prefix("tok", m.Tok.Params()), Prefix("pos", m.Pos.Params())...)
	for i, b := range m.Blocks {
		ps = append(ps, Prefix(fmt.Sprintf("blocks.%d", i), b.Params())...)
	}
	ps = append(ps, Prefix("norm", m.Norm.Params())...)
	return append(ps, Prefix("head", m.Head.Params())...)
}

// SetTraining does nothing: the model has no dropout.
func (m *TransformerLM) SetTraining(bool) {}

// Forward returns the logits (B, L, Vocab) of tokens, batch sequences of
// L = len(tokens)/batch tokens laid end to end. It panics, naming the
// model, if the tokens do not split into batch sequences, a token is out
// of range or L exceeds the context.
func (m *TransformerLM) Forward(g *graph.Graph, tokens []int, batch int) *graph.Node {
	if batch <= 0 || len(tokens) == 0 || len(tokens)%batch != 0 {
		tensor.Fail(m.String(), "%d tokens do not split into %d sequences", len(tokens), batch)
	}
	l := len(tokens) / batch
	if l > m.Config.Context {
		tensor.Fail(m.String(), "sequences of %d tokens are longer than the context of %d", l, m.Config.Context)
	}
	x := m.Pos.Forward(m.Tok.Forward(g, tokens, batch, l))
	for _, b := range m.Blocks {
		x = b.Forward(x, nil, nil, nil, true)
	}
	return m.Head.Forward(m.Norm.Forward(x))
}

// Sample extends prompt by n tokens drawn one at a time from the model's
// next-token distribution softmax(logits/temperature), reading at most the
// last Context tokens; temperature 0 takes the most likely token. It
// returns the n new tokens. It panics if the prompt is empty or the
// temperature negative.
func (m *TransformerLM) Sample(rng *tensor.RNG, prompt []int, n int, temperature float64) []int {
	if len(prompt) == 0 || temperature < 0 || math.IsNaN(temperature) {
		tensor.Fail(m.String()+".Sample", "need a prompt (got %d tokens) and a temperature ≥ 0 (got %g)", len(prompt), temperature)
	}
	seq := append([]int(nil), prompt...)
	g := graph.New()
	p := make([]float64, m.Config.Vocab)
	for range n {
		g.Reset()
		ctx := seq[max(0, len(seq)-m.Config.Context):]
		logits := m.Forward(g, ctx, 1).Value()
		all := logits.Values()
		last := all[len(all)-m.Config.Vocab:]
		seq = append(seq, nextToken(rng, last, p, temperature))
	}
	g.Reset()
	return seq[len(prompt):]
}

// nextToken draws from softmax(logits/temperature) (argmax at 0), using p
// as scratch.
func nextToken(rng *tensor.RNG, logits, p []float64, temperature float64) int {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	if temperature == 0 {
		return best
	}
	sum := 0.0
	for i, v := range logits {
		p[i] = math.Exp((v - logits[best]) / temperature)
		sum += p[i]
	}
	u := rng.Float64() * sum
	for i, w := range p {
		if u -= w; u < 0 {
			return i
		}
	}
	return best
}
