package onnx

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// ops is the table of imported operators: what each accepts (inputs,
// attributes, a check of their values when the model is read) and the
// graph ops it becomes. The semantics are those of opsets 13 to 17.
var ops = map[string]*opSpec{}

func init() {
	for name, f := range map[string]func(*graph.Node) *graph.Node{
		"Relu": graph.Relu, "Sigmoid": graph.Sigmoid, "Tanh": graph.Tanh, "Exp": graph.Exp,
		"Log": graph.Log, "Sqrt": graph.Sqrt, "Neg": graph.Neg, "Abs": graph.Abs, "Erf": graph.Erf,
		"Reciprocal": graph.Reciprocal, "Softplus": graph.Softplus, "Sin": graph.Sin, "Cos": graph.Cos,
		"Sign": graph.Sign,
	} {
		ops[name] = unary(f)
	}
	ops["LeakyRelu"] = withAlpha(0.01, graph.LeakyRelu)
	ops["Elu"] = withAlpha(1, graph.Elu)
	ops["HardSigmoid"] = &opSpec{minIn: 1, maxIn: 1, attrs: "alpha beta", run: runHardSigmoid}
	ops["HardSwish"] = &opSpec{minIn: 1, maxIn: 1, run: runHardSwish}
	ops["PRelu"] = &opSpec{minIn: 2, maxIn: 2, run: runPRelu}
	ops["Clip"] = &opSpec{minIn: 1, maxIn: 3, run: runClip}
	ops["Add"] = arith(graph.Add, tensor.Add, false)
	ops["Sub"] = arith(graph.Sub, tensor.Sub, false)
	ops["Mul"] = arith(graph.Mul, tensor.Mul, false)
	ops["Div"] = arith(graph.Div, tensor.Div, true) // integer division truncates
	ops["Pow"] = &opSpec{minIn: 2, maxIn: 2, run: runPow}
	ops["Max"] = variadic(graph.Maximum)
	ops["Min"] = variadic(graph.Minimum)
	ops["Sum"] = variadic(graph.Add)
	ops["Equal"] = compare(tensor.Equal)
	ops["Greater"] = compare(tensor.Greater)
	ops["Less"] = compare(tensor.Less)
	ops["GreaterOrEqual"] = compare(tensor.GreaterEqual)
	ops["LessOrEqual"] = compare(tensor.LessEqual)
	ops["And"] = logic(func(a, b bool) bool { return a && b })
	ops["Or"] = logic(func(a, b bool) bool { return a || b })
	ops["Xor"] = logic(func(a, b bool) bool { return a != b })
	ops["Not"] = &opSpec{minIn: 1, maxIn: 1, run: runNot}
	ops["Where"] = &opSpec{minIn: 3, maxIn: 3, run: runWhere}
	ops["Cast"] = &opSpec{minIn: 1, maxIn: 1, attrs: "to", check: checkCast, run: runCast}
	ops["Identity"] = &opSpec{minIn: 1, maxIn: 1, run: identity}
	ops["Dropout"] = &opSpec{minIn: 1, maxIn: 3, attrs: "seed", run: runDropout}
	ops["Constant"] = &opSpec{attrs: "value value_float value_floats value_int value_ints", check: checkConstant, run: runConstant}

	ops["Gemm"] = &opSpec{minIn: 2, maxIn: 3, attrs: "alpha beta transA transB", run: runGemm}
	ops["MatMul"] = &opSpec{minIn: 2, maxIn: 2, run: runMatMul}
	ops["Conv"] = &opSpec{minIn: 2, maxIn: 3, attrs: "auto_pad dilations group kernel_shape pads strides", run: runConv}
	ops["ConvTranspose"] = &opSpec{minIn: 2, maxIn: 3, attrs: "auto_pad dilations group kernel_shape output_padding output_shape pads strides", check: checkConvTranspose, run: runConvTranspose}
	pool := "auto_pad ceil_mode dilations kernel_shape pads strides"
	ops["MaxPool"] = &opSpec{minIn: 1, maxIn: 1, attrs: pool + " storage_order", check: checkPool, run: runPool}
	ops["AveragePool"] = &opSpec{minIn: 1, maxIn: 1, attrs: pool + " count_include_pad", check: checkPool, run: runPool}
	ops["GlobalAveragePool"] = &opSpec{minIn: 1, maxIn: 1, run: runGlobalPool}
	ops["GlobalMaxPool"] = &opSpec{minIn: 1, maxIn: 1, run: runGlobalPool}
	ops["BatchNormalization"] = &opSpec{minIn: 5, maxIn: 5, attrs: "epsilon momentum training_mode", check: checkBatchNorm, run: runBatchNorm}
	ops["LayerNormalization"] = &opSpec{minIn: 2, maxIn: 3, attrs: "axis epsilon stash_type", check: checkLayerNorm, run: runLayerNorm}
	ops["Softmax"] = &opSpec{minIn: 1, maxIn: 1, attrs: "axis", run: runSoftmax}
	ops["LogSoftmax"] = &opSpec{minIn: 1, maxIn: 1, attrs: "axis", run: runSoftmax}
	for _, r := range []string{"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp"} {
		ops[r] = &opSpec{minIn: 1, maxIn: 1, attrs: "axes keepdims", run: runReduce}
	}
	ops["ReduceSum"] = &opSpec{minIn: 1, maxIn: 2, attrs: "keepdims noop_with_empty_axes", run: runReduce}
	rnn := "activation_alpha activation_beta activations clip direction hidden_size layout"
	ops["LSTM"] = &opSpec{minIn: 3, maxIn: 8, attrs: rnn + " input_forget", check: checkRNN, run: runRNN}
	ops["GRU"] = &opSpec{minIn: 3, maxIn: 6, attrs: rnn + " linear_before_reset", check: checkRNN, run: runRNN}

	ops["Reshape"] = &opSpec{minIn: 2, maxIn: 2, attrs: "allowzero", run: runReshape}
	ops["Flatten"] = &opSpec{minIn: 1, maxIn: 1, attrs: "axis", run: runFlatten}
	ops["Transpose"] = &opSpec{minIn: 1, maxIn: 1, attrs: "perm", run: runTranspose}
	ops["Concat"] = &opSpec{minIn: 1, maxIn: -1, attrs: "axis", run: runConcat}
	ops["Split"] = &opSpec{minIn: 1, maxIn: 2, attrs: "axis", run: runSplit}
	ops["Slice"] = &opSpec{minIn: 3, maxIn: 5, run: runSlice}
	ops["Gather"] = &opSpec{minIn: 2, maxIn: 2, attrs: "axis", run: runGather}
	ops["Unsqueeze"] = &opSpec{minIn: 2, maxIn: 2, run: runUnsqueeze}
	ops["Squeeze"] = &opSpec{minIn: 1, maxIn: 2, run: runSqueeze}
	ops["Expand"] = &opSpec{minIn: 2, maxIn: 2, run: runExpand}
	ops["Tile"] = &opSpec{minIn: 2, maxIn: 2, run: runTile}
	ops["Shape"] = &opSpec{minIn: 1, maxIn: 1, attrs: "start end", run: runShape}
	ops["Size"] = &opSpec{minIn: 1, maxIn: 1, run: runSize}
	ops["ConstantOfShape"] = &opSpec{minIn: 1, maxIn: 1, attrs: "value", run: runConstantOfShape}
	ops["Range"] = &opSpec{minIn: 3, maxIn: 3, run: runRange}
	ops["Pad"] = &opSpec{minIn: 2, maxIn: 3, attrs: "mode", check: func(n *node) error { return n.wantStr("mode", "constant") }, run: runPad}
}
