package nn

import (
	"fmt"

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

// TransformerDecoderLayer is the pre-norm transformer decoder block,
// PyTorch's nn.TransformerDecoderLayer with norm_first=True,
// batch_first=True, activation GELU and no dropout:
//
//	x ← x + SelfAttn(Norm1(x))                 (causal in a language model)
//	x ← x + CrossAttn(Norm2(x), memory)         (only with cross-attention)
//	x ← x + Linear2(GELU(Linear1(Norm3(x))))
//
// Built without cross-attention (CrossAttn and Norm2 nil) it is the block
// of a decoder-only model such as GPT. Parameter names match PyTorch's
// ("self_attn.in_proj_weight", "multihead_attn.out_proj.weight",
// "linear1.weight", "norm3.bias", …).
type TransformerDecoderLayer struct {
	SelfAttn            *MultiheadAttention
	CrossAttn           *MultiheadAttention // PyTorch's multihead_attn; nil without cross-attention
	Linear1, Linear2    *Linear
	Norm1, Norm2, Norm3 *LayerNorm // Norm2 is nil without cross-attention
}

// NewTransformerDecoderLayer returns a block of width dModel with heads
// attention heads, a feed-forward layer of width ff and, if cross, a
// cross-attention to a memory, initialised as PyTorch does (LayerNorm eps
// 1e-5). It panics if heads does not divide dModel.
func NewTransformerDecoderLayer(rng *tensor.RNG, dModel, heads, ff int, cross bool, dt tensor.DType) *TransformerDecoderLayer {
	if dModel <= 0 || heads <= 0 || ff <= 0 || dModel%heads != 0 {
		tensor.Fail("nn.NewTransformerDecoderLayer", "width %d must be a positive multiple of the head count %d (feed-forward width %d)", dModel, heads, ff)
	}
	l := &TransformerDecoderLayer{SelfAttn: NewMultiheadAttention(rng, dModel, heads, dt)}
	if cross {
		l.CrossAttn = NewMultiheadAttention(rng, dModel, heads, dt)
	}
	l.Linear1 = NewLinear(rng, dModel, ff, true, dt)
	l.Linear2 = NewLinear(rng, ff, dModel, true, dt)
	l.Norm1 = NewLayerNorm([]int{dModel}, 1e-5, true, dt)
	if cross {
		l.Norm2 = NewLayerNorm([]int{dModel}, 1e-5, true, dt)
	}
	l.Norm3 = NewLayerNorm([]int{dModel}, 1e-5, true, dt)
	return l
}

// String names the block in errors, e.g. "TransformerDecoderLayer(64, heads=4)".
func (l *TransformerDecoderLayer) String() string {
	return fmt.Sprintf("TransformerDecoderLayer(%d, heads=%d)", l.SelfAttn.EmbedDim, l.SelfAttn.Heads)
}

// Params returns the parameters under PyTorch's names, in its order.
func (l *TransformerDecoderLayer) Params() []NamedParam {
	ps := Prefix("self_attn", l.SelfAttn.Params())
	if l.CrossAttn != nil {
		ps = append(ps, Prefix("multihead_attn", l.CrossAttn.Params())...)
	}
	ps = append(ps, Prefix("linear1", l.Linear1.Params())...)
	ps = append(ps, Prefix("linear2", l.Linear2.Params())...)
	ps = append(ps, Prefix("norm1", l.Norm1.Params())...)
	if l.Norm2 != nil {
		ps = append(ps, Prefix("norm2", l.Norm2.Params())...)
	}
	return append(ps, Prefix("norm3", l.Norm3.Params())...)
}

// SetTraining does nothing: the block has no dropout.
func (l *TransformerDecoderLayer) SetTraining(bool) {}

// Forward maps x (B, L, dModel) to the same shape. selfMask is added to
// the self-attention scores and causal hides later steps (as
// MultiheadAttention.Forward); memory (B, M, dModel) is what the
// cross-attention reads, memoryMask is added to its scores (for example a
// KeyPaddingMask of the memory). memory must be given exactly when the
// block has cross-attention; it panics, naming the block, otherwise.
func (l *TransformerDecoderLayer) Forward(x, memory, selfMask, memoryMask *graph.Node, causal bool) *graph.Node {
	if (memory != nil) != (l.CrossAttn != nil) {
		if memory == nil {
			tensor.Fail(l.String(), "the block has cross-attention but no memory was given")
		}
		tensor.Fail(l.String(), "a memory %s was given to a block without cross-attention", tensor.FormatShape(memory.Shape()))
	}
	if memoryMask != nil && memory == nil {
		tensor.Fail(l.String(), "a memory mask without a memory")
	}
	h := l.Norm1.Forward(x)
	x = graph.Add(x, l.SelfAttn.Forward(h, h, h, selfMask, causal))
	if l.CrossAttn != nil {
		x = graph.Add(x, l.CrossAttn.Forward(l.Norm2.Forward(x), memory, memory, memoryMask, false))
	}
	return graph.Add(x, l.Linear2.Forward(graph.Gelu(l.Linear1.Forward(l.Norm3.Forward(x)))))
}
