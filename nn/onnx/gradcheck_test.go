package onnx_test

import (
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

// Float64 exports of the zoo's models differentiate correctly in every
// mode GradCheck knows (reverse, forward, reverse of reverse, forward of
// reverse) with respect to the input and a weight: the imported operators
// carry the rules of the graph ops they become, to second order.
func TestGradCheckFloat64(t *testing.T) {
	t.Parallel()
	rng := tensor.NewRNG(3)
	for _, c := range []struct {
		name  string
		shape []int
		param string // a weight checked as well
		mask  *tensor.Tensor
	}{
		{"cnn64", []int{2, 3, 8, 8}, "block.conv2.weight", nil},
		{"gru64", []int{7, 2, 5}, "fc.weight", nil},
		{"encoder64", []int{2, 5, 16}, "layer.norm1.weight", tensor.FromFloat64s([]float64{0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, 2, 5)},
		{"ops64", []int{2, 3, 8}, "conv.weight", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := onnx.Open("testdata/" + c.name + ".onnx")
			if err != nil {
				t.Fatal(err)
			}
			var w *tensor.Tensor
			for _, p := range m.Params() {
				if p.Name == c.param {
					w = p.Value
				}
			}
			if w == nil {
				t.Fatalf("no parameter %q", c.param)
			}
			f := func(xs []*graph.Node) *graph.Node {
				g := xs[0].Graph()
				g.Bind(w, xs[1])
				ins := []*graph.Node{xs[0]}
				if c.mask != nil {
					ins = append(ins, g.Const(c.mask))
				}
				outs, err := m.Call(g, ins...)
				if err != nil {
					tensor.Fail("onnx.Model.Call", "%v", err)
				}
				return outs[0]
			}
			x := rng.Normal(tensor.Float64, 0, 1, c.shape...)
			if _, err := autodiff.GradCheck(f, []*tensor.Tensor{x, w.Clone()}, autodiff.GradCheckOptions{Name: c.name, Order: 2, Seed: 1}); err != nil {
				t.Error(err)
			}
		})
	}
}
