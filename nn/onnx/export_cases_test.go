package onnx

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// exportCase is one model of an nn module family, exported by the tests:
// its module, example inputs (and the same inputs at another batch size,
// for models whose batch is dynamic) and what the file must hold.
type exportCase struct {
	name    string
	m       nn.Module
	in      []*tensor.Tensor
	opts    ExportOptions
	dynamic bool           // the batch dimension is dynamic in the file
	ops     map[string]int // ONNX operators the graph must hold, with their counts
	inits   map[string][]int
}

// exportCases builds one model per nn module family, small enough that
// exporting them all takes milliseconds.
func exportCases() []exportCase {
	rng := tensor.NewRNG(7)
	f32, f64 := tensor.Float32, tensor.Float64
	normal := func(dt tensor.DType, shape ...int) *tensor.Tensor {
		return nn.Normal(rng, tensor.Zeros(dt, shape...), 0, 1)
	}
	eval := func(m nn.Module) nn.Module { m.SetTraining(false); return m }
	layer := func(l nn.Layer) nn.Layer { l.SetTraining(false); return l }

	bn2 := nn.NewBatchNorm2D(4, f32)
	copy(bn2.RunningMean.Value.Float32s(), []float32{0.1, -0.2, 0.3, 0})
	copy(bn2.RunningVar.Value.Float32s(), []float32{1.5, 0.5, 2, 1})
	bn1 := nn.NewBatchNorm1D(6, f64)
	copy(bn1.RunningMean.Value.Float64s(), []float64{0.5, -1, 0, 0.25, 0, 1})
	copy(bn1.RunningVar.Value.Float64s(), []float64{2, 1, 0.5, 1, 3, 1})

	emb := nn.NewEmbedding(rng, 11, 5, f32)
	embHead := nn.NewLinear(rng, 5, 3, true, f32)
	embModel := nn.NewSequential(embHead) // owns the head; the embedding is added to its state below
	embState := &stateOf{emb: emb, head: embModel}

	lstm := nn.NewLSTM(rng, 3, 4, nn.RNNOptions{Layers: 2, BatchFirst: true})
	gru := nn.NewGRU(rng, 3, 4, nn.RNNOptions{DType: f64, Bidirectional: true})
	rnn := nn.NewRNN(rng, 3, 4, nn.RNNOptions{Bidirectional: true})
	mha := nn.NewMultiheadAttention(rng, 8, 2, f32)
	enc := nn.NewTransformerEncoderLayer(rng, 8, 2, 16, f32)
	lm := nn.NewTransformerLM(rng, nn.TransformerLMOptions{Vocab: 7, Context: 6, Width: 8, Heads: 2, Layers: 1}, f32)
	ops := nn.NewLinear(rng, 3, 4, true, f64)
	tokens := func(b, l int) *tensor.Tensor {
		v := make([]float64, b*l)
		for i := range v {
			v[i] = float64((3*i + 1) % 7)
		}
		return tensor.FromFloat64s(v, b, l).Cast(f32)
	}

	return []exportCase{
		{
			name: "mlp", dynamic: true,
			m:     nn.NewSequential(nn.NewLinear(rng, 4, 8, true, f32), nn.ReLU{}, nn.NewLinear(rng, 8, 3, true, f32), nn.Softmax{Axis: -1}),
			in:    []*tensor.Tensor{normal(f32, 2, 4)},
			ops:   map[string]int{"Gemm": 2, "Relu": 1, "Softmax": 1},
			inits: map[string][]int{"0.weight": {8, 4}, "0.bias": {8}, "2.weight": {3, 8}, "2.bias": {3}},
		},
		{
			name: "activations", dynamic: true,
			m: nn.NewSequential(nn.NewLinear(rng, 5, 6, false, f64), nn.Tanh{}, nn.Sigmoid{}, nn.GELU{}, nn.SiLU{},
				nn.Softplus{}, nn.NewLeakyReLU(0.1), nn.NewELU(0.5), nn.NewLeakyReLU(0.25), nn.NewELU(0.3), nn.Identity{}, nn.LogSoftmax{Axis: 1}),
			in:    []*tensor.Tensor{normal(f64, 3, 5)},
			ops:   map[string]int{"Gemm": 1, "Tanh": 1, "Sigmoid": 2, "Erf": 1, "Softplus": 1, "LeakyRelu": 1, "Elu": 1, "Min": 2, "LogSoftmax": 1},
			inits: map[string][]int{"0.weight": {6, 5}},
		},
		{
			name: "linear3d", dynamic: true,
			m:     nn.NewLinear(rng, 4, 2, true, f32),
			in:    []*tensor.Tensor{normal(f32, 2, 3, 4)},
			ops:   map[string]int{"MatMul": 1, "Transpose": 1, "Add": 1},
			inits: map[string][]int{"weight": {2, 4}, "bias": {2}},
		},
		{
			name: "dropout", dynamic: true,
			m:     eval(nn.NewSequential(nn.NewLinear(rng, 4, 4, true, f32), nn.NewDropout(rng, 0.5), nn.ReLU{})),
			in:    []*tensor.Tensor{normal(f32, 2, 4)},
			ops:   map[string]int{"Gemm": 1, "Relu": 1},
			inits: map[string][]int{"0.weight": {4, 4}},
		},
		{
			name: "conv2d", dynamic: true,
			m: eval(nn.NewSequential(
				nn.NewConv2D(rng, 3, 4, [2]int{3, 3}, nn.Conv2DOptions{Padding: [2]int{1, 1}}),
				bn2, // max pooling before the ReLU, so that its padding must not count as zeros
				nn.NewMaxPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}, Padding: [2]int{1, 1}}), nn.ReLU{},
				nn.NewConv2D(rng, 4, 4, [2]int{3, 2}, nn.Conv2DOptions{Groups: 2, Stride: [2]int{1, 2}, Dilation: [2]int{2, 1}}),
				nn.NewAvgPool2D(tensor.PoolParams{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}}),
				nn.NewFlatten(), nn.NewLinear(rng, 4*3*4, 2, true, f32))),
			in:    []*tensor.Tensor{normal(f32, 2, 3, 10, 10)},
			ops:   map[string]int{"Conv": 2, "MaxPool": 1, "AveragePool": 1, "Gemm": 1},
			inits: map[string][]int{"0.weight": {4, 3, 3, 3}, "1.running_mean": {4}, "1.running_var": {4}, "1.weight": {4}, "4.weight": {4, 2, 3, 2}},
		},
		{
			name: "conv1d", dynamic: true,
			m: eval(nn.NewSequential(nn.NewConv1D(rng, 2, 6, 3, nn.Conv1DOptions{Padding: 1, Stride: 2, DType: f64}), bn1,
				nn.NewGroupNorm(3, 6, 1e-5, true, f64), nn.GELU{})),
			in:    []*tensor.Tensor{normal(f64, 2, 2, 9)},
			ops:   map[string]int{"Conv": 1},
			inits: map[string][]int{"0.weight": {6, 2, 3}, "1.running_var": {6}, "2.weight": {6}},
		},
		{
			name: "convtranspose", dynamic: true,
			m: nn.NewSequential(
				nn.NewConvTranspose2D(rng, 3, 2, [2]int{3, 3}, nn.Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 0}}),
				nn.Upsample{Scale: [2]int{2, 1}}, nn.Upsample{Scale: [2]int{1, 2}, Bilinear: true}),
			in:    []*tensor.Tensor{normal(f32, 2, 3, 4, 3)},
			ops:   map[string]int{"ConvTranspose": 1, "Expand": 1},
			inits: map[string][]int{"0.weight": {3, 2, 3, 3}, "0.bias": {2}},
		},
		{
			name: "norms", dynamic: true,
			m: nn.NewSequential(nn.NewLayerNorm([]int{3, 4}, 1e-5, true, f32), nn.NewRMSNorm([]int{4}, 1e-6, true, f32),
				nn.NewLayerNorm([]int{4}, 1e-5, false, f32)),
			in:    []*tensor.Tensor{normal(f32, 2, 3, 4)},
			ops:   map[string]int{"ReduceMean": 5},
			inits: map[string][]int{"0.weight": {3, 4}, "0.bias": {3, 4}, "1.weight": {4}},
		},
		{
			name: "embedding", dynamic: true,
			m:  embState,
			in: []*tensor.Tensor{tokens(2, 3)},
			opts: ExportOptions{IndexInputs: []int{0}, InputNames: []string{"tokens"}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				s := in[0].Shape()
				return []*graph.Node{embHead.Forward(emb.Forward(g, Indices(in[0]), s...))}
			}},
			ops:   map[string]int{"Gather": 1, "MatMul": 1},
			inits: map[string][]int{"emb.weight": {11, 5}, "head.0.weight": {3, 5}},
		},
		{
			name: "rnn", dynamic: true,
			m:  rnn,
			in: []*tensor.Tensor{normal(f32, 4, 2, 3)},
			opts: ExportOptions{BatchAxes: []int{1}, OutputNames: []string{"out", "h_n"}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				out, h := rnn.Forward(in[0], nil)
				return []*graph.Node{out, h}
			}},
			ops:   map[string]int{"Tanh": 8}, // one per step and direction
			inits: map[string][]int{"weight_ih_l0": {4, 3}, "weight_ih_l0_reverse": {4, 3}},
		},
		{
			name: "lstm", dynamic: true,
			m:  lstm,
			in: []*tensor.Tensor{normal(f32, 2, 3, 3), normal(f32, 2, 2, 4), normal(f32, 2, 2, 4)},
			opts: ExportOptions{BatchAxes: []int{0, 1, 1}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				out, h, c := lstm.Forward(in[0], in[1], in[2])
				return []*graph.Node{out, h, c}
			}},
			ops:   map[string]int{"Sigmoid": 18},
			inits: map[string][]int{"weight_ih_l0": {16, 3}, "weight_hh_l1": {16, 4}, "bias_ih_l1": {16}},
		},
		{
			name: "gru", dynamic: true,
			m:  gru,
			in: []*tensor.Tensor{normal(f64, 3, 2, 3)},
			opts: ExportOptions{BatchAxes: []int{1}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				out, h := gru.Forward(in[0], nil)
				return []*graph.Node{out, h}
			}},
			ops:   map[string]int{"Sigmoid": 12}, // r and z per step and direction
			inits: map[string][]int{"weight_ih_l0": {12, 3}, "bias_hh_l0": {12}, "weight_hh_l0_reverse": {12, 4}},
		},
		{
			name: "attention", dynamic: true,
			m:  mha,
			in: []*tensor.Tensor{normal(f32, 2, 3, 8), normal(f32, 2, 4, 8)},
			opts: ExportOptions{InputNames: []string{"query", "memory"}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{mha.Forward(in[0], in[1], in[1], nil, false)}
			}},
			ops:   map[string]int{"Softmax": 1},
			inits: map[string][]int{"in_proj_weight": {24, 8}, "out_proj.weight": {8, 8}},
		},
		{
			name: "transformer", dynamic: true,
			m:  enc,
			in: []*tensor.Tensor{normal(f32, 2, 4, 8)},
			opts: ExportOptions{Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{enc.Forward(in[0], nil, true)}
			}},
			ops:   map[string]int{"Softmax": 1, "Erf": 1},
			inits: map[string][]int{"self_attn.in_proj_weight": {24, 8}, "linear1.weight": {16, 8}, "norm2.bias": {8}},
		},
		{
			name: "transformer_lm", dynamic: true,
			m:  lm,
			in: []*tensor.Tensor{tokens(2, 5)},
			opts: ExportOptions{IndexInputs: []int{0}, Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{lm.Forward(g, Indices(in[0]), in[0].Shape()[0])}
			}},
			ops:   map[string]int{"Gather": 1, "Softmax": 1},
			inits: map[string][]int{"tok.weight": {7, 8}, "pos.weight": {6, 8}},
		},
		{
			// Not a module family: the graph ops no layer uses, so that
			// every row of the table is checked end to end.
			name: "graph_ops", dynamic: true,
			m:  ops,
			in: []*tensor.Tensor{normal(f64, 3, 3)},
			opts: ExportOptions{Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{graphOps(ops, in[0])}
			}},
			ops: map[string]int{"Pad": 1, "Clip": 1, "ReduceProd": 1, "ReduceLogSumExp": 1, "ReduceSum": 3, "Expand": 1, "Cast": 2},
		},
		{
			name: "static_mlp", dynamic: false,
			m:    layer(nn.NewSequential(nn.NewLinear(rng, 3, 3, true, f64), nn.ReLU{})),
			in:   []*tensor.Tensor{normal(f64, 2, 3)},
			opts: ExportOptions{StaticBatch: true},
			ops:  map[string]int{"Gemm": 1, "Relu": 1},
		},
	}
}

// graphOps applies to lin(x) (B, 4) the graph ops that no layer uses,
// returning (B, 29).
func graphOps(lin *nn.Linear, x *graph.Node) *graph.Node {
	b := x.Shape()[0]
	x = lin.Forward(x)
	a := graph.Abs(x)
	y := graph.Add(graph.Sin(x), graph.Cos(a))
	y = graph.Add(y, graph.Log1p(a))
	y = graph.Add(y, graph.Expm1(graph.Clamp(x, -1, 0.5)))
	y = graph.Add(y, graph.Maximum(x, graph.Square(x)))
	y = graph.Sub(y, graph.Minimum(graph.Sign(x), graph.PowScalar(a, 1.5)))
	y = graph.Add(y, graph.Pow(graph.AddScalar(a, 1), graph.Log(graph.AddScalar(a, 2))))
	y = graph.StopGradient(graph.Cast(graph.Cast(y, tensor.Float32), tensor.Float64))
	p := graph.Pad(y, [][2]int{{0, 0}, {1, 2}}, 0.5) // (B, 7)
	s := graph.Slice(p, 1, -1, math.MinInt, -2)      // columns 6, 4, 2, 0
	r := graph.Concat(1, graph.Sum(s, []int{1}, true), graph.Max(s, []int{1}, true), graph.Min(s, []int{1}, true),
		graph.Prod(s, []int{1}, true), graph.LogSumExp(s, []int{1}, true), graph.Variance(s, []int{1}, true, 1))
	u := graph.Reshape(s, b, 2, 2)
	mm := graph.Reshape(graph.MatMulT(u, graph.Exp(u), true, false), b, 4)
	st := graph.Reshape(graph.SumTo(graph.BroadcastTo(graph.Reshape(x, b, 1, 4), b, 3, 4), b, 1, 4), b, 4)
	return graph.Concat(1, p, s, r, mm, st, graph.Neg(graph.Div(x, graph.AddScalar(a, 1))))
}

// stateOf is a module made of an embedding and a head, for the embedding
// case: nn has no composite that takes token ids.
type stateOf struct {
	emb  *nn.Embedding
	head *nn.Sequential
}

func (s *stateOf) Params() []nn.NamedParam {
	return append(nn.Prefix("emb", s.emb.Params()), nn.Prefix("head", s.head.Params())...)
}

func (s *stateOf) SetTraining(t bool) { s.head.SetTraining(t) }

// forwardOf returns the function Export traces for c.
func (c *exportCase) forwardOf() func(*graph.Graph, []*graph.Node) []*graph.Node {
	return checkExport("test", c.m, c.in, &c.opts)
}

// outputs runs c's model on inputs in and returns copies of its outputs.
func (c *exportCase) outputs(in []*tensor.Tensor) []*tensor.Tensor {
	isIndex := make([]bool, len(in))
	for _, i := range c.opts.IndexInputs {
		isIndex[i] = true
	}
	tr, err := traceForward(c.forwardOf(), in, isIndex)
	if err != nil {
		panic(err)
	}
	out := make([]*tensor.Tensor, len(tr.outs))
	for i, o := range tr.outs {
		out[i] = o.Value().Clone()
	}
	return out
}
