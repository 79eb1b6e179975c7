package onnx_test

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

// A classifier exported with a dynamic batch and read back by Inspect.
// onnx.Save writes the same bytes to a file atomically.
func ExampleExport() {
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(
		nn.NewLinear(rng, 4, 16, true, tensor.Float32), nn.ReLU{},
		nn.NewLinear(rng, 16, 3, true, tensor.Float32), nn.Softmax{Axis: -1})
	model.SetTraining(false)
	example := tensor.Zeros(tensor.Float32, 8, 4) // a batch of 8; any batch size runs
	var buf bytes.Buffer
	if err := onnx.Export(&buf, model, []*tensor.Tensor{example}, onnx.ExportOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	s, err := onnx.Inspect(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opset", s.Opsets[""], "inputs", s.Inputs, "outputs", s.Outputs)
	ops := make([]string, 0, len(s.Operators))
	for op, n := range s.Operators {
		ops = append(ops, fmt.Sprintf("%s×%d", op, n))
	}
	sort.Strings(ops)
	fmt.Println(ops)
	fmt.Println(s.Parameters, "parameters, as nn.NumParams counts:", nn.NumParams(model))
	// Output:
	// opset 17 inputs [input float32 (batch, 4)] outputs [output float32 (batch, 3)]
	// [Gemm×2 Identity×1 Relu×1 Softmax×1]
	// 131 parameters, as nn.NumParams counts: 131
}

// A captured forward pass (graph.Capture on the input and the model's
// parameters) exported as ONNX: the parameters become initializers, the
// fused elementwise tail its ops again.
func ExampleExportProgram() {
	rng := tensor.NewRNG(1)
	model := nn.NewSequential(nn.NewLinear(rng, 4, 3, true, tensor.Float32), nn.Tanh{})
	model.SetTraining(false)
	x := tensor.Zeros(tensor.Float32, 2, 4)
	in := append([]*tensor.Tensor{x}, nn.Values(model.Params())...)
	p, err := graph.Capture(func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.MulScalar(graph.Exp(model.Forward(in[0])), 2)}
	}, in, graph.CaptureOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var buf bytes.Buffer
	if err := onnx.ExportProgram(&buf, p, in, model, onnx.ExportOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	m, err := onnx.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Inputs(), m.Operators())
	for _, p := range m.Params() {
		fmt.Println(p.Name, p.Value.Shape())
	}
	// Output:
	// [input float32 (2, 4)] [Constant Exp Gemm Identity Mul Tanh]
	// 0.weight [3 4]
	// 0.bias [3]
}
