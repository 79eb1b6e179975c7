package graph_test

import (
	"reflect"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func TestOpAttrs(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.Zeros(tensor.Float64, 2, 3, 4))
	w := g.Var(tensor.Zeros(tensor.Float64, 5, 3, 1, 1))
	x4 := graph.Reshape(x, 2, 3, 4, 1)
	conv := tensor.ConvParams{Stride: [2]int{2, 1}, Padding: [2]int{1, 0}}
	pool := tensor.PoolParams{Kernel: [2]int{2, 1}}
	cases := []struct {
		n    *graph.Node
		want graph.Attrs
	}{
		{graph.AddScalar(x, 1.5), graph.Attrs{"scalar": 1.5}},
		{graph.Permute(x, 2, 0, 1), graph.Attrs{"perm": []int{2, 0, 1}}},
		{graph.Slice(x, -1, 1, 3, 1), graph.Attrs{"axis": 2, "start": 1, "stop": 3, "step": 1}},
		{graph.Softmax(x, -1), graph.Attrs{"axis": 2}},
		{graph.Mean(x, []int{2, 0}, true), graph.Attrs{"axes": []int{0, 2}, "keepdims": true}},
		{graph.MatMulT(x, x, false, true), graph.Attrs{"trans_a": false, "trans_b": true}},
		{graph.Concat(1, x, x), graph.Attrs{"axis": 1}},
		{graph.IndexSelect(x, 1, []int{2, 0}), graph.Attrs{"axis": 1, "indices": []int{2, 0}}},
		{graph.Conv2D(x4, w, conv), graph.Attrs{"conv": conv}},
		{graph.AvgPool2D(x4, pool), graph.Attrs{"pool": pool}},
		{graph.Reshape(x, 6, 4), graph.Attrs{"shape": []int{6, 4}}},
		{graph.Add(x, x), nil},
		{graph.Attention(x, x, x, nil, 0.5, true).Inputs()[0], graph.Attrs{"scale": 0.5, "causal": true}},
	}
	for _, c := range cases {
		if got := graph.OpAttrs(c.n.Op()); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Attrs = %v, want %v", c.n.Op().Name(), got, c.want)
		}
	}
	// The values are copies: changing them leaves the op as it was.
	p := graph.Permute(x, 1, 0, 2)
	graph.OpAttrs(p.Op())["perm"].([]int)[0] = 9
	if got := graph.OpAttrs(p.Op())["perm"]; !reflect.DeepEqual(got, []int{1, 0, 2}) {
		t.Errorf("perm after changing a copy = %v", got)
	}
}
