// Package onnx reads ONNX model files and imports them as Gradus modules,
// and writes Gradus models as ONNX files.
//
// Open (or Read) parses a model, checks that Gradus imports every operator,
// attribute and the opset (13 to 17 of the default domain, what PyTorch
// 1.13 and later export), and decodes the initializers: float32, float64,
// float16 and bfloat16 become float tensors (the half types widened to
// float32), integers and booleans of 8 to 64 bits are kept for shape
// arithmetic; data may sit in the file or in external data files. A model
// is an nn.Module: its float initializers are parameters under their ONNX
// names (PyTorch's state-dict names for torch.onnx.export with
// training=TrainingMode.PRESERVE), so optimisers, train and nn/checkpoint
// work on it, and BatchNormalization's running statistics are buffers.
//
//	m, err := onnx.Open("classifier.onnx")
//	if err != nil { … }
//	g := graph.New()
//	outs, err := m.Call(g, g.Const(x)) // one node per graph output
//	loss := graph.Mean(outs[0], nil, false)
//	grads := nn.Gradients(loss, m.Params())
//
// Call maps each ONNX operator onto graph ops, so every imported operator
// differentiates (reverse and forward mode, to any order) by the rules of
// the ops it becomes. Float tensors flow as graph nodes; integers and
// booleans (shapes, indices, masks) are computed in Go as the graph is
// built, which is possible because Gradus graphs run as they are built:
// the Shape, Gather, Concat, Unsqueeze arithmetic of PyTorch's exporter
// is folded into the shapes of the graph ops. SupportedOperators lists
// the operators. Model.Summary describes a model as Inspect describes
// any ONNX file. TorchStateDict maps an imported model's parameters back
// to the PyTorch module's state-dict names and layouts (the weights
// torch.onnx.export transposes, reshapes or reorders), so that a model
// fine-tuned in Gradus loads into PyTorch with strict names.
//
// # Export
//
// Export and Save write a model's forward pass as an ONNX graph (opset 17)
// with its parameters and buffers as initializers under their state-dict
// names (the buffers listed under BuffersKey), and every other constant
// as a Constant node, so that re-importing it gives exactly the module's
// parameters and buffers; Inspect summarises any ONNX file. ExportProgram
// writes a forward pass captured by graph.Capture, its fused steps as the
// ops they fused. A model imported with Open can be exported again: the
// re-imported model computes the same outputs. See export.go for what is
// written.
//
// # Errors
//
// For import: a file that is not an ONNX model, is truncated, holds an initializer
// shorter than its shape, a cycle, or a node input that nothing defines
// is an error wrapping ErrFormat; an operator, opset, attribute value or
// element type that Gradus does not import is an error wrapping
// ErrUnsupported that names the node, the operator and what is missing.
// Both are returned by Read and Open, before anything runs. Call returns
// an error naming the node when inputs do not fit the model; passing the
// wrong number of inputs or nil panics with a *tensor.Error.
package onnx
