package graph_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkAttention times one forward and reverse pass (gradients of q,
// k and v) of self-attention (no mask, as in examples/bench's transformer_block) in float32, width 64 per head, at
// sequence lengths 128, 512 and 2048, fused against the composite it
// replaces; with -benchmem the composite's bytes grow as seq² and the
// fused op's as seq. Run alternately: -bench 'Attention/.*seq=512'.
func BenchmarkAttention(b *testing.B) {
	for _, c := range []struct{ seq, heads int }{{128, 32}, {512, 8}, {2048, 2}} {
		rng := tensor.NewRNG(1)
		shape := []int{c.heads, c.seq, 64}
		q, k, v := rng.Normal(tensor.Float32, 0, 1, shape...), rng.Normal(tensor.Float32, 0, 1, shape...), rng.Normal(tensor.Float32, 0, 1, shape...)
		r := rng.Normal(tensor.Float32, 0, 1, shape...)
		for _, impl := range []struct {
			name string
			f    func(q, k, v, m *graph.Node, scale float64, causal bool) *graph.Node
		}{{"fused", graph.Attention}, {"composite", compositeAttention}} {
			b.Run(fmt.Sprintf("%s/seq=%d", impl.name, c.seq), func(b *testing.B) {
				g := graph.New()
				b.ReportAllocs()
				for b.Loop() {
					g.Reset()
					xs := []*graph.Node{g.Var(q), g.Var(k), g.Var(v)}
					out := impl.f(xs[0], xs[1], xs[2], nil, 1/math.Sqrt(64), false)
					autodiff.Grad(graph.Sum(graph.Mul(out, g.Const(r)), nil, false), xs...)
				}
			})
		}
	}
}
