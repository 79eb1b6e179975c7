package tensor

// This file holds the view operations: each returns a Tensor that shares
// storage with its input (only Reshape may copy, when the strides cannot
// express the new shape). Writing through a view writes the original.

// Reshape returns a tensor with the same elements in row-major order and the
// given shape. One dimension may be -1; it is inferred from the size.
//
// The result is a view sharing a's storage whenever a's strides can express
// the new shape (always for contiguous tensors, and for many transposed or
// sliced ones, following NumPy's no-copy rule). Otherwise, for example
// flattening a transposed matrix, Reshape returns a contiguous copy; callers
// that need to know can compare Offset/storage or call Contiguous first.
// It panics if the shape is invalid or its size differs from a's.
func Reshape(a *Tensor, shape ...int) *Tensor {
	return reshapeTrusted(a, resolveShape("Reshape", a, shape))
}

// reshapeTrusted is Reshape after validation, the trusted kernel graph
// calls (internal/unchecked): shape has no -1 and a's size. The result
// keeps shape.
func reshapeTrusted(a *Tensor, shape []int) *Tensor {
	if strides, ok := reshapeStrides(a.shape, a.strides, shape); ok {
		v := *a
		v.shape = shape
		v.strides = strides
		return &v
	}
	c := a.Clone()
	c.shape = shape
	c.strides = rowMajorStrides(shape)
	return c
}

// resolveShape fills in a -1 and checks that shape has a's size.
func resolveShape(op string, a *Tensor, shape []int) []int {
	shape = cloneInts(shape)
	infer := -1
	known := 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			Fail(op, "invalid shape %v for tensor of shape %v (only one -1 allowed, no other negative sizes)", shape, fmtShape(a.shape))
		default:
			known *= d
		}
	}
	n := a.Size()
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			Fail(op, "cannot reshape tensor of shape %v (size %d) to %v", fmtShape(a.shape), n, shape)
		}
		shape[infer] = n / known
	}
	// checkShape, not shapeSize: a product that wraps around could match n.
	if size := checkShape(op, shape); size != n {
		Fail(op, "cannot reshape tensor of shape %v (size %d) to %v (size %d)", fmtShape(a.shape), n, fmtShape(shape), size)
	}
	return shape
}

// reshapeStrides computes strides that present the storage addressed by
// (oldShape, oldStrides) with newShape in row-major order, or reports false
// when no such strides exist. It groups old and new dimensions into runs of
// equal total size; each run of old dimensions must be contiguous within
// itself (NumPy's _attempt_nocopy_reshape).
func reshapeStrides(oldShape, oldStrides, newShape []int) ([]int, bool) {
	newStrides := make([]int, len(newShape))
	if shapeSize(newShape) == 0 {
		return rowMajorStrides(newShape), true
	}
	var od, os []int // old dims without size-1 axes
	for i, d := range oldShape {
		if d != 1 {
			od = append(od, d)
			os = append(os, oldStrides[i])
		}
	}
	oi, oj := 0, 1
	ni, nj := 0, 1
	for ni < len(newShape) && oi < len(od) {
		np, op := newShape[ni], od[oi]
		for np != op {
			if np < op {
				np *= newShape[nj]
				nj++
			} else {
				op *= od[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if os[k] != od[k+1]*os[k+1] {
				return nil, false
			}
		}
		newStrides[nj-1] = os[oj-1]
		for k := nj - 1; k > ni; k-- {
			newStrides[k-1] = newStrides[k] * newShape[k]
		}
		ni, nj = nj, nj+1
		oi, oj = oj, oj+1
	}
	for k := ni; k < len(newShape); k++ { // trailing size-1 dims
		newStrides[k] = 1
	}
	return newStrides, true
}

// Permute returns a view with the axes reordered: axis i of the result is
// axis perm[i] of a. Negative entries count from the end. It panics unless
// perm is a permutation of a's axes.
func Permute(a *Tensor, perm ...int) *Tensor {
	nd := a.Dim()
	if len(perm) != nd {
		Fail("Permute", "permutation %v has %d entries for tensor of shape %v", perm, len(perm), fmtShape(a.shape))
	}
	seen := make([]bool, nd)
	p := make([]int, nd)
	for i, q := range perm {
		if q < 0 {
			q += nd
		}
		if q < 0 || q >= nd || seen[q] {
			Fail("Permute", "%v is not a permutation of the axes of shape %v", perm, fmtShape(a.shape))
		}
		seen[q] = true
		p[i] = q
	}
	return permuteTrusted(a, p)
}

// permuteTrusted is Permute after validation, the trusted kernel graph
// calls (internal/unchecked): perm is a permutation of a's axes without
// negative entries.
func permuteTrusted(a *Tensor, perm []int) *Tensor {
	v := *a
	v.shape = make([]int, len(perm))
	v.strides = make([]int, len(perm))
	for i, q := range perm {
		v.shape[i] = a.shape[q]
		v.strides[i] = a.strides[q]
	}
	return &v
}

// Transpose returns a view with the last two axes swapped (the matrix
// transpose, batched over leading axes). It panics for fewer than 2 axes.
func Transpose(a *Tensor) *Tensor {
	nd := a.Dim()
	if nd < 2 {
		Fail("Transpose", "tensor of shape %v has fewer than 2 axes", fmtShape(a.shape))
	}
	v := *a
	v.shape = cloneInts(a.shape)
	v.strides = cloneInts(a.strides)
	v.shape[nd-2], v.shape[nd-1] = v.shape[nd-1], v.shape[nd-2]
	v.strides[nd-2], v.strides[nd-1] = v.strides[nd-1], v.strides[nd-2]
	return &v
}

// Expand returns a read-mostly view of a broadcast to shape (NumPy
// broadcast_to): size-1 axes are repeated with stride 0 and new leading
// axes may be added. Writing through the view writes every alias of an
// element. It panics if a's shape does not broadcast to shape.
func Expand(a *Tensor, shape ...int) *Tensor {
	checkShape("Expand", shape)
	a.broadcastTo("Expand", shape)
	return expandTrusted(a, shape)
}

// expandTrusted is Expand after validation, the trusted kernel graph calls
// (internal/unchecked): a's shape broadcasts to shape.
func expandTrusted(a *Tensor, shape []int) *Tensor {
	strides := make([]int, len(shape))
	lead := len(shape) - len(a.shape)
	for i := lead; i < len(shape); i++ {
		if a.shape[i-lead] == shape[i] {
			strides[i] = a.strides[i-lead]
		}
	}
	v := *a
	v.shape = cloneInts(shape)
	v.strides = strides
	return &v
}

// Squeeze returns a view without the given axes, which must have size 1.
// With no axes it drops every size-1 axis. It panics if an axis is out of
// range, repeated, or not of size 1.
func Squeeze(a *Tensor, axes ...int) *Tensor {
	drop := make([]bool, a.Dim())
	if len(axes) == 0 {
		for i, d := range a.shape {
			drop[i] = d == 1
		}
	} else {
		for _, ax := range normAxes("Squeeze", axes, a.shape) {
			if a.shape[ax] != 1 {
				Fail("Squeeze", "axis %d has size %d, not 1, in shape %v", ax, a.shape[ax], fmtShape(a.shape))
			}
			drop[ax] = true
		}
	}
	v := *a
	v.shape = make([]int, 0, a.Dim())
	v.strides = make([]int, 0, a.Dim())
	for i, d := range a.shape {
		if !drop[i] {
			v.shape = append(v.shape, d)
			v.strides = append(v.strides, a.strides[i])
		}
	}
	return &v
}

// Unsqueeze returns a view with a new axis of size 1 inserted at position
// axis of the result (so -1 appends a trailing axis). It panics unless
// -a.Dim()-1 <= axis <= a.Dim().
func Unsqueeze(a *Tensor, axis int) *Tensor {
	nd := a.Dim()
	ax := axis
	if ax < 0 {
		ax += nd + 1
	}
	if ax < 0 || ax > nd {
		Fail("Unsqueeze", "axis %d out of range for new axis of shape %v", axis, fmtShape(a.shape))
	}
	// Any stride works for a size-1 axis; pick the contiguous one.
	stride := 1
	if ax < nd {
		stride = a.strides[ax] * a.shape[ax]
	}
	v := *a
	v.shape = make([]int, 0, nd+1)
	v.strides = make([]int, 0, nd+1)
	v.shape = append(append(append(v.shape, a.shape[:ax]...), 1), a.shape[ax:]...)
	v.strides = append(append(append(v.strides, a.strides[:ax]...), stride), a.strides[ax:]...)
	return &v
}

// Slice returns a view of a restricted along axis to the indices
// start, start+step, ... before stop, with Python semantics: negative
// indices count from the end, out-of-range bounds are clamped, and a
// negative step walks backwards. Use math.MaxInt / math.MinInt for an open
// end, e.g. Slice(a, 0, math.MaxInt, math.MinInt, -1) reverses axis 0.
// It panics if axis is out of range or step is 0.
func Slice(a *Tensor, axis, start, stop, step int) *Tensor {
	ax := normAxis("Slice", axis, a.shape)
	if step == 0 {
		Fail("Slice", "step is 0 (axis %d of shape %v)", axis, fmtShape(a.shape))
	}
	return sliceTrusted(a, ax, start, stop, step)
}

// sliceTrusted is Slice after validation, the trusted kernel graph calls
// (internal/unchecked): 0 <= ax < a.Dim() and step != 0.
func sliceTrusted(a *Tensor, ax, start, stop, step int) *Tensor {
	n := a.shape[ax]
	lo, hi := 0, n // clamping bounds for a positive step
	if step < 0 {
		lo, hi = -1, n-1
	}
	clamp := func(i int) int {
		if i < 0 {
			i += n // cannot overflow: n >= 0 and i < 0
			if i < lo {
				i = lo
			}
		} else if i > hi {
			i = hi
		}
		return i
	}
	start, stop = clamp(start), clamp(stop)
	length := 0
	if step > 0 && stop > start {
		length = (stop-start-1)/step + 1
	} else if step < 0 && start > stop {
		length = (start-stop-1)/(-step) + 1
	}
	v := *a
	v.shape = cloneInts(a.shape)
	v.strides = cloneInts(a.strides)
	v.shape[ax] = length
	v.strides[ax] = a.strides[ax] * step
	if length > 0 {
		v.offset = a.offset + start*a.strides[ax]
	}
	return &v
}

// normAxis resolves a possibly negative axis against shape, panicking for
// op when it is out of range.
func normAxis(op string, axis int, shape []int) int {
	nd := len(shape)
	ax := axis
	if ax < 0 {
		ax += nd
	}
	if ax < 0 || ax >= nd {
		Fail(op, "axis %d out of range for shape %v", axis, fmtShape(shape))
	}
	return ax
}

// normAxes resolves possibly negative axes against shape, panicking for op
// when one is out of range or repeated. nil means all axes.
func normAxes(op string, axes []int, shape []int) []int {
	nd := len(shape)
	if axes == nil {
		out := make([]int, nd)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, len(axes))
	var seen uint64 // rank is small; fall back to a slice beyond 64 axes
	var seenBig []bool
	if nd > 64 {
		seenBig = make([]bool, nd)
	}
	for i, a := range axes {
		ax := a
		if ax < 0 {
			ax += nd
		}
		if ax < 0 || ax >= nd {
			Fail(op, "axis %d out of range in axes %v for shape %v", a, cloneInts(axes), fmtShape(shape))
		}
		dup := false
		if seenBig != nil {
			dup, seenBig[ax] = seenBig[ax], true
		} else {
			dup = seen&(1<<ax) != 0
			seen |= 1 << ax
		}
		if dup {
			Fail(op, "axis %d repeated in axes %v for shape %v", a, cloneInts(axes), fmtShape(shape))
		}
		out[i] = ax
	}
	return out
}
