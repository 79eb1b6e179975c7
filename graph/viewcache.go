package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// A view op (Slice, Reshape, Permute, BroadcastTo) allocates a small
// tensor header, with its shape and strides, every time it runs, and an
// LSTM step runs hundreds of them. A view depends only on the header of
// the tensor it looks at and on the op's parameters, and headers are never
// changed once made; graph buffers, and the tensors a training loop passes
// to Var and Const, are the same header objects every step. So, like the
// buffer pool, the graph replays last step's views in request order: the
// i-th view request gets last step's i-th view when it was made from the
// same header with the same parameters.

// viewKind tells the view ops apart in the replay list.
type viewKind uint8

const (
	viewSlice viewKind = iota + 1
	viewReshape
	viewPermute
	viewExpand
)

// viewEntry is one view made in a step: its source header, the op and its
// parameters (ints for a slice, dims for the others) and the result.
type viewEntry struct {
	in   *tensor.Tensor
	kind viewKind
	p    [4]int
	dims []int
	out  *tensor.Tensor
}

// viewCache replays views as bufferPool replays buffers.
type viewCache struct {
	prev, cur []viewEntry
	next      int
}

// view returns last step's view at this position when it matches, else
// the result of mk, which it records. dims must not be changed afterwards.
func (g *Graph) view(in *tensor.Tensor, kind viewKind, p [4]int, dims []int, mk func() *tensor.Tensor) *tensor.Tensor {
	c := &g.views
	var out *tensor.Tensor
	if c.next < len(c.prev) {
		e := &c.prev[c.next]
		if e.in == in && e.kind == kind && e.p == p && slices.Equal(e.dims, dims) {
			out = e.out
			c.next++
		} else {
			c.next = len(c.prev) // diverged: stop replaying this step
		}
	}
	if out == nil {
		out = mk()
	}
	c.cur = append(c.cur, viewEntry{in: in, kind: kind, p: p, dims: dims, out: out})
	return out
}

// recycle makes this step's views the next step's replay list.
func (c *viewCache) recycle() {
	clear(c.prev)
	c.prev, c.cur = c.cur, c.prev[:0]
	c.next = 0
}
