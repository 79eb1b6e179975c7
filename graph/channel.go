package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Per-channel ops on (N, C, ...) layouts, channels on axis 1: the affine
// map that ends batch and instance normalisation, x·scale[c] + shift[c],
// and the sum of a product per channel that is its gradient in the scale.
// Each is one pass where the broadcasting composite (a multiply, an add,
// and their reductions in the backward pass) took several. Their rules are
// written with one another.

func init() {
	Register(channelAffineOp{})
	Register(channelScaleOp{})
	Register(channelDotOp{})
}

// channelAffineOp is x·scale[c] + shift[c]: inputs x, scale (C), shift (C).
type channelAffineOp struct{}

func (channelAffineOp) Name() string { return "channel_affine" }

func (channelAffineOp) Arity() int { return 3 }

func (channelAffineOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	return kern.ChannelAffine(g.AllocUninit(x.DType(), x.Shape()...), x, in[1], in[2])
}

func (channelAffineOp) check(in []*Node) { checkChannel("channel_affine", in) }

// dx = ct·scale[c], dscale = Σ ct·x per channel, dshift = Σ ct per channel.
func (channelAffineOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, scale := out.inputs[0], out.inputs[1]
	var dx, ds, db *Node
	if needs[0] {
		dx = channelScale(ct, scale)
	}
	if needs[1] {
		ds = ChannelDot(ct, x)
	}
	if needs[2] {
		db = Sum(ct, channelSumAxes(ct.Dim()), false)
	}
	return cotangents(out, dx, ds, db)
}

func (channelAffineOp) JVP(out *Node, t []*Node) *Node {
	var shift *Node
	if t[2] != nil {
		shift = Reshape(t[2], channelShape(out)...)
	}
	return addTangents(out, bilinearJVP(out, t, channelScale), shift)
}

// channelScaleOp is x·scale[c]: ChannelAffine without a shift.
type channelScaleOp struct{}

func (channelScaleOp) Name() string { return "channel_scale" }

func (channelScaleOp) Arity() int { return 2 }

func (channelScaleOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	return kern.ChannelAffine(g.AllocUninit(x.DType(), x.Shape()...), x, in[1], nil)
}

func (channelScaleOp) check(in []*Node) { checkChannel("channel_scale", in) }

func (channelScaleOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, scale := out.inputs[0], out.inputs[1]
	var dx, ds *Node
	if needs[0] {
		dx = channelScale(ct, scale)
	}
	if needs[1] {
		ds = ChannelDot(ct, x)
	}
	return cotangents(out, dx, ds)
}

// The map is bilinear in x and scale.
func (channelScaleOp) JVP(out *Node, t []*Node) *Node { return bilinearJVP(out, t, channelScale) }

// channelScale is x·scale[c].
func channelScale(x, scale *Node) *Node { return ChannelAffine(x, scale, nil) }

// channelDotOp is Σ a·b over every axis but the channel axis 1.
type channelDotOp struct{}

func (channelDotOp) Name() string { return "channel_dot" }

func (channelDotOp) Arity() int { return 2 }

func (channelDotOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	a := in[0]
	return kern.ChannelDot(g.AllocUninit(a.DType(), a.Shape()[1]), a, in[1])
}

func (channelDotOp) check(in []*Node) {
	a, b := in[0], in[1]
	if a.DType() != b.DType() {
		tensor.Fail("channel_dot", "mixed dtypes: %s", Describe(a, b))
	}
	if a.Dim() < 2 || !slices.Equal(a.Shape(), b.Shape()) {
		tensor.Fail("channel_dot", "operands %s must have one shape (N, C, ...)", Describe(a, b))
	}
}

// d a = ct[c]·b, d b = ct[c]·a: the sum is bilinear.
func (channelDotOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	var da, db *Node
	if needs[0] {
		da = channelScale(b, ct)
	}
	if needs[1] {
		db = channelScale(a, ct)
	}
	return cotangents(out, da, db)
}

func (channelDotOp) JVP(out *Node, t []*Node) *Node { return bilinearJVP(out, t, ChannelDot) }

// checkChannel validates x (N, C, ...), scale (C) and, for the affine op,
// shift (C), all of one dtype.
func checkChannel(op string, in []*Node) {
	x := in[0]
	for _, v := range in[1:] {
		if v.DType() != x.DType() {
			tensor.Fail(op, "mixed dtypes: %s", Describe(in...))
		}
	}
	ok := x.Dim() >= 2
	for _, v := range in[1:] {
		ok = ok && v.Dim() == 1 && v.Shape()[0] == x.Shape()[1]
	}
	if !ok {
		tensor.Fail(op, "operands %s do not fit: want x (N, C, ...) and per-channel vectors (C)", Describe(in...))
	}
}

// channelSumAxes lists every axis of a rank-d tensor but the channel axis.
func channelSumAxes(d int) []int {
	axes := []int{0}
	for i := 2; i < d; i++ {
		axes = append(axes, i)
	}
	return axes
}

// channelShape is (1, C, 1, ...) for out (N, C, ...).
func channelShape(out *Node) []int {
	s := make([]int, out.Dim())
	for i := range s {
		s[i] = 1
	}
	s[1] = out.Shape()[1]
	return s
}

// ChannelAffine returns x·scale[c] + shift[c] for x (N, C, ...) with at
// least two axes and scale and shift of shape (C), channels on axis 1 as
// in PyTorch's image layout: the affine map of batch, instance and group
// normalisation in one pass. shift may be nil for x·scale[c]. It panics
// for mixed dtypes or shapes that do not fit.
func ChannelAffine(x, scale, shift *Node) *Node {
	if shift == nil {
		checkNodes("channel_scale", x, scale)
		channelScaleOp{}.check([]*Node{x, scale})
		return apply(channelScaleOp{}, x, scale)
	}
	checkNodes("channel_affine", x, scale, shift)
	channelAffineOp{}.check([]*Node{x, scale, shift})
	return apply(channelAffineOp{}, x, scale, shift)
}

// ChannelDot returns the per-channel sums Σ a·b over every axis of a and b
// (N, C, ...) but axis 1, of shape (C): the gradient of ChannelAffine in
// its scale. a and b must have one shape, of at least two axes, and one
// dtype.
func ChannelDot(a, b *Node) *Node {
	checkNodes("channel_dot", a, b)
	channelDotOp{}.check([]*Node{a, b})
	return apply(channelDotOp{}, a, b)
}

// channelMomentsOp is the per-channel mean and biased variance of x
// (N, C, ...) over every other axis, stacked as (2, C).
type channelMomentsOp struct{}

func init() { Register(channelMomentsOp{}) }

func (channelMomentsOp) Name() string { return "channel_moments" }

func (channelMomentsOp) Arity() int { return 1 }

func (channelMomentsOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	return kern.ChannelMoments(g.AllocUninit(x.DType(), 2, x.Shape()[1]), x)
}

func (channelMomentsOp) check(in []*Node) {
	x := in[0]
	if x.Dim() < 2 {
		tensor.Fail("channel_moments", "input %s must have shape (N, C, ...)", Describe(x))
	}
	if c := x.Shape()[1]; c > 0 && x.Size() == 0 {
		tensor.Fail("channel_moments", "input %s has no elements per channel", Describe(x))
	}
}

// With n values per channel, mean = Σx/n and var = Σ(x − mean)²/n, whose
// derivative in x_i is 2(x_i − mean)/n (the path through the mean adds
// Σ(x − mean) = 0). So dx = dmean/n + dvar·2(x − mean)/n, one ChannelAffine
// of x: scale 2·dvar/n, shift dmean/n − scale·mean.
func (channelMomentsOp) VJP(out, ct *Node, needs []bool) []*Node {
	x := out.inputs[0]
	c := x.Shape()[1]
	n := float64(x.Size() / c)
	dm, dv := channelRow(ct, 0), channelRow(ct, 1)
	scale := MulScalar(dv, 2/n)
	shift := Sub(MulScalar(dm, 1/n), Mul(scale, channelRow(out, 0)))
	return cotangents(out, ChannelAffine(x, scale, shift))
}

// The tangents: mean' = Σẋ/n and var' = (2/n)·Σ(x − mean)·ẋ
// = (2/n)·(Σx·ẋ − mean·Σẋ).
func (channelMomentsOp) JVP(out *Node, t []*Node) *Node {
	if t[0] == nil {
		return nil
	}
	x, tx := out.inputs[0], t[0]
	n := float64(x.Size() / x.Shape()[1])
	sum := Sum(tx, channelSumAxes(x.Dim()), false)
	tv := MulScalar(Sub(ChannelDot(x, tx), Mul(channelRow(out, 0), sum)), 2/n)
	return Stack(0, MulScalar(sum, 1/n), tv)
}

// channelRow is row r of a (2, C) node, as a (C) node.
func channelRow(m *Node, r int) *Node {
	return Reshape(Slice(m, 0, r, r+1, 1), m.Shape()[1])
}

// ChannelMoments returns the per-channel mean and biased variance (each of
// shape (C)) of x (N, C, ...) over every axis but axis 1: batch
// normalisation's statistics in one op, summed in float64, whose gradient
// is one ChannelAffine pass over x. It panics if x has fewer than two axes
// or no elements per channel.
func ChannelMoments(x *Node) (mean, variance *Node) {
	checkNodes("channel_moments", x)
	channelMomentsOp{}.check([]*Node{x})
	m := apply(channelMomentsOp{}, x)
	return channelRow(m, 0), channelRow(m, 1)
}
