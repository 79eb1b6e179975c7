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
	return Reshape(IndexSelect(Reshape(x, x.Size()), 0, flat), shape...)
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
	return Reshape(ScatterAdd(Reshape(src, src.Size()), 0, flat, outer*size*inner), shape...)
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
