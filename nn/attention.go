package nn

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// ScaledDotProductAttention returns softmax(QKᵀ/√E + M)·V for queries q
// (..., Lq, E), keys k (..., Lk, E) and values v (..., Lk, Ev), batch axes
// broadcasting, computed by the fused kernel (graph.Attention; Dao et al.
// 2022, "FlashAttention"), which never stores the (Lq × Lk) scores.
// mask, if not nil, is added to the scores (shape broadcastable to (...,
// Lq, Lk); −Inf removes a key, as in PyTorch's float masks). causal hides
// every key after its query (Lq = Lk). A query with every key removed
// yields NaN, as in PyTorch. It panics with a *tensor.Error when the
// shapes do not fit or there are no keys.
func ScaledDotProductAttention(q, k, v, mask *graph.Node, causal bool) *graph.Node {
	const op = "nn.ScaledDotProductAttention"
	if q == nil || k == nil || v == nil {
		tensor.Fail(op, "nil operand")
	}
	out := tensor.AttentionShape(op, q.Value(), k.Value(), v.Value(), nil, causal)
	if mask != nil {
		scores := append(out[:len(out)-1:len(out)-1], k.Shape()[k.Dim()-2])
		checkMask(op, mask, scores, q.DType())
	}
	return graph.Attention(q, k, v, mask, attentionScale(q), causal)
}

// attentionScale is 1/√E for queries of width E.
func attentionScale(q *graph.Node) float64 { return 1 / math.Sqrt(float64(q.Shape()[q.Dim()-1])) }

// checkMask panics, naming op, unless the additive mask broadcasts to the
// scores' shape (..., Lq, Lk) without enlarging it and has their dtype.
func checkMask(op string, mask *graph.Node, ss []int, dt tensor.DType) {
	ms := mask.Shape()
	fits := len(ms) <= len(ss) && mask.DType() == dt
	for i := 1; fits && i <= len(ms); i++ {
		d := ms[len(ms)-i]
		fits = d == 1 || d == ss[len(ss)-i]
	}
	if !fits {
		tensor.Fail(op, "mask %s %v does not broadcast to the attention scores %s %v (..., queries, keys)",
			tensor.FormatShape(ms), mask.DType(), tensor.FormatShape(ss), dt)
	}
}

// CausalMask returns the (n, n) additive mask with −Inf above the diagonal:
// query i sees keys 0…i.
func CausalMask(dt tensor.DType, n int) *tensor.Tensor {
	m := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			m[i*n+j] = math.Inf(-1)
		}
	}
	return tensor.FromValues(dt, m, n, n)
}

// KeyPaddingMask returns the additive mask (B, 1, 1, L) that removes the
// keys marked true in pad[b][j] (padding), for ScaledDotProductAttention
// and MultiheadAttention over batches of sequences of length L.
func KeyPaddingMask(dt tensor.DType, pad [][]bool) *tensor.Tensor {
	b := len(pad)
	if b == 0 {
		tensor.Fail("nn.KeyPaddingMask", "no sequences")
	}
	l := len(pad[0])
	m := make([]float64, b*l)
	for i, row := range pad {
		if len(row) != l {
			tensor.Fail("nn.KeyPaddingMask", "sequence %d has %d flags, sequence 0 has %d", i, len(row), l)
		}
		for j, p := range row {
			if p {
				m[i*l+j] = math.Inf(-1)
			}
		}
	}
	return tensor.FromValues(dt, m, b, 1, 1, l)
}

// MultiheadAttention is PyTorch's nn.MultiheadAttention with batch_first:
// queries, keys and values are projected by the rows of InProjWeight
// (3E, E) (query, key, value blocks) plus InProjBias, split into Heads
// heads of E/Heads features, attended by ScaledDotProductAttention, joined
// and projected by OutProj. Parameter names match PyTorch's state_dict
// ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias").
type MultiheadAttention struct {
	EmbedDim, Heads int
	InProjWeight    *Param // (3E, E)
	InProjBias      *Param // (3E)
	OutProj         *Linear
}

// NewMultiheadAttention returns the layer initialised as PyTorch does:
// Xavier-uniform in_proj_weight, zero biases, and out_proj.weight as a
// Linear layer's. embed must be a multiple of heads.
func NewMultiheadAttention(rng *tensor.RNG, embed, heads int, dt tensor.DType) *MultiheadAttention {
	if embed <= 0 || heads <= 0 || embed%heads != 0 {
		tensor.Fail("nn.NewMultiheadAttention", "embed %d must be a positive multiple of heads %d", embed, heads)
	}
	m := &MultiheadAttention{EmbedDim: embed, Heads: heads}
	m.InProjWeight = NewParam(XavierUniform(rng, tensor.Zeros(dt, 3*embed, embed), 1))
	m.InProjBias = NewParam(tensor.Zeros(dt, 3*embed))
	m.OutProj = NewLinear(rng, embed, embed, true, dt)
	m.OutProj.Bias.Value.Fill(0)
	return m
}

// String names the layer in errors.
func (m *MultiheadAttention) String() string {
	return fmt.Sprintf("MultiheadAttention(%d, heads=%d)", m.EmbedDim, m.Heads)
}

// Params returns the parameters under PyTorch's names.
func (m *MultiheadAttention) Params() []NamedParam {
	return append([]NamedParam{{"in_proj_weight", m.InProjWeight}, {"in_proj_bias", m.InProjBias}},
		Prefix("out_proj", m.OutProj.Params())...)
}

// SetTraining does nothing: the layer has no dropout.
func (m *MultiheadAttention) SetTraining(bool) {}

// Forward attends from query (B, Lq, E) to key (B, Lk, E) and value
// (B, Lk, E) and returns (B, Lq, E). mask is added to every head's scores
// (shape broadcastable to (B, Heads, Lq, Lk): KeyPaddingMask gives
// (B, 1, 1, Lk)); causal hides later keys. It panics, naming the layer, on
// shapes that do not fit.
func (m *MultiheadAttention) Forward(query, key, value, mask *graph.Node, causal bool) *graph.Node {
	e, h := m.EmbedDim, m.Heads
	for _, x := range []*graph.Node{query, key, value} {
		checkInput(m, x, m.InProjWeight.Value.DType())
		if x.Dim() != 3 || x.Shape()[2] != e {
			tensor.Fail(m.String(), "inputs must be (B, L, %d), got %s", e, graph.Describe(query, key, value))
		}
	}
	if key.Shape()[0] != query.Shape()[0] || value.Shape()[0] != query.Shape()[0] || value.Shape()[1] != key.Shape()[1] {
		tensor.Fail(m.String(), "query (B, Lq, E), key and value (B, Lk, E) do not agree: %s", graph.Describe(query, key, value))
	}
	if mask != nil {
		checkMask(m.String(), mask, []int{query.Shape()[0], h, query.Shape()[1], key.Shape()[1]}, query.DType())
	}
	g := query.Graph()
	w, b := m.InProjWeight.Node(g), m.InProjBias.Node(g)
	project := func(x *graph.Node, block int) *graph.Node {
		wb := graph.Slice(w, 0, block*e, (block+1)*e, 1)
		bb := graph.Slice(b, 0, block*e, (block+1)*e, 1)
		y := graph.Linear(x, wb, bb) // (B, L, E)
		s := y.Shape()
		// A view: the fused kernel reads each head's rows in place.
		return graph.Permute(graph.Reshape(y, s[0], s[1], h, e/h), 0, 2, 1, 3) // (B, H, L, E/H)
	}
	q, k, v := project(query, 0), project(key, 1), project(value, 2)
	out := graph.Attention(q, k, v, mask, 1/math.Sqrt(float64(e/h)), causal) // (B, H, Lq, E/H)
	s := out.Shape()
	joined := graph.Reshape(graph.Permute(out, 0, 2, 1, 3), s[0], s[2], e)
	return m.OutProj.Forward(joined)
}

// SinusoidalPositions returns the (n, d) position encodings of Vaswani et
// al. (2017): PE(p, 2i) = sin(p/10000^{2i/d}), PE(p, 2i+1) = cos(…).
func SinusoidalPositions(dt tensor.DType, n, d int) *tensor.Tensor {
	v := make([]float64, n*d)
	for p := range n {
		for i := 0; i < d; i += 2 {
			angle := float64(p) / math.Pow(10000, float64(i)/float64(d))
			v[p*d+i] = math.Sin(angle)
			if i+1 < d {
				v[p*d+i+1] = math.Cos(angle)
			}
		}
	}
	return tensor.FromValues(dt, v, n, d)
}
