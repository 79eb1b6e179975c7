package graph

import (
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// Sorting and scans composed of registered ops: their derivatives come
// from IndexSelect (a gather, whose VJP scatters back) and MatMul, so they
// need no rules of their own.

// Sort returns x sorted along its last axis (ascending, or descending) and
// the permutation, indices[r][i] being the source position of output i in
// row r. The values are differentiable: each output's gradient flows to
// the input it came from. Ties keep their order (a stable sort). It panics
// with a *tensor.Error for a 0-d x.
func Sort(x *Node, descending bool) (values *Node, indices [][]int) {
	checkNodes("sort", x)
	if x.Dim() == 0 {
		tensor.Fail("sort", "operand %s has no axis to sort", Describe(x))
	}
	n := x.Shape()[x.Dim()-1]
	rows := x.Size() / max(n, 1)
	v := x.Value().Contiguous().Values()
	flat := make([]int, 0, rows*n)
	indices = make([][]int, rows)
	for r := range rows {
		row := v[r*n : (r+1)*n]
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			if descending {
				return row[idx[a]] > row[idx[b]]
			}
			return row[idx[a]] < row[idx[b]]
		})
		indices[r] = idx
		for _, i := range idx {
			flat = append(flat, r*n+i)
		}
	}
	return Reshape(IndexSelect(Reshape(x, x.Size()), 0, flat), x.Shape()...), indices
}

// TopK returns the k largest values along the last axis, in decreasing
// order, shaped (..., k), with their source positions. It panics with a
// *tensor.Error when k is not in [0, n].
func TopK(x *Node, k int) (values *Node, indices [][]int) {
	checkNodes("topk", x)
	if x.Dim() == 0 || k < 0 || k > x.Shape()[x.Dim()-1] {
		tensor.Fail("topk", "k = %d does not fit operand %s", k, Describe(x))
	}
	sorted, idx := Sort(x, true)
	for r := range idx {
		idx[r] = idx[r][:k]
	}
	return Slice(sorted, -1, 0, k, 1), idx
}

// CumSum returns the running sums along the given axis: out[…, i, …] =
// Σ_{j≤i} x[…, j, …]. It multiplies by a constant lower-triangular matrix
// of ones (n² work along the axis), which keeps it differentiable to any
// order through MatMul.
func CumSum(x *Node, axis int) *Node {
	checkNodes("cumsum", x)
	d := x.Dim()
	if axis < 0 {
		axis += d
	}
	if axis < 0 || axis >= d {
		tensor.Fail("cumsum", "axis %d out of range for operand %s", axis, Describe(x))
	}
	n := x.Shape()[axis]
	ones := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			ones[i*n+j] = 1
		}
	}
	tri := x.g.Const(tensor.FromValues(x.DType(), ones, n, n))
	if axis == d-1 {
		return MatMulT(x, tri, false, true)
	}
	// Move the axis last, sum, and move it back.
	perm := make([]int, d)
	inv := make([]int, d)
	k := 0
	for i := range d {
		if i != axis {
			perm[k] = i
			k++
		}
	}
	perm[d-1] = axis
	for i, p := range perm {
		inv[p] = i
	}
	return Permute(MatMulT(Permute(x, perm...), tri, false, true), inv...)
}
