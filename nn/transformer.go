package nn

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// TransformerEncoderLayer is the pre-norm transformer block, PyTorch's
// nn.TransformerEncoderLayer with norm_first=True, batch_first=True,
// activation GELU and no dropout:
//
//	x ← x + SelfAttn(Norm1(x));  x ← x + Linear2(GELU(Linear1(Norm2(x))))
//
// Parameter names match PyTorch's ("self_attn.in_proj_weight",
// "linear1.weight", "norm1.weight", …).
type TransformerEncoderLayer struct {
	SelfAttn         *MultiheadAttention
	Linear1, Linear2 *Linear
	Norm1, Norm2     *LayerNorm
}

// NewTransformerEncoderLayer returns a block of width dModel with heads
// attention heads and a feed-forward layer of width ff, initialised as
// PyTorch does (LayerNorm eps 1e-5).
func NewTransformerEncoderLayer(rng *tensor.RNG, dModel, heads, ff int, dt tensor.DType) *TransformerEncoderLayer {
	return &TransformerEncoderLayer{
		SelfAttn: NewMultiheadAttention(rng, dModel, heads, dt),
		Linear1:  NewLinear(rng, dModel, ff, true, dt),
		Linear2:  NewLinear(rng, ff, dModel, true, dt),
		Norm1:    NewLayerNorm([]int{dModel}, 1e-5, true, dt),
		Norm2:    NewLayerNorm([]int{dModel}, 1e-5, true, dt),
	}
}

// Params returns the parameters under PyTorch's names.
func (l *TransformerEncoderLayer) Params() []NamedParam {
	var ps []NamedParam
	ps = append(ps, Prefix("self_attn", l.SelfAttn.Params())...)
	ps = append(ps, Prefix("linear1", l.Linear1.Params())...)
	ps = append(ps, Prefix("linear2", l.Linear2.Params())...)
	ps = append(ps, Prefix("norm1", l.Norm1.Params())...)
	return append(ps, Prefix("norm2", l.Norm2.Params())...)
}

// SetTraining does nothing: the block has no dropout.
func (l *TransformerEncoderLayer) SetTraining(bool) {}

// Forward maps x (B, L, dModel) to the same shape; mask and causal are as
// for MultiheadAttention.Forward.
func (l *TransformerEncoderLayer) Forward(x, mask *graph.Node, causal bool) *graph.Node {
	h := l.Norm1.Forward(x)
	x = graph.Add(x, l.SelfAttn.Forward(h, h, h, mask, causal))
	return graph.Add(x, l.Linear2.Forward(graph.Gelu(l.Linear1.Forward(l.Norm2.Forward(x)))))
}
