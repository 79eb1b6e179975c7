package main

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// transformerWorkload runs a pre-norm transformer encoder block
// (nn.TransformerEncoderLayer: width 256, 4 heads, feed-forward 1024,
// GELU, no mask) forward and backward on a batch of 32 sequences of 128
// steps in float32: g.Reset, the block, the loss sum(out·r) for a fixed
// random r, and the gradients of every parameter (no optimiser step).
func transformerWorkload() workload {
	const batch, seq, width, heads, ff = 32, 128, 256, 4, 1024
	return seeded("transformer_block", 3, throughput("sequences_per_s", batch), func(rng *tensor.RNG) step {
		l := nn.NewTransformerEncoderLayer(rng, width, heads, ff, tensor.Float32)
		nn.To(l, device)
		ps := l.Params()
		x := onDevice(rng.Normal(tensor.Float32, 0, 1, batch, seq, width))
		r := onDevice(rng.Normal(tensor.Float32, 0, 1, batch, seq, width))
		g := graph.New()
		return func() {
			g.Reset()
			out := l.Forward(g.Const(x), nil, false)
			loss := graph.Sum(graph.Mul(out, g.Const(r)), nil, false)
			nn.Gradients(loss, ps)
		}
	}).onGPU()
}
