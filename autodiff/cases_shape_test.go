package autodiff_test

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for the shape ops (graph/shape.go) and matmul
// (graph/matmul.go).

func init() {
	addCase("reshape", opCase{name: "contiguous", inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.Reshape(xs[0], 6, -1) }})
	addCase("reshape", opCase{name: "of a transposed view", inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.Reshape(graph.Transpose(xs[0]), -1) }})
	addCase("reshape", opCase{name: "squeeze and unsqueeze", inputs: ewNormal(1, []int{3, 1, 4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Unsqueeze(graph.Squeeze(xs[0], 1), 0) }})
	addCase("permute", opCase{inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.Permute(xs[0], 2, 0, 1) }})
	addCase("permute", opCase{name: "transpose", inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.Transpose(xs[0]) }})
	addCase("broadcast_to", opCase{inputs: ewNormal(1, ewS31),
		f: func(xs []*graph.Node) *graph.Node { return graph.BroadcastTo(xs[0], 2, 3, 4) }})
	addCase("sum_to", opCase{inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.SumTo(xs[0], 3, 1) }})
	for _, s := range []struct {
		name                    string
		axis, start, stop, step int
	}{
		{"middle", 1, 1, 3, 1},
		{"step 2", -1, 0, math.MaxInt, 2},
		{"reversed", 1, math.MaxInt, math.MinInt, -1},
		{"negative bounds", 2, -3, -1, 1},
	} {
		addCase("slice", opCase{name: s.name, inputs: ewNormal(1, ewS234),
			f: func(xs []*graph.Node) *graph.Node { return graph.Slice(xs[0], s.axis, s.start, s.stop, s.step) }})
	}
	addCase("scatter_slice", opCase{inputs: ewNormal(1, []int{2, 2, 4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.ScatterSlice(xs[0], []int{2, 5, 4}, 1, 1, 5, 2) }})
	addCase("concat", opCase{name: "three operands", inputs: ewNormal(1, []int{2, 1, 4}, ewS234, []int{2, 2, 4}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Concat(1, xs...) }})
	addCase("concat", opCase{name: "stack", inputs: ewNormal(1, ewS34, ewS34),
		f: func(xs []*graph.Node) *graph.Node { return graph.Stack(-1, xs...) }})
	addCase("concat", opCase{name: "split and rejoin", inputs: ewNormal(1, []int{5, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			p := graph.Split(xs[0], 0, 2, 3)
			return graph.Concat(0, p[1], graph.Square(p[0]))
		}})
	addCase("index_select", opCase{name: "repeated indices", inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.IndexSelect(xs[0], 1, []int{2, 0, 2, 1}) }})
	addCase("scatter_add", opCase{name: "repeated indices", inputs: ewNormal(1, []int{2, 4, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.ScatterAdd(xs[0], 1, []int{1, 0, 1, 4}, 5) }})
	addCase("pad", opCase{inputs: ewNormal(1, ewS234),
		f: func(xs []*graph.Node) *graph.Node { return graph.Pad(xs[0], [][2]int{{0, 0}, {1, 2}, {2, 0}}, 1.5) }})

	addCase("matmul", opCase{name: "matrices", inputs: ewNormal(1, ewS34, []int{4, 5}), f: ewBinary(graph.MatMul)})
	addCase("matmul", opCase{name: "broadcast batch", inputs: ewNormal(1, []int{2, 1, 3, 4}, []int{3, 4, 2}), f: ewBinary(graph.MatMul)})
	addCase("linear", opCase{name: "batch", inputs: ewNormal(1, []int{2, 3, 4}, []int{5, 4}, []int{5}), f: ewTernary(graph.Linear)})
	addCase("linear", opCase{name: "matrix", inputs: ewNormal(1, []int{3, 4}, []int{2, 4}, []int{2}), f: ewTernary(graph.Linear)})
	addCase("linear", opCase{name: "vector", inputs: ewNormal(1, []int{4}, []int{2, 4}, []int{2}), f: ewTernary(graph.Linear)})
	// Per-channel affine maps and sums on (N, C, ...) layouts, channels on axis 1.
	addCase("channel_affine", opCase{name: "image", inputs: ewNormal(1, []int{2, 3, 2, 2}, []int{3}, []int{3}), f: ewTernary(graph.ChannelAffine)})
	addCase("channel_affine", opCase{name: "sequence", inputs: ewNormal(1, []int{2, 3, 4}, []int{3}, []int{3}), f: ewTernary(graph.ChannelAffine)})
	addCase("channel_affine", opCase{name: "features", inputs: ewNormal(1, []int{4, 3}, []int{3}, []int{3}), f: ewTernary(graph.ChannelAffine)})
	addCase("channel_scale", opCase{inputs: ewNormal(1, []int{2, 3, 2, 2}, []int{3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.ChannelAffine(xs[0], xs[1], nil) }})
	addCase("channel_dot", opCase{name: "image", inputs: ewNormal(1, []int{2, 3, 2, 2}, []int{2, 3, 2, 2}), f: ewBinary(graph.ChannelDot)})
	addCase("channel_dot", opCase{name: "features", inputs: ewNormal(1, []int{4, 3}, []int{4, 3}), f: ewBinary(graph.ChannelDot)})
	moments := func(xs []*graph.Node) *graph.Node {
		m, v := graph.ChannelMoments(xs[0])
		return graph.Stack(0, m, v)
	}
	addCase("channel_moments", opCase{name: "image", inputs: ewNormal(1, []int{3, 2, 2, 2}), f: moments})
	addCase("channel_moments", opCase{name: "features", inputs: ewNormal(1, []int{5, 3}), f: moments})
	// A batch against one matrix: b's gradient is one GEMM over the flattened rows.
	addCase("matmul", opCase{name: "batch @ matrix", inputs: ewNormal(1, []int{2, 2, 3, 4}, []int{4, 5}), f: ewBinary(graph.MatMul)})
	addCase("matmul", opCase{name: "vector @ batch", inputs: ewNormal(1, ewS4, []int{2, 4, 3}), f: ewBinary(graph.MatMul)})
	addCase("matmul", opCase{name: "matrix @ vector", inputs: ewNormal(1, ewS34, ewS4), f: ewBinary(graph.MatMul)})
	addCase("matmul", opCase{name: "dot", inputs: ewNormal(1, ewS4, ewS4), f: ewBinary(graph.Dot)})
	addCase("matmul", opCase{name: "outer", inputs: ewNormal(1, []int{3}, ewS4), f: ewBinary(graph.Outer)})
	for _, tr := range [][2]bool{{true, false}, {false, true}, {true, true}} {
		addCase("matmul", opCase{name: "transposed", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
			a, b := []int{2, 3, 4}, []int{4, 5}
			if tr[0] {
				a = []int{2, 4, 3}
			}
			if tr[1] {
				b = []int{5, 4}
			}
			return []*tensor.Tensor{rng.Normal(ewF64, 0, 1, a...), rng.Normal(ewF64, 0, 1, b...)}
		}, f: func(xs []*graph.Node) *graph.Node { return graph.MatMulT(xs[0], xs[1], tr[0], tr[1]) }})
	}
}
