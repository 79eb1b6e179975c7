package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// Gathering and scattering with one index per element (NumPy's
// take_along_axis and np.add.at, PyTorch's gather and scatter_add),
// composed of IndexSelect and ScatterAdd on the flattened operand: each is
// the other's transpose, so their derivatives to any order come from those
// two ops' rules.

// TakeAlongAxis picks entries along axis separately for every position of
// x's other axes. idx has the shape of the result: x's shape with k
// entries along axis (any k ≥ 0), in row-major order; the element
// [o, i, r] of the result (axis in the middle) is x[o, idx[o, i, r], r].
// Indices may repeat; the gradient adds up. It panics with a
// *tensor.Error when len(idx) is not a multiple of the other axes' size
// or an index is outside [0, x.Shape()[axis]).
func TakeAlongAxis(x *Node, axis int, idx []int) *Node {
	const op = "take_along_axis"
	checkNodes(op, x)
	ax := normAxis(op, x, axis)
	s := x.Shape()
	outer, n, inner := shapeSize(s[:ax]), s[ax], shapeSize(s[ax+1:])
	rest := outer * inner
	if rest == 0 || len(idx)%rest != 0 {
		tensor.Fail(op, "%d indices do not fit operand %s along axis %d: want a multiple of %d", len(idx), Describe(x), axis, rest)
	}
	k := len(idx) / rest
	flat := flatIndices(op, x, idx, outer, n, k, inner)
	shape := append([]int(nil), s...)
	shape[ax] = k
	// flatIndices checked every index: no second pass in IndexSelect.
	return Reshape(apply(indexSelectOp{0, flat}, Reshape(x, x.Size())), shape...)
}

// ScatterAddAlongAxis is the transpose of TakeAlongAxis: it returns a zero
// tensor shaped like src but with size entries along axis, into which
// src[o, i, r] is added at [o, idx[o, i, r], r]; repeated indices
// accumulate. idx has one index per element of src, in row-major order.
// It panics with a *tensor.Error when len(idx) differs from src's size or
// an index is outside [0, size).
func ScatterAddAlongAxis(src *Node, axis int, idx []int, size int) *Node {
	const op = "scatter_add_along_axis"
	checkNodes(op, src)
	ax := normAxis(op, src, axis)
	if len(idx) != src.Size() {
		tensor.Fail(op, "%d indices for operand %s: want one per element", len(idx), Describe(src))
	}
	if size < 0 {
		tensor.Fail(op, "negative size %d for operand %s", size, Describe(src))
	}
	s := src.Shape()
	outer, k, inner := shapeSize(s[:ax]), s[ax], shapeSize(s[ax+1:])
	flat := flatIndices(op, src, idx, outer, size, k, inner)
	shape := append([]int(nil), s...)
	shape[ax] = size
	// flatIndices checked every index: no second pass in ScatterAdd.
	return Reshape(apply(scatterAddOp{0, flat, outer * size * inner}, Reshape(src, src.Size())), shape...)
}

// flatIndices turns idx, laid out as (outer, k, inner) with entries in
// [0, n), into row-major positions of an (outer, n, inner) tensor.
func flatIndices(op string, x *Node, idx []int, outer, n, k, inner int) []int {
	flat := make([]int, len(idx))
	for o := range outer {
		for i := range k {
			for r := range inner {
				p := (o*k+i)*inner + r
				j := idx[p]
				if j < 0 || j >= n {
					tensor.Fail(op, "index %d at position %d is outside [0, %d) for operand %s", j, p, n, Describe(x))
				}
				flat[p] = (o*n+j)*inner + r
			}
		}
	}
	return flat
}

type indexSelectOp struct {
	axis int
	idx  []int
}

func (indexSelectOp) Name() string { return "index_select" }

func (indexSelectOp) Arity() int { return 1 }

func (o indexSelectOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	shape := append([]int(nil), in[0].Shape()...)
	shape[o.axis] = len(o.idx)
	return kern.IndexSelect(g.AllocUninit(in[0].DType(), shape...), in[0], o.axis, o.idx)
}

func (o indexSelectOp) check(in []*Node) {
	x := in[0]
	if o.axis >= x.Dim() {
		tensor.Fail("index_select", "axis %d out of range for operand %s", o.axis, Describe(x))
	}
	checkIndices("index_select", x, o.axis, o.idx, x.Shape()[o.axis])
}

func (o indexSelectOp) VJP(out, ct *Node, needs []bool) []*Node {
	n := out.inputs[0].Shape()[o.axis]
	return cotangents(out, apply(scatterAddOp{o.axis, o.idx, n}, ct))
}

func (o indexSelectOp) JVP(out *Node, t []*Node) *Node { return Apply(o, t[0]) }

// IndexSelect gathers the entries idx along axis of x: the result's axis
// has len(idx) entries, entry i being x's entry idx[i]. Indices may repeat.
// It panics if an index is out of range.
func IndexSelect(x *Node, axis int, idx []int) *Node {
	checkNodes("index_select", x)
	ax := normAxis("index_select", x, axis)
	checkIndices("index_select", x, ax, idx, x.Shape()[ax])
	return apply(indexSelectOp{ax, append([]int(nil), idx...)}, x)
}

type scatterAddOp struct {
	axis int
	idx  []int
	size int
}

func (scatterAddOp) Name() string { return "scatter_add" }

func (scatterAddOp) Arity() int { return 1 }

func (o scatterAddOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	shape := append([]int(nil), in[0].Shape()...)
	shape[o.axis] = o.size
	return kern.ScatterAdd(g.Alloc(in[0].DType(), shape...), in[0], o.axis, o.idx)
}

func (o scatterAddOp) check(in []*Node) { checkScatterAdd(in[0], o.axis, o.idx, o.size) }

// checkScatterAdd fails unless src has len(idx) entries along the
// non-negative axis ax and every index is in [0, size).
func checkScatterAdd(src *Node, ax int, idx []int, size int) {
	if ax >= src.Dim() || src.Shape()[ax] != len(idx) {
		tensor.Fail("scatter_add", "%d indices along axis %d do not fit operand %s", len(idx), ax, Describe(src))
	}
	checkIndices("scatter_add", src, ax, idx, size)
}

func (o scatterAddOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, apply(indexSelectOp{o.axis, o.idx}, ct))
}

func (o scatterAddOp) JVP(out *Node, t []*Node) *Node { return Apply(o, t[0]) }

// ScatterAdd is the transpose of IndexSelect: it returns a zero tensor
// with size entries along axis and src's other dimensions, adding entry i
// of src along axis into entry idx[i] (repeated indices accumulate). src
// must have len(idx) entries along axis.
func ScatterAdd(src *Node, axis int, idx []int, size int) *Node {
	checkNodes("scatter_add", src)
	ax := normAxis("scatter_add", src, axis)
	checkScatterAdd(src, ax, idx, size)
	return apply(scatterAddOp{ax, append([]int(nil), idx...), size}, src)
}

func checkIndices(op string, x *Node, axis int, idx []int, n int) {
	for _, i := range idx {
		if i < 0 || i >= n {
			tensor.Fail(op, "index %d out of range [0, %d) along axis %d (operand %s)", i, n, axis, Describe(x))
		}
	}
}
