package autodiff

import (
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Rematerialisation (gradient checkpointing; Griewank 1992, "Achieving
// logarithmic growth of temporal and spatial complexity in reverse
// automatic differentiation"; Chen et al. 2016, "Training deep nets with
// sublinear memory cost"), as jax.checkpoint and
// torch.utils.checkpoint: a segment of a step keeps only its result, and
// the reverse sweep computes its inner values again when it needs them.

func init() {
	graph.Register(&checkpointOp{})
	graph.Register(&checkpointVJPOp{})
}

// Checkpoint returns f(xs) without keeping the values of the nodes f
// builds. f runs on the Scratch graph of xs' graph, which is Reset once
// f's result has been copied out, so f's intermediate values hold memory
// only while f runs; the reverse sweep (Grad, VJP) runs f again there,
// with its VJP, to get the cotangents of xs, and keeps only those. The
// result and every gradient are those of f(xs) built directly, bit for
// bit, when no x is also used outside f (otherwise they may differ in the
// last bits, from the order in which an x's cotangents are summed): the
// same ops run on the same values. Splitting a chain of L layers into
// about √L checkpointed segments keeps O(√L) layers' values for one more
// forward pass (Chen et al.).
//
// f must read every value it is differentiated through from xs. A
// parameter that a module reads with VarOf (nn's layers) is found when
// its tensor is an x's value: pass the parameter's node (nn.Remat does).
// Any other value f reads is a constant of the segment. f runs twice and
// must build the same computation each time, without keeping its nodes.
//
// Forward mode (JVP), derivatives of the gradient and Vmap build f on xs'
// graph and keep its values: the memory is saved by the reverse sweep.
//
// Checkpoint panics with a *tensor.Error if f is nil, there are no xs, an
// x is nil, two xs share a value, or f returns nil or a node of another
// graph.
func Checkpoint(f func(xs []*graph.Node) *graph.Node, xs ...*graph.Node) *graph.Node {
	const op = "Checkpoint"
	if f == nil {
		tensor.Fail(op, "nil function")
	}
	if len(xs) == 0 {
		tensor.Fail(op, "no inputs")
	}
	for i, x := range xs {
		checkNode(op, "x", x)
		for j := range i {
			if xs[j].Value() == x.Value() {
				tensor.Fail(op, "inputs %d and %d (%v, %v) share one value; pass it once", j, i, xs[j], x)
			}
		}
	}
	return graph.Apply(&checkpointOp{f: f}, xs...)
}

// checkpointOp is f applied to its inputs, on a scratch graph.
type checkpointOp struct {
	f func(xs []*graph.Node) *graph.Node
}

func (*checkpointOp) Name() string { return "checkpoint" }

func (*checkpointOp) Arity() int { return -1 }

func (o *checkpointOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	s, xs := scratchInputs(g, in)
	y := segment(o.f, s, xs)
	out := g.AllocUninit(y.DType(), y.Shape()...)
	tensor.CopyInto(out, y.Value())
	s.Reset()
	return out
}

// scratchInputs Resets g's scratch graph and makes in its Vars there.
func scratchInputs(g *graph.Graph, in []*tensor.Tensor) (*graph.Graph, []*graph.Node) {
	s := g.Scratch()
	s.Reset()
	xs := make([]*graph.Node, len(in))
	for i, t := range in {
		xs[i] = s.VarOf(t)
	}
	return s, xs
}

// segment calls f on xs of graph s and checks its result.
func segment(f func([]*graph.Node) *graph.Node, s *graph.Graph, xs []*graph.Node) *graph.Node {
	y := f(xs)
	if y == nil {
		tensor.Fail("Checkpoint", "the function returned nil")
	}
	if y.Graph() != s {
		tensor.Fail("Checkpoint", "the function returned %v, a node of another graph than its inputs'", y)
	}
	return y
}

// The cotangents come from one checkpointVJPOp node holding those the
// sweep needs, flattened one after another; each is a view of it.
func (o *checkpointOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	in := out.Inputs()
	v := graph.Apply(&checkpointVJPOp{f: o.f, needs: slices.Clone(needs)}, append(slices.Clone(in), ct)...)
	cts := make([]*graph.Node, len(in))
	off := 0
	for i, x := range in {
		if !needs[i] {
			continue
		}
		cts[i] = graph.Reshape(graph.Slice(v, 0, off, off+x.Size(), 1), x.Shape()...)
		off += x.Size()
	}
	return cts
}

// Forward mode keeps no values for later, so it builds f on out's graph.
func (o *checkpointOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	s := standIns(out.Inputs())
	return forward("Checkpoint", []*graph.Node{callOn(o.f, s, out.Inputs())}, s, t)[0]
}

// standIns returns a copy of each of in, made after every node so far:
// the rules that sweep a segment built on them get the partial derivatives
// in each input, while a sweep from the inputs themselves would also
// follow a path from one to another (a cotangent computed from a weight
// that is an input too). Through the copies, derivatives of higher order
// reach the inputs.
func standIns(in []*graph.Node) []*graph.Node {
	s := make([]*graph.Node, len(in))
	for i, x := range in {
		s[i] = graph.MulScalar(x, 1)
	}
	return s
}

// callOn calls f on the stand-ins s of in; an input that VarOf returns
// for its value (a parameter a module reads through VarOf) is bound to
// its stand-in meanwhile.
func callOn(f func([]*graph.Node) *graph.Node, s, in []*graph.Node) *graph.Node {
	g := in[0].Graph()
	for i, x := range in {
		if g.Bound(x.Value()) == x {
			g.Bind(x.Value(), s[i])
			defer g.Bind(x.Value(), x)
		}
	}
	return f(s)
}

// The batched segment is a checkpointed Vmap of f.
func (o *checkpointOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	vf := Vmap(func(xs []*graph.Node) []*graph.Node { return []*graph.Node{o.f(xs)} }, VmapOptions{InAxes: slices.Clone(axes)})
	return Checkpoint(func(xs []*graph.Node) *graph.Node { return vf(xs)[0] }, in...), 0
}

// checkpointVJPOp computes, from the inputs of a checkpoint and the
// cotangent of its result (the last input), the cotangents of the inputs
// that needs marks, flattened and concatenated: f runs again on the
// scratch graph and the reverse sweep goes through it there.
type checkpointVJPOp struct {
	f     func(xs []*graph.Node) *graph.Node
	needs []bool
}

func (*checkpointVJPOp) Name() string { return "checkpoint_vjp" }

func (*checkpointVJPOp) Arity() int { return -1 }

func (o *checkpointVJPOp) Forward(g *graph.Graph, in []*tensor.Tensor) *tensor.Tensor {
	n := len(in) - 1
	s, xs := scratchInputs(g, in[:n])
	y := segment(o.f, s, xs)
	cts := VJP(y, s.Const(in[n]), o.wanted(xs)...)
	out := g.AllocUninit(in[n].DType(), o.size(in[:n]))
	off := 0
	for _, c := range cts {
		k := c.Size()
		tensor.CopyInto(tensor.Reshape(tensor.Slice(out, 0, off, off+k, 1), c.Shape()...), c.Value())
		off += k
	}
	s.Reset()
	return out
}

// wanted returns the xs whose cotangents the op computes.
func (o *checkpointVJPOp) wanted(xs []*graph.Node) []*graph.Node {
	var w []*graph.Node
	for i, x := range xs {
		if o.needs[i] {
			w = append(w, x)
		}
	}
	return w
}

func (o *checkpointVJPOp) size(in []*tensor.Tensor) int {
	n := 0
	for i, t := range in {
		if o.needs[i] {
			n += t.Size()
		}
	}
	return n
}

// composite builds the op's value from graph ops on stand-ins s of its
// inputs in, for the rules of higher order, which keep the values.
func (o *checkpointVJPOp) composite(s, in []*graph.Node) *graph.Node {
	n := len(in) - 1
	xs := s[:n]
	cts := VJP(callOn(o.f, xs, in[:n]), s[n], o.wanted(xs)...)
	flat := make([]*graph.Node, len(cts))
	for i, c := range cts {
		flat[i] = graph.Reshape(c, c.Size())
	}
	if len(flat) == 1 {
		return flat[0]
	}
	return graph.Concat(0, flat...)
}

func (o *checkpointVJPOp) VJP(out, ct *graph.Node, needs []bool) []*graph.Node {
	in := out.Inputs()
	s := standIns(in)
	return backward("Checkpoint", []*graph.Node{o.composite(s, in)}, []*graph.Node{ct}, s)
}

func (o *checkpointVJPOp) JVP(out *graph.Node, t []*graph.Node) *graph.Node {
	in := out.Inputs()
	s := standIns(in)
	return forward("Checkpoint", []*graph.Node{o.composite(s, in)}, s, t)[0]
}

// The batched inputs of Vmap's trace are independent leaves' slices.
func (o *checkpointVJPOp) Batch(b *graph.Batching, in []*graph.Node, axes []int) (*graph.Node, int) {
	vf := Vmap(func(xs []*graph.Node) []*graph.Node { return []*graph.Node{o.composite(xs, xs)} }, VmapOptions{InAxes: slices.Clone(axes)})
	return vf(in)[0], 0
}
