package onnx_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/tensor"
)

// Import a model PyTorch exported (an MLP, its weights in an external
// data file), run it and differentiate a loss of its output with respect
// to its parameters, which carry PyTorch's state-dict names.
func Example() {
	m, err := onnx.Open("testdata/mlp.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opset", m.Opset, m.Operators())
	fmt.Println("input", m.Inputs()[0].Name, m.Inputs()[0].Shape)
	g := graph.New()
	x := g.Const(tensor.Ones(tensor.Float32, 2, 6))
	outs, err := m.Call(g, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	logp := outs[0] // log-probabilities of 3 classes
	fmt.Println("output", logp.Shape())
	loss := graph.Neg(graph.Mean(logp, nil, false))
	grads := nn.Gradients(loss, m.Params())
	for i, p := range m.Params()[:2] {
		fmt.Println(p.Name, p.Value.Shape(), "gradient", grads[i].Shape())
	}
	// Output:
	// opset 13 [Gemm LogSoftmax Mul Relu Sigmoid Tanh]
	// input in0 [-1 6]
	// output [2 3]
	// fc1.weight [16 6] gradient [16 6]
	// fc1.bias [16] gradient [16]
}

// Run evaluates a model on tensors; an input that does not fit is an
// error naming it.
func ExampleModel_Run() {
	m, err := onnx.Open("testdata/decoder.onnx") // a VAE decoder: z (n, 4) → images (n, 1, 16, 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	ys, err := m.Run(tensor.Zeros(tensor.Float32, 5, 4))
	fmt.Println(ys[0].Shape(), err)
	_, err = m.Run(tensor.Zeros(tensor.Float32, 5, 3))
	fmt.Println(err)
	// Output:
	// [5 1 16 16] <nil>
	// onnx: input "in0" has shape (5, 3), the model takes (batch, 4)
}
