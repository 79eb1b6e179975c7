package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Batching rules of the convolution, pooling and per-channel ops, whose
// operands are (N, C, ...) batches already. With per-example inputs and a
// shared weight the examples fold into N: one convolution of B·N images.
// A per-example weight (the weight gradient, or weights that are
// themselves batched) makes each example a group: the examples' channels
// sit side by side, (N, B·C, ...), and a convolution with B times the
// groups keeps them apart.

// foldN returns x (B, N, ...) with batch axis ax as (B·N, ...).
func (b *Batching) foldN(x *Node, ax int) *Node {
	x = b.toFront(x, ax)
	s := x.Shape()
	return Reshape(x, append([]int{s[0] * s[1]}, s[2:]...)...)
}

// unfoldN is the inverse of foldN: (B·N, ...) to (B, N, ...).
func (b *Batching) unfoldN(y *Node) *Node {
	s := y.Shape()
	return Reshape(y, append([]int{b.size, s[0] / b.size}, s[1:]...)...)
}

// wide returns x (B, N, C, ...) with batch axis ax as (N, B·C, ...).
func (b *Batching) wide(x *Node, ax int) *Node {
	x = b.toFront(x, ax)
	perm := make([]int, x.Dim())
	for i := range perm {
		perm[i] = i
	}
	perm[0], perm[1] = 1, 0
	x = Permute(x, perm...)
	s := x.Shape()
	return Reshape(x, append([]int{s[0], s[1] * s[2]}, s[3:]...)...)
}

// unwide is the inverse of wide, with the examples on axis 1: (N, B·C, ...)
// to (N, B, C, ...).
func (b *Batching) unwide(y *Node) (*Node, int) {
	s := y.Shape()
	return Reshape(y, append([]int{s[0], b.size, s[1] / b.size}, s[2:]...)...), 1
}

// grouped returns p with b.Size() times its groups.
func (b *Batching) grouped(p tensor.ConvParams) tensor.ConvParams {
	p.Groups = max(p.Groups, 1) * b.size
	return p
}

// flatWeight returns a weight w (B, O, ...) with batch axis ax as (B·O, ...).
func (b *Batching) flatWeight(w *Node, ax int) *Node { return b.foldN(w, ax) }

func (o conv2dOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	x, w := in[0], in[1]
	if axes[1] == NotBatched {
		return b.unfoldN(Conv2D(b.foldN(x, axes[0]), w, o.p)), 0
	}
	return b.unwide(Conv2D(b.wide(x, axes[0]), b.flatWeight(w, axes[1]), b.grouped(o.p)))
}

func (o conv2dInputGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	dy, w := in[0], in[1]
	if axes[1] == NotBatched {
		xs := slices.Clone(o.xShape)
		xs[0] *= b.size
		return b.unfoldN(Conv2DInputGrad(b.foldN(dy, axes[0]), w, xs, o.p)), 0
	}
	xs := slices.Clone(o.xShape)
	xs[1] *= b.size
	return b.unwide(Conv2DInputGrad(b.wide(dy, axes[0]), b.flatWeight(w, axes[1]), xs, b.grouped(o.p)))
}

// The weight gradient sums over N, so the examples cannot fold into it.
func (o conv2dWeightGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	ws := slices.Clone(o.wShape)
	ws[0] *= b.size
	dw := Conv2DWeightGrad(b.wide(in[0], axes[0]), b.wide(in[1], axes[1]), ws, b.grouped(o.p))
	return Reshape(dw, insertAxis(o.wShape, 0, b.size)...), 0
}

// The batched op records its own argmax; max pooling's derivative ops
// traced from this one look it up (batchedArgmax).
func (o *maxPool2DOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	y := MaxPool2D(b.foldN(in[0], axes[0]), o.p)
	if len(o.argmax) > 0 {
		b.argmax[&o.argmax[0]] = y.op.(*maxPool2DOp).argmax
	}
	return b.unfoldN(y), 0
}

// batchedArgmax returns the argmax of B·N pooled images for an argmax of N
// into an input of size xSize: the batched forward's when argmax came from
// a traced max pooling, else argmax repeated per example and offset.
func (b *Batching) batchedArgmax(g *Graph, argmax []int, xSize int) []int {
	if len(argmax) > 0 {
		if a, ok := b.argmax[&argmax[0]]; ok {
			return a
		}
	}
	out := g.AllocInts(b.size * len(argmax))
	for k := range b.size {
		for i, a := range argmax {
			out[k*len(argmax)+i] = a + k*xSize
		}
	}
	return out
}

// ownsArgmax reports whether argmax came from a max pooling this Batching
// has batched: ops reading it then differ per example even when their
// operand does not.
func (b *Batching) ownsArgmax(argmax []int) bool {
	if len(argmax) == 0 {
		return false
	}
	_, ok := b.argmax[&argmax[0]]
	return ok
}

func (o maxPoolGradOp) batchedParams(b *Batching) bool { return b.ownsArgmax(o.argmax) }

func (o maxPoolGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	dy := b.foldN(in[0], axes[0])
	xs := slices.Clone(o.xShape)
	xs[0] *= b.size
	return b.unfoldN(MaxPool2DGrad(dy, b.batchedArgmax(dy.g, o.argmax, shapeSize(o.xShape)), xs)), 0
}

func (o maxPoolGatherOp) batchedParams(b *Batching) bool { return b.ownsArgmax(o.argmax) }

func (o maxPoolGatherOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	x := b.foldN(in[0], axes[0])
	ys := slices.Clone(o.yShape)
	ys[0] *= b.size
	return b.unfoldN(MaxPool2DGather(x, b.batchedArgmax(x.g, o.argmax, shapeSize(in[0].Shape())/b.sizeOf(axes[0])), ys)), 0
}

// sizeOf is the number of copies of an example an operand with batch axis
// ax holds: b.Size(), or 1 when it is not batched.
func (b *Batching) sizeOf(ax int) int {
	if ax == NotBatched {
		return 1
	}
	return b.size
}

func (o avgPool2DOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.unfoldN(AvgPool2D(b.foldN(in[0], axes[0]), o.p)), 0
}

func (o avgPoolGradOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	xs := slices.Clone(o.xShape)
	xs[0] *= b.size
	return b.unfoldN(AvgPool2DGrad(b.foldN(in[0], axes[0]), xs, o.p)), 0
}

// The per-channel ops fold the examples into N when the per-channel
// vectors are shared, and widen the channels to B·C when they are not.
func (o channelAffineOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	if axes[1] == NotBatched && axes[2] == NotBatched {
		return b.unfoldN(ChannelAffine(b.foldN(in[0], axes[0]), in[1], in[2])), 0
	}
	return b.unwide(ChannelAffine(b.wide(in[0], axes[0]), b.flatWeight(in[1], axes[1]), b.flatWeight(in[2], axes[2])))
}

func (o channelScaleOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	if axes[1] == NotBatched {
		return b.unfoldN(ChannelAffine(b.foldN(in[0], axes[0]), in[1], nil)), 0
	}
	return b.unwide(ChannelAffine(b.wide(in[0], axes[0]), b.flatWeight(in[1], axes[1]), nil))
}

func (o channelDotOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	d := ChannelDot(b.wide(in[0], axes[0]), b.wide(in[1], axes[1]))
	return Reshape(d, b.size, d.Size()/b.size), 0
}

func (o channelMomentsOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	m := apply(channelMomentsOp{}, b.wide(in[0], axes[0]))
	return Reshape(m, 2, b.size, m.Shape()[1]/b.size), 1
}
