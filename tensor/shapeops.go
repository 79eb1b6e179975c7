package tensor

import (
	"fmt"
	"slices"
)

// Shape operations that copy: joining, splitting, gathering, scattering and
// padding. Each returns a new contiguous tensor (ScatterAddTo writes into
// its destination).

// Concat joins tensors along an existing axis (negative counts from the
// end). All must have the same dtype, rank and sizes on the other axes. It
// panics, naming every operand's shape, if they do not.
func Concat(axis int, ts ...*Tensor) *Tensor {
	if len(ts) == 0 {
		Fail("Concat", "no tensors to concatenate")
	}
	sameDType("Concat", ts...)
	ax := normAxis("Concat", axis, ts[0].shape)
	shape := cloneInts(ts[0].shape)
	shape[ax] = 0
	for _, t := range ts {
		ok := t.Dim() == len(shape)
		for d := 0; ok && d < len(shape); d++ {
			ok = d == ax || t.shape[d] == shape[d]
		}
		if !ok {
			Fail("Concat", "shapes %s differ off axis %d", describe(ts...), axis)
		}
		shape[ax] += t.shape[ax]
	}
	return concatInto(New(ts[0].dtype, shape...), ax, ts)
}

// concatInto copies ts one after another along axis ax of out.
func concatInto(out *Tensor, ax int, ts []*Tensor) *Tensor {
	off := 0
	for _, t := range ts {
		n := t.shape[ax]
		if n > 0 {
			CopyInto(Slice(out, ax, off, off+n, 1), t)
		}
		off += n
	}
	return out
}

// Stack joins tensors of identical shape along a new axis, which becomes
// axis `axis` of the result (-1 appends it). It panics, naming every
// operand's shape, if the shapes or dtypes differ.
func Stack(axis int, ts ...*Tensor) *Tensor {
	if len(ts) == 0 {
		Fail("Stack", "no tensors to stack")
	}
	sameDType("Stack", ts...)
	for _, t := range ts[1:] {
		if !slices.Equal(t.shape, ts[0].shape) {
			Fail("Stack", "shapes %s differ", describe(ts...))
		}
	}
	nd := ts[0].Dim()
	ax := axis
	if ax < 0 {
		ax += nd + 1
	}
	if ax < 0 || ax > nd {
		Fail("Stack", "axis %d out of range for stacking tensors of shape %v", axis, fmtShape(ts[0].shape))
	}
	views := make([]*Tensor, len(ts))
	for i, t := range ts {
		views[i] = Unsqueeze(t, ax)
	}
	shape := cloneInts(views[0].shape)
	shape[ax] = len(ts)
	return concatInto(New(ts[0].dtype, shape...), ax, views)
}

// Split cuts a along axis into consecutive pieces of the given sizes, which
// must be non-negative and add up to the axis length. The pieces are
// copies. It panics otherwise, naming the sizes and a's shape.
func Split(a *Tensor, axis int, sizes ...int) []*Tensor {
	ax := normAxis("Split", axis, a.shape)
	total := 0
	for _, s := range sizes {
		if s < 0 {
			total = -1
			break
		}
		total += s
	}
	if total != a.shape[ax] {
		Fail("Split", "sizes %v do not partition axis %d (length %d) of shape %v", sizes, axis, a.shape[ax], fmtShape(a.shape))
	}
	out := make([]*Tensor, len(sizes))
	off := 0
	for i, s := range sizes {
		out[i] = Slice(a, ax, off, off+s, 1).Clone()
		off += s
	}
	return out
}

// IndexSelect gathers along axis: the result has len(idx) entries on that
// axis and entry i is a's entry idx[i] (indices may repeat). It panics,
// naming the index and the axis length, if an index is out of range.
func IndexSelect(a *Tensor, axis int, idx []int) *Tensor {
	return indexSelect("IndexSelect", nil, a, axis, idx)
}

// IndexSelectTo is IndexSelect writing into dst (nil allocates), which must
// have the result's shape and dtype and must not overlap a. It returns dst.
func IndexSelectTo(dst, a *Tensor, axis int, idx []int) *Tensor {
	return indexSelect("IndexSelectTo", dst, a, axis, idx)
}

func indexSelect(op string, dst, a *Tensor, axis int, idx []int) *Tensor {
	ax := normAxis(op, axis, a.shape)
	n := a.shape[ax]
	checkIndices(op, idx, n, ax, a.shape)
	var out *Tensor
	if dst == nil {
		shape := cloneInts(a.shape)
		shape[ax] = len(idx)
		out = NewOn(a.Device(), a.dtype, shape...)
	} else {
		ok := dst.dtype == a.dtype && len(dst.shape) == len(a.shape)
		for d := 0; ok && d < len(a.shape); d++ {
			ok = dst.shape[d] == a.shape[d] || (d == ax && dst.shape[d] == len(idx))
		}
		if !ok || dst.shape[ax] != len(idx) {
			Fail(op, "destination %s does not fit %d indices along axis %d of %s", describe(dst), len(idx), ax, describe(a))
		}
		if sharesStorage(dst, a) {
			Fail(op, "destination %s overlaps the source %s", describe(dst), describe(a))
		}
		out = dst
	}
	return indexSelectTrusted(out, a, ax, idx)
}

// indexSelectTrusted is IndexSelectTo after validation, the trusted kernel
// graph calls (internal/unchecked): 0 <= ax < a.Dim(), every index is in
// range, and out has a's dtype and the result's shape and does not overlap
// a.
func indexSelectTrusted(out, a *Tensor, ax int, idx []int) *Tensor {
	if out.dev != nil || a.dev != nil {
		gpuIndexSelect("IndexSelect", out, a, ax, idx)
		return out
	}
	n := a.shape[ax]
	outer, inner := shapeSize(a.shape[:ax]), shapeSize(a.shape[ax+1:])
	if out.Size() == 0 {
		return out
	}
	res := out
	if !out.IsContiguous() {
		res = New(a.dtype, out.shape...)
	}
	c := a.Contiguous()
	if a.dtype == Float32 {
		gatherT(storage[float32](res)[res.offset:], storage[float32](c)[c.offset:c.offset+c.Size()], outer, n, inner, idx)
	} else {
		gatherT(storage[float64](res)[res.offset:], storage[float64](c)[c.offset:c.offset+c.Size()], outer, n, inner, idx)
	}
	if res != out {
		CopyInto(out, res)
	}
	return out
}

// gatherT copies rows idx of x, laid out as (outer, n, inner), into dst,
// laid out as (outer, len(idx), inner).
func gatherT[T Float](dst, x []T, outer, n, inner int, idx []int) {
	k := len(idx)
	for o := 0; o < outer; o++ {
		for i, j := range idx {
			d := (o*k + i) * inner
			s := (o*n + j) * inner
			copy(dst[d:d+inner], x[s:s+inner])
		}
	}
}

// ScatterAdd is the transpose (vector-Jacobian product) of IndexSelect: it
// returns a zero tensor with src's shape except `size` entries along axis,
// into which src's entry i along axis is added at position idx[i]
// (repeated indices accumulate). len(idx) must equal src's length along
// axis. It panics, naming the index and size, if an index is out of range.
func ScatterAdd(src *Tensor, axis int, idx []int, size int) *Tensor {
	ax := normAxis("ScatterAdd", axis, src.shape)
	if size < 0 {
		Fail("ScatterAdd", "negative size %d", size)
	}
	shape := cloneInts(src.shape)
	shape[ax] = size
	return scatterAdd("ScatterAdd", NewOn(src.Device(), src.dtype, shape...), src, ax, idx)
}

// ScatterAddTo adds src into dst the way ScatterAdd does, accumulating onto
// dst's existing contents (it does not zero dst first, so gradients can be
// accumulated in place): dst[..., idx[i], ...] += src[..., i, ...]. dst must
// have src's dtype and shape except along axis. It returns dst.
func ScatterAddTo(dst, src *Tensor, axis int, idx []int) *Tensor {
	ax := normAxis("ScatterAddTo", axis, src.shape)
	sameDType("ScatterAddTo", dst, src)
	ok := dst.Dim() == src.Dim()
	for d := 0; ok && d < dst.Dim(); d++ {
		ok = d == ax || dst.shape[d] == src.shape[d]
	}
	if !ok {
		Fail("ScatterAddTo", "destination %v and source %v differ off axis %d", fmtShape(dst.shape), fmtShape(src.shape), axis)
	}
	// Every overlap is wrong here, even the identical view: the kernel
	// reads source elements that earlier indices have already updated.
	if sharesStorage(dst, src) {
		Fail("ScatterAddTo", "destination %v shares storage with the source %v; use a separate destination", describe(dst), describe(src))
	}
	checkDst("ScatterAddTo", dst)
	return scatterAdd("ScatterAddTo", dst, src, ax, idx)
}

func scatterAdd(op string, dst, src *Tensor, ax int, idx []int) *Tensor {
	if len(idx) != src.shape[ax] {
		Fail(op, "%d indices for axis %d of length %d in source shape %v", len(idx), ax, src.shape[ax], fmtShape(src.shape))
	}
	checkIndices(op, idx, dst.shape[ax], ax, dst.shape)
	return scatterAddTrusted(dst, src, ax, idx)
}

// scatterAddTrusted is ScatterAddTo after validation, the trusted kernel
// graph calls (internal/unchecked): dst has src's dtype and shape except
// along ax, len(idx) is src's length along ax, every index is in range for
// dst, and dst does not overlap src.
func scatterAddTrusted(dst, src *Tensor, ax int, idx []int) *Tensor {
	if dst.dev != nil || src.dev != nil {
		gpuScatterAdd("ScatterAdd", dst, src, ax, idx)
		return dst
	}
	size := dst.shape[ax]
	if src.Size() == 0 {
		return dst
	}
	out := dst
	if !dst.IsContiguous() {
		out = dst.Clone()
	}
	c := src.Contiguous()
	outer, inner := shapeSize(src.shape[:ax]), shapeSize(src.shape[ax+1:])
	if src.dtype == Float32 {
		scatterT(storage[float32](out)[out.offset:out.offset+out.Size()], storage[float32](c)[c.offset:c.offset+c.Size()], outer, size, inner, idx)
	} else {
		scatterT(storage[float64](out)[out.offset:out.offset+out.Size()], storage[float64](c)[c.offset:c.offset+c.Size()], outer, size, inner, idx)
	}
	if out != dst {
		CopyInto(dst, out)
	}
	return dst
}

// scatterT adds src, laid out as (outer, len(idx), inner), into rows idx of
// dst, laid out as (outer, size, inner).
func scatterT[T Float](dst, src []T, outer, size, inner int, idx []int) {
	k := len(idx)
	for o := 0; o < outer; o++ {
		for i, j := range idx {
			s := src[(o*k+i)*inner : (o*k+i+1)*inner]
			d := dst[(o*size+j)*inner : (o*size+j+1)*inner]
			for m := range d {
				d[m] += s[m]
			}
		}
	}
}

// checkIndices panics for op if some index is outside [0, n).
func checkIndices(op string, idx []int, n, ax int, shape []int) {
	for i, j := range idx {
		if j < 0 || j >= n {
			Fail(op, "index %d (position %d) out of range for axis %d of size %d in shape %v", j, i, ax, n, fmtShape(shape))
		}
	}
}

// OneHot returns a (len(labels), classes) tensor with a 1 at column
// labels[i] of row i and 0 elsewhere. It panics if a label is outside
// [0, classes).
func OneHot(dt DType, labels []int, classes int) *Tensor {
	if classes < 0 {
		Fail("OneHot", "negative number of classes %d", classes)
	}
	checkShape("OneHot", []int{len(labels), classes})
	out := New(dt, len(labels), classes)
	for i, l := range labels {
		if l < 0 || l >= classes {
			Fail("OneHot", "label %d (position %d) out of range for %d classes", l, i, classes)
		}
		out.setFlat(i*classes+l, 1)
	}
	return out
}

// Pad returns a surrounded by constant value: pads[d] = {before, after}
// entries are added on axis d. len(pads) must equal a.Dim() and every pad
// must be non-negative.
func Pad(a *Tensor, pads [][2]int, value float64) *Tensor {
	if len(pads) != a.Dim() {
		Fail("Pad", "%d pads for tensor of shape %v", len(pads), fmtShape(a.shape))
	}
	shape := cloneInts(a.shape)
	for d, p := range pads {
		if p[0] < 0 || p[1] < 0 {
			Fail("Pad", "negative padding %v on axis %d of shape %v", fmtPads(pads), d, fmtShape(a.shape))
		}
		// Bounded pads keep the sum below MaxInt; checkShape then caps it.
		if p[0] > maxElements || p[1] > maxElements {
			Fail("Pad", "padding %v on axis %d of shape %v exceeds %d", fmtPads(pads), d, fmtShape(a.shape), maxElements)
		}
		shape[d] += p[0] + p[1]
	}
	checkShape("Pad", shape)
	out := Full(a.dtype, value, shape...)
	if a.Size() == 0 {
		return out
	}
	inner := out
	for d, p := range pads {
		inner = Slice(inner, d, p[0], p[0]+a.shape[d], 1)
	}
	CopyInto(inner, a)
	return out
}

func fmtPads(pads [][2]int) string { return fmt.Sprint(pads) }
