package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Shape ops. Reshape, Permute, BroadcastTo and Slice return views sharing
// their input's storage (graph values are never written after creation);
// the others copy into graph-owned buffers. Each op's derivative is another
// shape op: broadcast_to ↔ sum_to, slice ↔ scatter_slice, index_select ↔
// scatter_add, pad → slice.

func init() {
	for _, op := range []Op{reshapeOp{}, permuteOp{}, broadcastToOp{}, sumToOp{}, sliceOp{}, scatterSliceOp{},
		indexSelectOp{}, scatterAddOp{}, padOp{}, concatOp{}} {
		Register(op)
	}
}

type reshapeOp struct{ shape []int }

func (reshapeOp) Name() string { return "reshape" }

func (reshapeOp) Arity() int { return 1 }

func (o reshapeOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	src := in[0]
	if !src.IsContiguous() && !unitAxesOnly(src.Shape(), o.shape) && !kern.ReshapesInPlace(src, o.shape) {
		// A strided input that the strides cannot reshape (a permuted
		// matrix flattened) is copied into a graph buffer. Adding or
		// dropping axes of size 1, or splitting a sliced axis (a piece
		// of attention's packed cotangent), needs no copy.
		src = g.AllocUninit(in[0].DType(), in[0].Shape()...)
		kern.Copy(src, in[0])
	}
	return g.view(src, viewReshape, [4]int{}, o.shape, func() *tensor.Tensor { return kern.Reshape(src, o.shape) })
}

// unitAxesOnly reports whether shapes a and b differ only in axes of
// size 1.
func unitAxesOnly(a, b []int) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == 1 {
			i++
		}
		for j < len(b) && b[j] == 1 {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i, j = i+1, j+1
	}
}

func (o reshapeOp) check(in []*Node) {
	if slices.ContainsFunc(o.shape, func(d int) bool { return d < 0 }) || shapeSize(o.shape) != in[0].Size() {
		tensor.Fail("reshape", "cannot reshape operand %s (size %d) to %s", Describe(in[0]), in[0].Size(), tensor.FormatShape(o.shape))
	}
}

func (reshapeOp) VJP(out, ct *Node, needs []bool) []*Node {
	return []*Node{Reshape(ct, out.inputs[0].Shape()...)}
}

func (o reshapeOp) JVP(out *Node, t []*Node) *Node { return Reshape(t[0], o.shape...) }

// Reshape returns x with the given shape and the same elements in row-major
// order; one dimension may be -1 and is inferred. It returns x itself when
// the shape is unchanged, and panics if the sizes differ.
func Reshape(x *Node, shape ...int) *Node {
	checkNodes("reshape", x)
	shape = resolveShape(x, shape)
	if slices.Equal(shape, x.Shape()) {
		return x
	}
	return apply(reshapeOp{shape}, x)
}

func resolveShape(x *Node, shape []int) []int {
	out := append([]int(nil), shape...)
	infer, known := -1, 1
	for i, d := range out {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			tensor.Fail("reshape", "invalid shape %v for operand %s", shape, Describe(x))
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || x.Size()%known != 0 {
			tensor.Fail("reshape", "cannot reshape operand %s to %v", Describe(x), shape)
		}
		out[infer] = x.Size() / known
	}
	if shapeSize(out) != x.Size() {
		tensor.Fail("reshape", "cannot reshape operand %s (size %d) to %v", Describe(x), x.Size(), shape)
	}
	return out
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Squeeze removes the given size-1 axes of x (all size-1 axes when none are
// given). It panics if an axis is out of range or not of size 1.
func Squeeze(x *Node, axes ...int) *Node {
	checkNodes("squeeze", x)
	drop := make([]bool, x.Dim())
	if len(axes) == 0 {
		for i, d := range x.Shape() {
			drop[i] = d == 1
		}
	} else {
		for _, a := range normAxes("squeeze", x, axes) {
			if x.Shape()[a] != 1 {
				tensor.Fail("squeeze", "axis %d has size %d, not 1, in operand %s", a, x.Shape()[a], Describe(x))
			}
			drop[a] = true
		}
	}
	shape := make([]int, 0, x.Dim())
	for i, d := range x.Shape() {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return Reshape(x, shape...)
}

// Unsqueeze inserts a size-1 axis at position axis of the result (-1
// appends one). It panics unless -x.Dim()-1 <= axis <= x.Dim().
func Unsqueeze(x *Node, axis int) *Node {
	checkNodes("unsqueeze", x)
	nd := x.Dim()
	a := axis
	if a < 0 {
		a += nd + 1
	}
	if a < 0 || a > nd {
		tensor.Fail("unsqueeze", "axis %d out of range for operand %s", axis, Describe(x))
	}
	shape := make([]int, 0, nd+1)
	shape = append(append(append(shape, x.Shape()[:a]...), 1), x.Shape()[a:]...)
	return Reshape(x, shape...)
}

type permuteOp struct{ perm []int }

func (permuteOp) Name() string { return "permute" }

func (permuteOp) Arity() int { return 1 }

func (o permuteOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return g.view(in[0], viewPermute, [4]int{}, o.perm, func() *tensor.Tensor { return kern.Permute(in[0], o.perm) })
}

func (o permuteOp) check(in []*Node) {
	nd := in[0].Dim()
	ok := len(o.perm) == nd
	seen := make([]bool, nd)
	for _, a := range o.perm {
		ok = ok && a >= 0 && a < nd && !seen[a]
		if ok {
			seen[a] = true
		}
	}
	if !ok {
		tensor.Fail("permute", "%v is not a permutation of the axes of operand %s", o.perm, Describe(in[0]))
	}
}

func (o permuteOp) VJP(out, ct *Node, needs []bool) []*Node {
	inv := make([]int, len(o.perm))
	for i, p := range o.perm {
		inv[p] = i
	}
	return cotangents(out, Permute(ct, inv...))
}

func (o permuteOp) JVP(out *Node, t []*Node) *Node { return Permute(t[0], o.perm...) }

// Permute reorders the axes of x: axis i of the result is axis perm[i] of
// x (negative entries count from the end). The identity permutation
// returns x. It panics unless perm is a permutation of x's axes.
func Permute(x *Node, perm ...int) *Node {
	checkNodes("permute", x)
	nd := x.Dim()
	if len(perm) != nd {
		tensor.Fail("permute", "permutation %v for operand %s", perm, Describe(x))
	}
	p := make([]int, nd)
	seen := make([]bool, nd)
	identity := true
	for i, a := range perm {
		if a < 0 {
			a += nd
		}
		if a < 0 || a >= nd || seen[a] {
			tensor.Fail("permute", "%v is not a permutation of the axes of operand %s", perm, Describe(x))
		}
		seen[a] = true
		p[i] = a
		identity = identity && a == i
	}
	if identity {
		return x
	}
	return apply(permuteOp{p}, x)
}

// permuted is Permute for a perm its caller built as a permutation of x's
// axes without negative entries (Einsum): no second check.
func permuted(x *Node, perm []int) *Node {
	for i, a := range perm {
		if a != i {
			return apply(permuteOp{perm}, x)
		}
	}
	return x
}

// reshaped is Reshape for a shape its caller built without -1 and with
// x's size (Einsum): no second check.
func reshaped(x *Node, shape ...int) *Node {
	if slices.Equal(shape, x.Shape()) {
		return x
	}
	return apply(reshapeOp{shape}, x)
}

// Transpose swaps the last two axes of x (the batched matrix transpose).
// It panics for fewer than two axes.
func Transpose(x *Node) *Node {
	checkNodes("transpose", x)
	nd := x.Dim()
	if nd < 2 {
		tensor.Fail("transpose", "operand %s has fewer than 2 axes", Describe(x))
	}
	perm := make([]int, nd)
	for i := range perm {
		perm[i] = i
	}
	perm[nd-2], perm[nd-1] = nd-1, nd-2
	return Permute(x, perm...)
}

type broadcastToOp struct{ shape []int }

func (broadcastToOp) Name() string { return "broadcast_to" }

func (broadcastToOp) Arity() int { return 1 }

func (o broadcastToOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return g.view(in[0], viewExpand, [4]int{}, o.shape, func() *tensor.Tensor { return kern.Expand(in[0], o.shape) })
}

func (o broadcastToOp) check(in []*Node) {
	if !broadcastsTo(in[0].Shape(), o.shape) {
		tensor.Fail("broadcast_to", "cannot broadcast operand %s to %s", Describe(in[0]), tensor.FormatShape(o.shape))
	}
}

func (broadcastToOp) VJP(out, ct *Node, needs []bool) []*Node {
	return []*Node{SumTo(ct, out.inputs[0].Shape()...)}
}

func (o broadcastToOp) JVP(out *Node, t []*Node) *Node { return BroadcastTo(t[0], o.shape...) }

// BroadcastTo returns x broadcast to shape (NumPy broadcast_to, tensor's
// Expand) as a view; its VJP is SumTo. It returns x itself when the shape
// is unchanged and panics if x's shape does not broadcast to shape.
func BroadcastTo(x *Node, shape ...int) *Node {
	checkNodes("broadcast_to", x)
	if slices.Equal(shape, x.Shape()) {
		return x
	}
	if !broadcastsTo(x.Shape(), shape) {
		tensor.Fail("broadcast_to", "cannot broadcast operand %s to %s", Describe(x), tensor.FormatShape(shape))
	}
	return apply(broadcastToOp{append([]int(nil), shape...)}, x)
}

type sumToOp struct{ shape []int }

func (sumToOp) Name() string { return "sum_to" }

func (sumToOp) Arity() int { return 1 }

func (o sumToOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.SumTo(g.AllocUninit(in[0].DType(), o.shape...), in[0])
}

func (o sumToOp) check(in []*Node) {
	if !broadcastsTo(o.shape, in[0].Shape()) {
		tensor.Fail("sum_to", "shape %s does not broadcast to operand %s", tensor.FormatShape(o.shape), Describe(in[0]))
	}
}

func (sumToOp) VJP(out, ct *Node, needs []bool) []*Node {
	return []*Node{BroadcastTo(ct, out.inputs[0].Shape()...)}
}

func (o sumToOp) JVP(out *Node, t []*Node) *Node { return SumTo(t[0], o.shape...) }

// SumTo sums x down to shape, which must broadcast to x's shape: it is the
// VJP of broadcasting. It returns x itself when the shape is unchanged.
func SumTo(x *Node, shape ...int) *Node {
	checkNodes("sum_to", x)
	if slices.Equal(shape, x.Shape()) {
		return x
	}
	if !broadcastsTo(shape, x.Shape()) {
		tensor.Fail("sum_to", "shape %s does not broadcast to operand %s", tensor.FormatShape(shape), Describe(x))
	}
	return apply(sumToOp{append([]int(nil), shape...)}, x)
}

// sliceSpec is a Python slice start:stop:step along one axis.
type sliceSpec struct{ axis, start, stop, step int }

type sliceOp struct{ sliceSpec }

func (sliceOp) Name() string { return "slice" }

func (sliceOp) Arity() int { return 1 }

func (o sliceOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return g.slice(in[0], o.sliceSpec)
}

func (o sliceOp) check(in []*Node) {
	if o.axis < 0 || o.axis >= in[0].Dim() || o.step == 0 {
		tensor.Fail("slice", "axis %d with step %d does not fit operand %s", o.axis, o.step, Describe(in[0]))
	}
}

// slice is tensor.Slice through the graph's view replay.
func (g *Graph) slice(t *tensor.Tensor, s sliceSpec) *tensor.Tensor {
	return g.view(t, viewSlice, [4]int{s.axis, s.start, s.stop, s.step}, nil, func() *tensor.Tensor {
		return kern.Slice(t, s.axis, s.start, s.stop, s.step)
	})
}

func (o sliceOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, scatterSlice(ct, out.inputs[0].Shape(), o.sliceSpec))
}

func (o sliceOp) JVP(out *Node, t []*Node) *Node { return Apply(o, t[0]) }

// Slice restricts x along axis to start, start+step, … before stop with
// Python semantics (negative indices count from the end, bounds are
// clamped, a negative step walks backwards; use math.MaxInt/math.MinInt for
// open ends). The result is a view. It panics if axis is out of range or
// step is 0.
func Slice(x *Node, axis, start, stop, step int) *Node {
	checkNodes("slice", x)
	ax := normAxis("slice", x, axis)
	if step == 0 {
		tensor.Fail("slice", "step is 0 (axis %d of operand %s)", axis, Describe(x))
	}
	n := x.Shape()[ax]
	if step == 1 && start == 0 && stop >= n {
		return x
	}
	return apply(sliceOp{sliceSpec{ax, start, stop, step}}, x)
}

// SliceWindow reports whether n is a Slice with step 1 of its one input
// and, if so, the axis and the first index of its window along it (the
// window's length is n's size on that axis). The reverse sweep uses it to
// assemble the cotangents of many slices of one node in one Concat
// instead of adding a whole-size scatter per slice.
func SliceWindow(n *Node) (axis, start int, ok bool) {
	o, isSlice := n.op.(sliceOp)
	if !isSlice || o.step != 1 {
		return 0, 0, false
	}
	d := n.inputs[0].Shape()[o.axis]
	start = o.start
	if start < 0 {
		start += d
	}
	return o.axis, min(max(start, 0), d), true
}

type scatterSliceOp struct {
	sliceSpec
	shape []int
}

func (scatterSliceOp) Name() string { return "scatter_slice" }

func (scatterSliceOp) Arity() int { return 1 }

func (o scatterSliceOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	dst := g.Alloc(in[0].DType(), o.shape...)
	kern.Copy(g.slice(dst, o.sliceSpec), in[0])
	return dst
}

func (o scatterSliceOp) check(in []*Node) {
	checkScatterSlice(in[0], o.shape, o.sliceSpec)
}

// checkScatterSlice fails unless src has the shape of slice s of shape.
func checkScatterSlice(src *Node, shape []int, s sliceSpec) {
	if len(shape) != src.Dim() || s.axis < 0 || s.axis >= len(shape) || s.step == 0 {
		tensor.Fail("scatter_slice", "cannot scatter operand %s into shape %s along axis %d with step %d",
			Describe(src), tensor.FormatShape(shape), s.axis, s.step)
	}
	want := tensor.Slice(tensor.Expand(tensor.Scalar(src.DType(), 0), shape...), s.axis, s.start, s.stop, s.step).Shape()
	if !slices.Equal(want, src.Shape()) {
		tensor.Fail("scatter_slice", "operand %s does not match slice %d:%d:%d of axis %d of shape %s (shape %s)",
			Describe(src), s.start, s.stop, s.step, s.axis, tensor.FormatShape(shape), tensor.FormatShape(want))
	}
}

func (o scatterSliceOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Apply(sliceOp{o.sliceSpec}, ct))
}

func (o scatterSliceOp) JVP(out *Node, t []*Node) *Node { return Apply(o, t[0]) }

// ScatterSlice returns a zero tensor of the given shape with src written
// into the slice start:stop:step along axis (the transpose of Slice). src
// must have the slice's shape.
func ScatterSlice(src *Node, shape []int, axis, start, stop, step int) *Node {
	checkNodes("scatter_slice", src)
	if axis < 0 && axis >= -len(shape) {
		axis += len(shape)
	}
	s := sliceSpec{axis, start, stop, step}
	checkScatterSlice(src, shape, s)
	return scatterSlice(src, append([]int(nil), shape...), s)
}

// scatterSlice keeps shape: callers pass a node's shape (never changed) or
// a copy. The caller has checked that src has the slice's shape (sliceOp's
// VJP: the cotangent has the slice's shape).
func scatterSlice(src *Node, shape []int, s sliceSpec) *Node {
	return apply(scatterSliceOp{s, shape}, src)
}

type concatOp struct{ axis int }

func (concatOp) Name() string { return "concat" }

func (concatOp) Arity() int { return -1 }

func (o concatOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	shape := append([]int(nil), in[0].Shape()...)
	shape[o.axis] = 0
	for _, t := range in {
		shape[o.axis] += t.Shape()[o.axis]
	}
	dst := g.AllocUninit(in[0].DType(), shape...)
	off := 0
	for _, t := range in {
		n := t.Shape()[o.axis]
		kern.Copy(g.slice(dst, sliceSpec{o.axis, off, off + n, 1}), t)
		off += n
	}
	return dst
}

func (o concatOp) check(in []*Node) { checkConcat("concat", o.axis, in) }

// checkConcat fails for op unless the xs share a dtype and agree on every
// axis but the non-negative axis ax, which they all have.
func checkConcat(op string, ax int, xs []*Node) {
	if ax < 0 || ax >= xs[0].Dim() {
		tensor.Fail(op, "axis %d out of range for operand %s", ax, Describe(xs[0]))
	}
	for _, x := range xs[1:] {
		ok := x.DType() == xs[0].DType() && x.Dim() == xs[0].Dim()
		for d := 0; ok && d < x.Dim(); d++ {
			ok = d == ax || x.Shape()[d] == xs[0].Shape()[d]
		}
		if !ok {
			tensor.Fail(op, "operands %s do not match along axes other than %d (or differ in dtype)", Describe(xs...), ax)
		}
	}
}

func (o concatOp) VJP(out, ct *Node, needs []bool) []*Node {
	res := make([]*Node, len(out.inputs))
	off := 0
	for i, x := range out.inputs {
		n := x.Shape()[o.axis]
		res[i] = Slice(ct, o.axis, off, off+n, 1)
		off += n
	}
	return res
}

func (o concatOp) JVP(out *Node, t []*Node) *Node {
	ts := make([]*Node, len(t))
	zero := true
	for i, ti := range t {
		if ti == nil {
			x := out.inputs[i]
			ti = out.g.Const(out.g.Alloc(x.DType(), x.Shape()...))
		} else {
			zero = false
		}
		ts[i] = ti
	}
	if zero {
		return nil
	}
	return Apply(o, ts...)
}

// Concat joins xs along axis; all other dimensions and the dtypes must
// agree. A single operand is returned as is.
func Concat(axis int, xs ...*Node) *Node {
	if len(xs) == 0 {
		tensor.Fail("concat", "no operands")
	}
	checkNodes("concat", xs...)
	ax := normAxis("concat", xs[0], axis)
	checkConcat("concat", ax, xs)
	if len(xs) == 1 {
		return xs[0]
	}
	return apply(concatOp{ax}, xs...)
}

// Stack joins xs, which must have equal shapes and dtypes, along a new axis
// at position axis of the result.
func Stack(axis int, xs ...*Node) *Node {
	if len(xs) == 0 {
		tensor.Fail("stack", "no operands")
	}
	checkNodes("stack", xs...)
	for _, x := range xs[1:] {
		if !slices.Equal(x.Shape(), xs[0].Shape()) {
			tensor.Fail("stack", "operands %s differ in shape", Describe(xs...))
		}
	}
	us := make([]*Node, len(xs))
	for i, x := range xs {
		us[i] = Unsqueeze(x, axis)
	}
	ax := axis
	if ax < 0 {
		ax += xs[0].Dim() + 1
	}
	if len(us) == 1 {
		return us[0]
	}
	checkConcat("stack", ax, us)
	return apply(concatOp{ax}, us...)
}

// Split cuts x along axis into consecutive pieces of the given sizes, which
// must add up to the axis' length. The pieces are views (Slices).
func Split(x *Node, axis int, sizes ...int) []*Node {
	checkNodes("split", x)
	ax := normAxis("split", x, axis)
	total := 0
	for _, s := range sizes {
		if s < 0 {
			tensor.Fail("split", "negative size in %v for operand %s", sizes, Describe(x))
		}
		total += s
	}
	if total != x.Shape()[ax] {
		tensor.Fail("split", "sizes %v do not add up to axis %d of operand %s", sizes, axis, Describe(x))
	}
	out := make([]*Node, len(sizes))
	off := 0
	for i, s := range sizes {
		out[i] = Slice(x, ax, off, off+s, 1)
		off += s
	}
	return out
}

// OneHot returns a constant node of shape (len(labels), classes) with a 1
// in column labels[i] of row i. It panics if a label is out of range.
func OneHot(g *Graph, dt tensor.DType, labels []int, classes int) *Node {
	checkGraph("OneHot", g)
	return g.Const(tensor.OneHot(dt, labels, classes))
}

type padOp struct {
	pads  [][2]int
	value float64
}

func (padOp) Name() string { return "pad" }

func (padOp) Arity() int { return 1 }

func (o padOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	x := in[0]
	shape := make([]int, x.Dim())
	for i, d := range x.Shape() {
		shape[i] = d + o.pads[i][0] + o.pads[i][1]
	}
	dst := g.AllocUninit(x.DType(), shape...)
	dst.Fill(o.value)
	inner := dst
	for i, p := range o.pads {
		if p != [2]int{} {
			inner = kern.Slice(inner, i, p[0], p[0]+x.Shape()[i], 1)
		}
	}
	kern.Copy(inner, x)
	return dst
}

func (o padOp) check(in []*Node) { checkPads(in[0], o.pads) }

// checkPads fails unless pads holds one non-negative pair per axis of x.
func checkPads(x *Node, pads [][2]int) {
	if len(pads) != x.Dim() {
		tensor.Fail("pad", "%d pad pairs for operand %s", len(pads), Describe(x))
	}
	for _, p := range pads {
		if p[0] < 0 || p[1] < 0 {
			tensor.Fail("pad", "negative padding %v for operand %s", pads, Describe(x))
		}
	}
}

func (o padOp) VJP(out, ct *Node, needs []bool) []*Node {
	x := out.inputs[0]
	for i, p := range o.pads {
		if p != [2]int{} {
			ct = Slice(ct, i, p[0], p[0]+x.Shape()[i], 1)
		}
	}
	return cotangents(out, ct)
}

func (o padOp) JVP(out *Node, t []*Node) *Node { return Apply(padOp{o.pads, 0}, t[0]) }

// Pad surrounds x with value: pads[i] = {before, after} elements along
// axis i. It panics unless there is one non-negative pair per axis.
func Pad(x *Node, pads [][2]int, value float64) *Node {
	checkNodes("pad", x)
	checkPads(x, pads)
	if slices.Equal(pads, make([][2]int, len(pads))) {
		return x
	}
	return apply(padOp{append([][2]int(nil), pads...), value}, x)
}
