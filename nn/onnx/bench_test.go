package onnx_test

import (
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkEncoderStep measures a training step (forward and gradients of
// every parameter) of the imported transformer encoder layer, shape
// arithmetic included, on a graph reused across steps.
func BenchmarkEncoderStep(b *testing.B) {
	m, err := onnx.Open("testdata/encoder17.onnx")
	if err != nil {
		b.Fatal(err)
	}
	x := tensor.NewRNG(1).Normal(tensor.Float32, 0, 1, 2, 5, 16)
	pad := tensor.Zeros(tensor.Float32, 2, 5)
	g := graph.New()
	b.ReportAllocs()
	for b.Loop() {
		outs, err := m.Call(g, g.Const(x), g.Const(pad))
		if err != nil {
			b.Fatal(err)
		}
		nn.Gradients(graph.Mean(graph.Square(outs[0]), nil, false), m.Params())
		g.Reset()
	}
}
