package onnx

import (
	"fmt"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// runGemm maps Gemm: α·op(A)·op(B) + β·C.
func runGemm(c *call, n *node, in []value) []value {
	y := graph.MatMulT(c.node(in[0]), c.node(in[1]), n.int("transA", 0) != 0, n.int("transB", 0) != 0)
	if a := n.float("alpha", 1); a != 1 {
		y = graph.MulScalar(y, a)
	}
	if len(in) > 2 && (in[2].n != nil || in[2].h != nil) {
		b := c.node(in[2])
		if beta := n.float("beta", 1); beta != 1 {
			b = graph.MulScalar(b, beta)
		}
		y = graph.Add(y, b)
	}
	return []value{{n: y}}
}

// runMatMul maps MatMul (NumPy's matmul, which graph.MatMul is).
func runMatMul(c *call, n *node, in []value) []value {
	return []value{{n: graph.MatMul(c.node(in[0]), c.node(in[1]))}}
}

// spatial holds a convolution's or pooling's per-axis settings, read from
// the ONNX attributes for 1 or 2 spatial axes.
type spatial struct {
	kernel, stride, dilation []int
	padBegin, padEnd         []int
}

// spatialAttrs reads kernel_shape (or the weight's sizes), strides,
// dilations, pads and auto_pad for an input of spatial size in.
func spatialAttrs(n *node, in, kernel []int) spatial {
	k := len(in)
	sp := spatial{kernel: kernel, stride: n.ints("strides"), dilation: n.ints("dilations")}
	if ks := n.ints("kernel_shape"); ks != nil {
		sp.kernel = ks
	}
	if sp.stride == nil {
		sp.stride = slices.Repeat([]int{1}, k)
	}
	if sp.dilation == nil {
		sp.dilation = slices.Repeat([]int{1}, k)
	}
	pads := n.ints("pads")
	if pads == nil {
		pads = make([]int, 2*k)
	}
	if len(sp.kernel) != k || len(sp.stride) != k || len(sp.dilation) != k || len(pads) != 2*k {
		fail("kernel %v, strides %v, dilations %v and pads %v do not fit %d spatial axes", sp.kernel, sp.stride, sp.dilation, pads, k)
	}
	sp.padBegin, sp.padEnd = pads[:k], pads[k:]
	switch ap := n.str("auto_pad", "NOTSET"); ap {
	case "VALID":
		sp.padBegin, sp.padEnd = make([]int, k), make([]int, k)
	case "SAME_UPPER", "SAME_LOWER":
		sp.padBegin, sp.padEnd = make([]int, k), make([]int, k)
		for i := range k {
			out := (in[i] + sp.stride[i] - 1) / sp.stride[i]
			total := max((out-1)*sp.stride[i]+(sp.kernel[i]-1)*sp.dilation[i]+1-in[i], 0)
			small := total / 2
			if ap == "SAME_UPPER" {
				sp.padBegin[i], sp.padEnd[i] = small, total-small
			} else {
				sp.padBegin[i], sp.padEnd[i] = total-small, small
			}
		}
	}
	return sp
}

// symmetric reports whether the padding is the same at both ends of
// every axis.
func (sp spatial) symmetric() bool { return slices.Equal(sp.padBegin, sp.padEnd) }

// pair widens a 1-D setting to the 2-D kernels' (1, v).
func pair(v []int, fill int) [2]int {
	if len(v) == 1 {
		return [2]int{fill, v[0]}
	}
	return [2]int{v[0], v[1]}
}

// to2D views a 1-D signal (N, C, L) as an image (N, C, 1, L).
func to2D(x *graph.Node) *graph.Node {
	if x.Dim() == 3 {
		s := x.Shape()
		return graph.Reshape(x, s[0], s[1], 1, s[2])
	}
	if x.Dim() != 4 {
		fail("input %s: want (N, C, L) or (N, C, H, W)", shapeOf(x.Shape()))
	}
	return x
}

// from2D undoes to2D for a 1-D input.
func from2D(y *graph.Node, rank int) *graph.Node {
	if rank == 3 {
		s := y.Shape()
		return graph.Reshape(y, s[0], s[1], s[3])
	}
	return y
}

// padInput pads x's spatial axes asymmetrically (an explicit Pad before
// a convolution with padding 0).
func padInput(x *graph.Node, sp spatial, value float64) *graph.Node {
	pads := make([][2]int, x.Dim())
	off := x.Dim() - len(sp.padBegin)
	for i := range sp.padBegin {
		pads[off+i] = [2]int{sp.padBegin[i], sp.padEnd[i]}
	}
	return graph.Pad(x, pads, value)
}

// runConv maps Conv (1-D and 2-D) onto graph.Conv2D, with a Pad first
// when the padding is asymmetric, and the bias added per channel.
func runConv(c *call, n *node, in []value) []value {
	x, w := c.node(in[0]), c.node(in[1])
	rank := x.Dim()
	if rank != w.Dim() || rank < 3 || rank > 4 {
		fail("input %s and weight %s: want 1-D or 2-D convolution", shapeOf(x.Shape()), shapeOf(w.Shape()))
	}
	sp := spatialAttrs(n, x.Shape()[2:], w.Shape()[2:])
	if !slices.Equal(sp.kernel, w.Shape()[2:]) {
		fail("kernel_shape %v differs from the weight %s", sp.kernel, shapeOf(w.Shape()))
	}
	x, w = to2D(x), to2D(w)
	p := tensor.ConvParams{Stride: pair(sp.stride, 1), Dilation: pair(sp.dilation, 1), Groups: n.int("group", 1)}
	if sp.symmetric() {
		p.Padding = pair(sp.padBegin, 0)
	} else {
		if rank == 3 {
			sp.padBegin, sp.padEnd = []int{0, sp.padBegin[0]}, []int{0, sp.padEnd[0]}
		}
		x = padInput(x, sp, 0)
	}
	y := graph.Conv2D(x, w, p)
	if len(in) > 2 && in[2].n != nil {
		y = graph.Add(y, graph.Reshape(in[2].n, 1, -1, 1, 1))
	}
	return []value{{n: from2D(y, rank)}}
}

// checkConvTranspose refuses what runConvTranspose does not map.
func checkConvTranspose(n *node) error {
	if n.has("output_shape") {
		return fmt.Errorf("attribute output_shape is not imported (give pads and output_padding)")
	}
	if err := n.wantStr("auto_pad", "NOTSET", "VALID"); err != nil {
		return err
	}
	if p := n.ints("pads"); len(p)%2 == 0 && !slices.Equal(p[:len(p)/2], p[len(p)/2:]) {
		return fmt.Errorf("asymmetric pads %v are not imported", p)
	}
	return nil
}

// runConvTranspose maps ConvTranspose (1-D and 2-D) onto the input
// gradient of the convolution it is the adjoint of, as
// nn.ConvTranspose2D does.
func runConvTranspose(c *call, n *node, in []value) []value {
	x, w := c.node(in[0]), c.node(in[1])
	rank := x.Dim()
	if rank != w.Dim() || rank < 3 || rank > 4 {
		fail("input %s and weight %s: want 1-D or 2-D transposed convolution", shapeOf(x.Shape()), shapeOf(w.Shape()))
	}
	sp := spatialAttrs(n, x.Shape()[2:], w.Shape()[2:])
	op := n.ints("output_padding")
	if op == nil {
		op = make([]int, rank-2)
	}
	groups := n.int("group", 1)
	out := []int{x.Shape()[0], w.Shape()[1] * groups}
	for i, h := range x.Shape()[2:] {
		out = append(out, (h-1)*sp.stride[i]-2*sp.padBegin[i]+sp.dilation[i]*(sp.kernel[i]-1)+op[i]+1)
	}
	if rank == 3 {
		out = []int{out[0], out[1], 1, out[2]}
	}
	p := tensor.ConvParams{Stride: pair(sp.stride, 1), Dilation: pair(sp.dilation, 1), Padding: pair(sp.padBegin, 0), Groups: groups}
	y := graph.Conv2DInputGrad(to2D(x), to2D(w), out, p)
	if len(in) > 2 && in[2].n != nil {
		y = graph.Add(y, graph.Reshape(in[2].n, 1, -1, 1, 1))
	}
	return []value{{n: from2D(y, rank)}}
}

// checkPool refuses pooling settings the kernels do not have.
func checkPool(n *node) error {
	if d := n.ints("dilations"); slices.ContainsFunc(d, func(v int) bool { return v != 1 }) {
		return fmt.Errorf("dilations %v are not imported (only 1)", d)
	}
	if len(n.out) > 1 && n.out[1] != "" {
		return fmt.Errorf("the Indices output is not imported")
	}
	return firstErr(n.want("ceil_mode", 0), n.want("storage_order", 0))
}

// runPool maps MaxPool and AveragePool (1-D and 2-D). Average pooling
// excludes the padding from the count unless count_include_pad is set,
// as ONNX's default is the opposite of the kernel's.
func runPool(c *call, n *node, in []value) []value {
	x := c.node(in[0])
	rank := x.Dim()
	sp := spatialAttrs(n, x.Shape()[2:], nil)
	if !sp.symmetric() {
		fail("asymmetric pads %v %v are not imported", sp.padBegin, sp.padEnd)
	}
	p := tensor.PoolParams{Kernel: pair(sp.kernel, 1), Stride: pair(sp.stride, 1), Padding: pair(sp.padBegin, 0)}
	x = to2D(x)
	var y *graph.Node
	if n.op == "MaxPool" {
		y = graph.MaxPool2D(x, p)
	} else {
		y = graph.AvgPool2D(x, p)
		if n.int("count_include_pad", 0) == 0 && slices.ContainsFunc(sp.padBegin, func(v int) bool { return v > 0 }) {
			s := x.Shape()
			ones := tensor.Ones(x.DType(), 1, 1, s[2], s[3])
			y = graph.Div(y, c.g.Const(tensor.AvgPool2D(ones, p)))
		}
	}
	return []value{{n: from2D(y, rank)}}
}

// runGlobalPool maps GlobalAveragePool and GlobalMaxPool: a mean or
// maximum over the spatial axes, kept with size 1.
func runGlobalPool(c *call, n *node, in []value) []value {
	x := c.node(in[0])
	var axes []int
	for i := 2; i < x.Dim(); i++ {
		axes = append(axes, i)
	}
	if n.op == "GlobalMaxPool" {
		return []value{{n: graph.Max(x, axes, true)}}
	}
	return []value{{n: graph.Mean(x, axes, true)}}
}

// checkBatchNorm refuses training mode and the training outputs.
func checkBatchNorm(n *node) error {
	if len(n.out) > 1 {
		return fmt.Errorf("the running-statistics outputs of training mode are not imported")
	}
	return n.want("training_mode", 0)
}

// runBatchNorm maps BatchNormalization: x·s + (B − mean·s) per channel
// with s = scale/√(var + ε), one ChannelAffine. In evaluation mode mean and
// var are the running statistics, constants; in training mode they are the
// batch's (ChannelMoments, differentiated through), and the running
// statistics move towards them as PyTorch moves them: with the file's
// momentum m (PyTorch's 1 − momentum), running ← m·running + (1 − m)·batch,
// the unbiased variance for the running one.
func runBatchNorm(c *call, n *node, in []value) []value {
	x, scale, bias := c.node(in[0]), c.node(in[1]), c.node(in[2])
	var mean, vr *graph.Node
	if c.m.training {
		count := x.Size() / x.Shape()[1]
		if count <= 1 {
			fail("input %s has one value per channel; training needs more", shapeOf(x.Shape()))
		}
		mean, vr = graph.ChannelMoments(x)
		if rm, rv := c.m.floats[n.in[3]], c.m.floats[n.in[4]]; rm != nil && rv != nil {
			m := n.float("momentum", 0.9)
			unbiased := tensor.MulScalar(vr.Value(), float64(count)/float64(count-1))
			tensor.CopyInto(rm.Value, tensor.Add(tensor.MulScalar(rm.Value, m), tensor.MulScalar(mean.Value().Cast(rm.Value.DType()), 1-m)))
			tensor.CopyInto(rv.Value, tensor.Add(tensor.MulScalar(rv.Value, m), tensor.MulScalar(unbiased.Cast(rv.Value.DType()), 1-m)))
		}
	} else {
		mean, vr = c.node(in[3]), c.node(in[4])
	}
	s := graph.Mul(scale, graph.Reciprocal(graph.Sqrt(graph.AddScalar(vr, n.float("epsilon", 1e-5)))))
	return []value{{n: graph.ChannelAffine(x, s, graph.Sub(bias, graph.Mul(mean, s)))}}
}

// checkLayerNorm refuses the optional statistics outputs.
func checkLayerNorm(n *node) error {
	if len(n.out) > 1 {
		return fmt.Errorf("the Mean and InvStdDev outputs are not imported")
	}
	return nil
}

// runLayerNorm maps LayerNormalization (opset 17) over the axes from axis
// on: (x − mean)/√(var + ε)·scale + B, composed of graph ops.
func runLayerNorm(c *call, n *node, in []value) []value {
	x := c.node(in[0])
	a := axis(n.int("axis", -1), x.Dim())
	var axes []int
	for i := a; i < x.Dim(); i++ {
		axes = append(axes, i)
	}
	d := graph.Sub(x, graph.Mean(x, axes, true))
	v := graph.Mean(graph.Square(d), axes, true)
	y := graph.Mul(d, graph.Reciprocal(graph.Sqrt(graph.AddScalar(v, n.float("epsilon", 1e-5)))))
	y = graph.Mul(y, c.node(in[1]))
	if len(in) > 2 && in[2].n != nil {
		y = graph.Add(y, in[2].n)
	}
	return []value{{n: y}}
}

// runSoftmax maps Softmax and LogSoftmax (opset 13: one axis, default −1).
func runSoftmax(c *call, n *node, in []value) []value {
	x := c.node(in[0])
	a := axis(n.int("axis", -1), x.Dim())
	if n.op == "LogSoftmax" {
		return []value{{n: graph.LogSoftmax(x, a)}}
	}
	return []value{{n: graph.Softmax(x, a)}}
}

// reduceAxes returns the axes a Reduce* node reduces: the axes attribute
// (or, for ReduceSum, input), all axes when empty; nil with ok false for
// noop_with_empty_axes.
func reduceAxes(n *node, in []value, r int) (axes []int, ok bool) {
	raw := n.ints("axes")
	if len(in) > 1 && (in[1].h != nil || in[1].n != nil) {
		raw = intsOf(in[1])
	}
	if len(raw) == 0 {
		if n.int("noop_with_empty_axes", 0) != 0 {
			return nil, false
		}
		for i := range r {
			axes = append(axes, i)
		}
		return axes, true
	}
	for _, a := range raw {
		axes = append(axes, axis(a, r))
	}
	slices.Sort(axes)
	return axes, true
}

// runReduce maps the Reduce* operators onto graph reductions (and their
// integer forms on the host).
func runReduce(c *call, n *node, in []value) []value {
	x := in[0]
	axes, ok := reduceAxes(n, in, len(x.shape()))
	if !ok {
		return []value{x}
	}
	keep := n.int("keepdims", 1) != 0
	if x.h != nil {
		var f func(*tensor.Tensor, []int, bool) *tensor.Tensor
		switch n.op {
		case "ReduceSum":
			f = tensor.Sum
		case "ReduceMax":
			f = tensor.Max
		case "ReduceMin":
			f = tensor.Min
		case "ReduceProd":
			f = tensor.Prod
		default:
			x = value{n: c.node(x)}
		}
		if f != nil {
			return []value{hostValue(f(x.h, axes, keep), false)}
		}
	}
	var y *graph.Node
	switch xn := x.n; n.op {
	case "ReduceSum":
		y = graph.Sum(xn, axes, keep)
	case "ReduceMean":
		y = graph.Mean(xn, axes, keep)
	case "ReduceMax":
		y = graph.Max(xn, axes, keep)
	case "ReduceMin":
		y = graph.Min(xn, axes, keep)
	case "ReduceProd":
		y = graph.Prod(xn, axes, keep)
	case "ReduceSumSquare":
		y = graph.Sum(graph.Square(xn), axes, keep)
	case "ReduceL2":
		y = graph.Sqrt(graph.Sum(graph.Square(xn), axes, keep))
	case "ReduceL1":
		y = graph.Sum(graph.Abs(xn), axes, keep)
	case "ReduceLogSumExp":
		y = graph.LogSumExp(xn, axes, keep)
	}
	return []value{{n: y}}
}
