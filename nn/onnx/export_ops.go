package onnx

import (
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// exportRule writes the ONNX nodes computing graph node n from the ONNX
// values in (one per input of n) and returns the value holding n's.
type exportRule func(e *exporter, n *graph.Node, in []string) (string, error)

// exportTable maps every graph op that Export can write to its rule: the
// one place that says which ONNX operators (opset 17) stand for which
// graph op. Elementwise ops broadcast as NumPy does in both.
var exportTable = map[string]exportRule{
	"add": exOp("Add"), "sub": exOp("Sub"), "mul": exOp("Mul"), "div": exOp("Div"), "pow": exOp("Pow"),
	"maximum": exOp("Max"), "minimum": exOp("Min"),
	"neg": exOp("Neg"), "exp": exOp("Exp"), "log": exOp("Log"), "sqrt": exOp("Sqrt"), "abs": exOp("Abs"),
	"sign": exOp("Sign"), "sin": exOp("Sin"), "cos": exOp("Cos"), "erf": exOp("Erf"),
	"tanh": exOp("Tanh"), "sigmoid": exOp("Sigmoid"), "relu": exOp("Relu"), "reciprocal": exOp("Reciprocal"),
	"softplus": exOp("Softplus"), "stop_gradient": exOp("Identity"),
	"square": exSquare, "gelu": exGelu, "log1p": exLog1p, "expm1": exExpm1,
	"add_scalar": exScalar("Add", "scalar"), "mul_scalar": exScalar("Mul", "scalar"), "pow_scalar": exScalar("Pow", "exponent"),
	"leaky_relu": exLeakyRelu, "elu": exElu, "clamp": exClamp,
	"softmax": exSoftmax("Softmax"), "log_softmax": exSoftmax("LogSoftmax"),
	"linear": exLinear, "matmul": exMatMul, "attention": exAttention,
	"reshape": exReshape, "permute": exPermute, "broadcast_to": exExpand, "sum_to": exSumTo,
	"slice": exSlice, "concat": exConcat, "pad": exPad, "index_select": exGather,
	"sum": exReduce("ReduceSum"), "mean": exReduce("ReduceMean"), "max": exReduce("ReduceMax"),
	"min": exReduce("ReduceMin"), "prod": exReduce("ReduceProd"), "logsumexp": exReduce("ReduceLogSumExp"),
	"variance":       exVariance,
	"channel_affine": exChannelAffine, "channel_scale": exChannelAffine, "channel_moments": exChannelMoments,
	"conv2d": exConv, "conv2d_input_grad": exConvTranspose,
	"maxpool2d": exPool("MaxPool"), "avgpool2d": exPool("AveragePool"),
	"cast": exCast, "lstm_cell": exLSTMCell, "gru_cell": exGRUCell,
}

// node appends an ONNX node computing part of graph node n (nil for an
// input) and returns its output's name, made from n's op and id.
func (e *exporter) node(n *graph.Node, op string, in []string, attrs ...*pb.AttributeProto) string {
	base := "leaf"
	if n.Op() != nil {
		base = n.Op().Name()
	}
	out := fmt.Sprintf("%s_%d", base, n.ID())
	if e.tmp > 0 {
		out = fmt.Sprintf("%s_%d_%d", base, n.ID(), e.tmp)
	}
	e.tmp++
	e.nodes = append(e.nodes, &pb.NodeProto{Name: proto.String(out), OpType: proto.String(op), Input: in, Output: []string{out}, Attribute: attrs})
	return out
}

// ints returns a Constant holding int64s v, one per distinct v.
func (e *exporter) ints(v ...int64) string {
	key := fmt.Sprint("i", v)
	if name, ok := e.consts[key]; ok {
		return name
	}
	name := fmt.Sprintf("const_aux_%d", len(e.consts))
	e.consts[key] = name
	return e.constant(name, exInt64Tensor("", v, len(v)))
}

// scalar returns a 0-d Constant of dtype dt holding v.
func (e *exporter) scalar(dt tensor.DType, v float64) string {
	key := fmt.Sprint("f", dt, math.Float64bits(v))
	if name, ok := e.consts[key]; ok {
		return name
	}
	name := fmt.Sprintf("const_aux_%d", len(e.consts))
	e.consts[key] = name
	return e.constant(name, exTensor("", tensor.FromValues(dt, []float64{v})))
}

// shape returns shape as an int64 initializer for Reshape, with -1 in
// the one dimension that follows the batch (dyn); more than one such
// dimension needs a fixed batch.
func (e *exporter) shape(shape []int, dyn []bool) (string, error) {
	v := exDims(shape)
	free := false
	for i, d := range dyn {
		if d {
			if free {
				return "", errNeedStatic
			}
			v[i], free = -1, true
		}
	}
	return e.ints(v...), nil
}

func exOp(op string) exportRule {
	return func(e *exporter, n *graph.Node, in []string) (string, error) { return e.node(n, op, in), nil }
}

func exSquare(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Mul", []string{in[0], in[0]}), nil
}

// exGelu writes the exact form x·Φ(x) = x/2·(1 + erf(x/√2)).
func exGelu(e *exporter, n *graph.Node, in []string) (string, error) {
	dt := n.DType()
	erf := e.node(n, "Erf", []string{e.node(n, "Mul", []string{in[0], e.scalar(dt, 1/math.Sqrt2)})})
	half := e.node(n, "Mul", []string{in[0], e.scalar(dt, 0.5)})
	return e.node(n, "Mul", []string{half, e.node(n, "Add", []string{erf, e.scalar(dt, 1)})}), nil
}

func exLog1p(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Log", []string{e.node(n, "Add", []string{in[0], e.scalar(n.DType(), 1)})}), nil
}

func exExpm1(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Sub", []string{e.node(n, "Exp", in), e.scalar(n.DType(), 1)}), nil
}

// exScalar writes x op c for the op's scalar attribute key.
func exScalar(op, key string) exportRule {
	return func(e *exporter, n *graph.Node, in []string) (string, error) {
		c := graph.OpAttrs(n.Op())[key].(float64)
		return e.node(n, op, []string{in[0], e.scalar(n.DType(), c)}), nil
	}
}

// exFloatAttr reports whether v survives ONNX's float32 attributes, so
// that LeakyRelu's and Elu's alpha may carry it; other slopes are
// written with a constant of the model's dtype instead.
func exFloatAttr(v float64) bool { return float64(float32(v)) == v }

// exLeakyRelu writes LeakyRelu, or max(x, 0) + slope·min(x, 0).
func exLeakyRelu(e *exporter, n *graph.Node, in []string) (string, error) {
	slope := graph.OpAttrs(n.Op())["slope"].(float64)
	if exFloatAttr(slope) {
		return e.node(n, "LeakyRelu", in, exAttr("alpha", slope)), nil
	}
	dt := n.DType()
	neg := e.node(n, "Mul", []string{e.node(n, "Min", []string{in[0], e.scalar(dt, 0)}), e.scalar(dt, slope)})
	return e.node(n, "Add", []string{e.node(n, "Relu", in), neg}), nil
}

// exElu writes Elu, or max(x, 0) + alpha·(exp(min(x, 0)) − 1).
func exElu(e *exporter, n *graph.Node, in []string) (string, error) {
	alpha := graph.OpAttrs(n.Op())["alpha"].(float64)
	if exFloatAttr(alpha) {
		return e.node(n, "Elu", in, exAttr("alpha", alpha)), nil
	}
	dt := n.DType()
	em1 := e.node(n, "Sub", []string{e.node(n, "Exp", []string{e.node(n, "Min", []string{in[0], e.scalar(dt, 0)})}), e.scalar(dt, 1)})
	return e.node(n, "Add", []string{e.node(n, "Relu", in), e.node(n, "Mul", []string{em1, e.scalar(dt, alpha)})}), nil
}

func exClamp(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	dt := n.DType()
	return e.node(n, "Clip", []string{in[0], e.scalar(dt, a["lo"].(float64)), e.scalar(dt, a["hi"].(float64))}), nil
}

func exSoftmax(op string) exportRule {
	return func(e *exporter, n *graph.Node, in []string) (string, error) {
		return e.node(n, op, in, exAttr("axis", graph.OpAttrs(n.Op())["axis"].(int))), nil
	}
}

// exLinear writes x·wᵀ + b: one Gemm for a matrix x, else a MatMul with
// the transposed weight.
func exLinear(e *exporter, n *graph.Node, in []string) (string, error) {
	if n.Inputs()[0].Dim() == 2 {
		return e.node(n, "Gemm", in, exAttr("transB", 1)), nil
	}
	wt := e.node(n, "Transpose", []string{in[1]}, exAttr("perm", []int{1, 0}))
	return e.node(n, "Add", []string{e.node(n, "MatMul", []string{in[0], wt}), in[2]}), nil
}

// exMatMul writes a product of matrices as one Gemm, which transposes
// its operands itself, and batched products as MatMul after Transposes.
func exMatMul(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	if n.Inputs()[0].Dim() == 2 && n.Inputs()[1].Dim() == 2 {
		return e.node(n, "Gemm", in, exAttr("transA", exBool(a["trans_a"].(bool))), exAttr("transB", exBool(a["trans_b"].(bool)))), nil
	}
	args := slices.Clone(in)
	for i, key := range []string{"trans_a", "trans_b"} {
		if !a[key].(bool) {
			continue
		}
		r := n.Inputs()[i].Dim()
		if r < 2 {
			return "", fmt.Errorf("transposed operand %d has %d axes", i, r)
		}
		perm := make([]int, r)
		for k := range perm {
			perm[k] = k
		}
		perm[r-2], perm[r-1] = r-1, r-2
		args[i] = e.node(n, "Transpose", []string{in[i]}, exAttr("perm", perm))
	}
	return e.node(n, "MatMul", args), nil
}

// exAttention writes the fused attention as the composite it computes:
// S = scale·q·kᵀ (+ the causal −Inf above the diagonal) (+ the mask),
// softmax(S)·v, and the log-sum-exp column of the packed output
// (ReduceLogSumExp of S), joined by Concat as graph's op packs them; the
// Slice that follows reads the output columns.
func exAttention(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	q, k := n.Inputs()[0], n.Inputs()[1]
	dt, r := n.DType(), k.Dim()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[r-2], perm[r-1] = r-1, r-2
	kt := e.node(n, "Transpose", []string{in[1]}, exAttr("perm", perm))
	s := e.node(n, "Mul", []string{e.node(n, "MatMul", []string{in[0], kt}), e.scalar(dt, a["scale"].(float64))})
	if a["causal"].(bool) {
		l := q.Shape()[q.Dim()-2]
		c := make([]float64, l*l)
		for i := range l {
			for j := i + 1; j < l; j++ {
				c[i*l+j] = math.Inf(-1)
			}
		}
		name := e.node(n, "Constant", nil, exAttr("value", exTensor("", tensor.FromValues(dt, c, l, l))))
		s = e.node(n, "Add", []string{s, name})
	}
	if len(in) > 3 {
		s = e.node(n, "Add", []string{s, in[3]})
	}
	out := e.node(n, "MatMul", []string{e.node(n, "Softmax", []string{s}, exAttr("axis", -1)), in[2]})
	lse := e.node(n, "ReduceLogSumExp", []string{s}, exAttr("axes", []int{-1}), exAttr("keepdims", 1))
	return e.node(n, "Concat", []string{out, lse}, exAttr("axis", -1)), nil
}

func exBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

func exReshape(e *exporter, n *graph.Node, in []string) (string, error) {
	s, err := e.shape(n.Shape(), e.dynOf(n))
	if err != nil {
		return "", err
	}
	return e.node(n, "Reshape", []string{in[0], s}), nil
}

func exPermute(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Transpose", in, exAttr("perm", graph.OpAttrs(n.Op())["perm"].([]int))), nil
}

// exExpand writes broadcast_to as Expand, whose target broadcasts with
// the input both ways, so a dimension that follows the batch in both is
// written as 1.
func exExpand(e *exporter, n *graph.Node, in []string) (string, error) {
	out, x := n.Shape(), n.Inputs()[0]
	v := exDims(out)
	dyn, xdyn := e.dynOf(n), e.dynOf(x)
	lead := len(out) - x.Dim()
	for k, d := range dyn {
		if !d {
			continue
		}
		if k < lead || xdyn == nil || !xdyn[k-lead] {
			return "", errNeedStatic
		}
		v[k] = 1
	}
	return e.node(n, "Expand", []string{in[0], e.ints(v...)}), nil
}

// exSumTo sums over the axes broadcasting added (leading ones and those
// of size 1 in the target) and reshapes to the target.
func exSumTo(e *exporter, n *graph.Node, in []string) (string, error) {
	s, t := n.Inputs()[0].Shape(), n.Shape()
	lead := len(s) - len(t)
	var axes []int64
	for k := range s {
		if k < lead || (t[k-lead] == 1 && s[k] != 1) {
			axes = append(axes, int64(k))
		}
	}
	y := in[0]
	if len(axes) > 0 {
		y = e.node(n, "ReduceSum", []string{y, e.ints(axes...)}, exAttr("keepdims", 1))
	}
	shape, err := e.shape(t, e.dynOf(n))
	if err != nil {
		return "", err
	}
	return e.node(n, "Reshape", []string{y, shape}), nil
}

func exSlice(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	return e.node(n, "Slice", []string{in[0], e.ints(int64(a["start"].(int))), e.ints(int64(a["stop"].(int))),
		e.ints(int64(a["axis"].(int))), e.ints(int64(a["step"].(int)))}), nil
}

func exConcat(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Concat", in, exAttr("axis", graph.OpAttrs(n.Op())["axis"].(int))), nil
}

func exPad(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	pads := a["pads"].([][2]int)
	v := make([]int64, 2*len(pads))
	for i, p := range pads {
		v[i], v[len(pads)+i] = int64(p[0]), int64(p[1])
	}
	return e.node(n, "Pad", []string{in[0], e.ints(v...), e.scalar(n.DType(), a["value"].(float64))}), nil
}

// exGather writes a lookup as Gather: of an index input when the indices
// are exactly that input's values (an Embedding reading token ids), else
// of the indices as a constant.
func exGather(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	idx, axis := a["indices"].([]int), a["axis"].(int)
	for i := range e.index {
		x := &e.index[i]
		if !slices.Equal(x.values, idx) {
			continue
		}
		if x.flat == "" {
			x.flat = e.node(n, "Reshape", []string{x.name, e.ints(-1)})
		}
		return e.node(n, "Gather", []string{in[0], x.flat}, exAttr("axis", axis)), nil
	}
	if d := e.dynOf(n); d != nil && d[axis] {
		return "", errNeedStatic
	}
	v := make([]int64, len(idx))
	for i, k := range idx {
		v[i] = int64(k)
	}
	return e.node(n, "Gather", []string{in[0], e.ints(v...)}, exAttr("axis", axis)), nil
}

// exReduce writes a reduction; opset 17 takes ReduceSum's axes as an
// input and the others' as an attribute.
func exReduce(op string) exportRule {
	return func(e *exporter, n *graph.Node, in []string) (string, error) {
		a := graph.OpAttrs(n.Op())
		axes, keep := a["axes"].([]int), 0
		if a["keepdims"].(bool) {
			keep = 1
		}
		if len(axes) == 0 {
			return e.node(n, "Identity", in), nil
		}
		if op == "ReduceSum" {
			return e.node(n, op, []string{in[0], e.ints(exDims(axes)...)}, exAttr("keepdims", keep)), nil
		}
		return e.node(n, op, in, exAttr("axes", axes), exAttr("keepdims", keep)), nil
	}
}

// exVariance writes Σ(x − mean)²/(count − ddof).
func exVariance(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	axes, keep := a["axes"].([]int), 0
	if a["keepdims"].(bool) {
		keep = 1
	}
	x := n.Inputs()[0]
	count := 1
	for _, k := range axes {
		count *= x.Shape()[k]
	}
	d := e.node(n, "Sub", []string{in[0], e.node(n, "ReduceMean", in, exAttr("axes", axes), exAttr("keepdims", 1))})
	ss := e.node(n, "ReduceSum", []string{e.node(n, "Mul", []string{d, d}), e.ints(exDims(axes)...)}, exAttr("keepdims", keep))
	return e.node(n, "Div", []string{ss, e.scalar(n.DType(), float64(count-a["ddof"].(int)))}), nil
}

// exChannelAffine writes x·s + b (b absent for channel_scale) with s and
// b, shaped (C), broadcast along axis 1 of x (N, C, ...).
func exChannelAffine(e *exporter, n *graph.Node, in []string) (string, error) {
	r := n.Dim()
	perChannel := func(v string) string {
		if r <= 2 {
			return v
		}
		shape := make([]int64, r-1)
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = -1
		return e.node(n, "Reshape", []string{v, e.ints(shape...)})
	}
	y := e.node(n, "Mul", []string{in[0], perChannel(in[1])})
	if len(in) == 3 {
		y = e.node(n, "Add", []string{y, perChannel(in[2])})
	}
	return y, nil
}

// exChannelMoments writes the per-channel mean and biased variance of x
// (N, C, ...) over every axis but 1, stacked as (2, C).
func exChannelMoments(e *exporter, n *graph.Node, in []string) (string, error) {
	r := n.Inputs()[0].Dim()
	axes := []int{0}
	for k := 2; k < r; k++ {
		axes = append(axes, k)
	}
	mean := e.node(n, "ReduceMean", in, exAttr("axes", axes), exAttr("keepdims", 1))
	d := e.node(n, "Sub", []string{in[0], mean})
	v := e.node(n, "ReduceMean", []string{e.node(n, "Mul", []string{d, d})}, exAttr("axes", axes), exAttr("keepdims", 1))
	row := e.ints(1, -1)
	return e.node(n, "Concat", []string{e.node(n, "Reshape", []string{mean, row}), e.node(n, "Reshape", []string{v, row})}, exAttr("axis", 0)), nil
}

// exConvAttrs returns the attributes Conv and ConvTranspose share.
func exConvAttrs(p tensor.ConvParams, w []int) []*pb.AttributeProto {
	one := func(v int) int {
		if v == 0 {
			return 1
		}
		return v
	}
	return []*pb.AttributeProto{
		exAttr("kernel_shape", []int{w[2], w[3]}),
		exAttr("strides", []int{one(p.Stride[0]), one(p.Stride[1])}),
		exAttr("pads", []int{p.Padding[0], p.Padding[1], p.Padding[0], p.Padding[1]}),
		exAttr("dilations", []int{one(p.Dilation[0]), one(p.Dilation[1])}),
		exAttr("group", one(p.Groups)),
	}
}

func exConv(e *exporter, n *graph.Node, in []string) (string, error) {
	p := graph.OpAttrs(n.Op())["conv"].(tensor.ConvParams)
	return e.node(n, "Conv", in, exConvAttrs(p, n.Inputs()[1].Shape())...), nil
}

// exConvTranspose writes the input gradient of a convolution, a
// transposed convolution whose weight (O, C/groups, kh, kw) is already in
// ConvTranspose's layout; output_padding makes up the rows a strided
// convolution dropped.
func exConvTranspose(e *exporter, n *graph.Node, in []string) (string, error) {
	a := graph.OpAttrs(n.Op())
	p, xs := a["conv"].(tensor.ConvParams), a["input_shape"].([]int)
	ws, ys := n.Inputs()[1].Shape(), n.Inputs()[0].Shape()
	attrs := exConvAttrs(p, ws)
	one := func(v int) int {
		if v == 0 {
			return 1
		}
		return v
	}
	var extra [2]int
	for k := range 2 {
		s, d := one(p.Stride[k]), one(p.Dilation[k])
		full := s*(ys[2+k]-1) + (ws[2+k]-1)*d + 1 - 2*p.Padding[k]
		extra[k] = xs[2+k] - full
	}
	if extra != [2]int{} {
		attrs = append(attrs, exAttr("output_padding", extra[:]))
	}
	return e.node(n, "ConvTranspose", in, attrs...), nil
}

// exPool writes max or average pooling; Gradus's average counts padding
// as zeros (count_include_pad), and max pooling ignores it, as ONNX's.
func exPool(op string) exportRule {
	return func(e *exporter, n *graph.Node, in []string) (string, error) {
		p := graph.OpAttrs(n.Op())["pool"].(tensor.PoolParams)
		stride := p.Stride
		for k, v := range stride {
			if v == 0 {
				stride[k] = p.Kernel[k]
			}
		}
		attrs := []*pb.AttributeProto{
			exAttr("kernel_shape", p.Kernel[:]),
			exAttr("strides", stride[:]),
			exAttr("pads", []int{p.Padding[0], p.Padding[1], p.Padding[0], p.Padding[1]}),
		}
		if op == "AveragePool" {
			attrs = append(attrs, exAttr("count_include_pad", 1))
		}
		return e.node(n, op, in, attrs...), nil
	}
}

func exCast(e *exporter, n *graph.Node, in []string) (string, error) {
	return e.node(n, "Cast", in, exAttr("to", int64(exElemType(n.DType())))), nil
}

// exGates writes the k slices of width h along the last axis of x.
func (e *exporter) exGates(n *graph.Node, x string, k, h int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = e.node(n, "Slice", []string{x, e.ints(int64(i * h)), e.ints(int64((i + 1) * h)), e.ints(-1), e.ints(1)})
	}
	return out
}

// exLSTMCell writes graph.LSTMCell's arithmetic (the gates split from
// xp + hp, c' = f·c + i·g, h' = o·tanh c') and its packed output
// [h' | c'].
func exLSTMCell(e *exporter, n *graph.Node, in []string) (string, error) {
	c := n.Inputs()[2]
	a := e.exGates(n, e.node(n, "Add", in[:2]), 4, c.Shape()[c.Dim()-1])
	i, f := e.node(n, "Sigmoid", a[:1]), e.node(n, "Sigmoid", a[1:2])
	g, o := e.node(n, "Tanh", a[2:3]), e.node(n, "Sigmoid", a[3:4])
	c2 := e.node(n, "Add", []string{e.node(n, "Mul", []string{f, in[2]}), e.node(n, "Mul", []string{i, g})})
	h2 := e.node(n, "Mul", []string{o, e.node(n, "Tanh", []string{c2})})
	return e.node(n, "Concat", []string{h2, c2}, exAttr("axis", -1)), nil
}

// exGRUCell writes graph.GRUCell's arithmetic: r, z = σ(xp + hp) on their
// gates, n = tanh(xp_n + r·hp_n), h' = n + z·(h − n).
func exGRUCell(e *exporter, n *graph.Node, in []string) (string, error) {
	h := n.Inputs()[2]
	w := h.Shape()[h.Dim()-1]
	x, p := e.exGates(n, in[0], 3, w), e.exGates(n, in[1], 3, w)
	r := e.node(n, "Sigmoid", []string{e.node(n, "Add", []string{x[0], p[0]})})
	z := e.node(n, "Sigmoid", []string{e.node(n, "Add", []string{x[1], p[1]})})
	nn := e.node(n, "Tanh", []string{e.node(n, "Add", []string{x[2], e.node(n, "Mul", []string{r, p[2]})})})
	d := e.node(n, "Mul", []string{z, e.node(n, "Sub", []string{in[2], nn})})
	return e.node(n, "Add", []string{nn, d}), nil
}
