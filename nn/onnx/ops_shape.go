package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// reshape gives v the shape s, on the host or in the graph.
func reshape(v value, s ...int) value {
	if v.n != nil {
		return value{n: graph.Reshape(v.n, s...)}
	}
	return hostValue(tensor.Reshape(v.h.Contiguous(), s...), v.boolean)
}

// prod multiplies sizes.
func prod(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// maxElements bounds the tensors that shape arithmetic may ask for
// (ConstantOfShape, Expand, Tile, Range, Pad): 2²⁸ elements, 1 GiB of
// float32, so that a corrupt file fails instead of exhausting memory.
const maxElements = 1 << 28

// sized fails unless every size is non-negative and there are at most
// maxElements elements; it returns shape.
func sized(shape []int) []int {
	n := 1
	for _, d := range shape {
		if d < 0 || (d > 0 && n > maxElements/d) {
			fail("shape %v is negative or larger than %d elements", shape, maxElements)
		}
		n *= d
	}
	return shape
}

// runReshape maps Reshape: 0 copies the input's size (unless allowzero),
// -1 takes what is left.
func runReshape(c *call, n *node, in []value) []value {
	x, want := in[0], intsOf(in[1])
	xs := x.shape()
	out := make([]int, len(want))
	infer := -1
	for i, d := range want {
		switch {
		case d == 0 && n.int("allowzero", 0) == 0:
			if i >= len(xs) {
				fail("shape %v copies axis %d of an input of shape %s", want, i, shapeOf(xs))
			}
			out[i] = xs[i]
		case d == -1 && infer < 0:
			infer = i
			out[i] = 1
		case d < 0:
			fail("shape %v has a size %d", want, d)
		default:
			out[i] = d
		}
	}
	if infer >= 0 {
		if p := prod(out); p == 0 || prod(xs)%p != 0 {
			fail("cannot reshape %s to %v", shapeOf(xs), want)
		} else {
			out[infer] = prod(xs) / p
		}
	}
	if prod(out) != prod(xs) {
		fail("cannot reshape %s (%d elements) to %s", shapeOf(xs), prod(xs), shapeOf(out))
	}
	return []value{reshape(x, out...)}
}

// runFlatten maps Flatten: the axes before axis and from it on, each
// folded into one.
func runFlatten(c *call, n *node, in []value) []value {
	s := in[0].shape()
	a := n.int("axis", 1)
	if a < 0 {
		a += len(s)
	}
	if a < 0 || a > len(s) {
		fail("axis %d is out of range for shape %s", n.int("axis", 1), shapeOf(s))
	}
	return []value{reshape(in[0], prod(s[:a]), prod(s[a:]))}
}

// runTranspose maps Transpose (default: the axes reversed).
func runTranspose(c *call, n *node, in []value) []value {
	r := len(in[0].shape())
	perm := n.ints("perm")
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if in[0].n != nil {
		return []value{{n: graph.Permute(in[0].n, perm...)}}
	}
	return []value{hostValue(tensor.Permute(in[0].h, perm...).Contiguous(), in[0].boolean)}
}

// runConcat maps Concat, on the host when every input is host data.
func runConcat(c *call, n *node, in []value) []value {
	a := axis(n.int("axis", 0), len(in[0].shape()))
	allHost := true
	for _, v := range in {
		allHost = allHost && v.h != nil
	}
	if allHost {
		ts := make([]*tensor.Tensor, len(in))
		for i, v := range in {
			ts[i] = v.h
		}
		return []value{hostValue(tensor.Concat(a, ts...), in[0].boolean)}
	}
	xs := make([]*graph.Node, len(in))
	for i, v := range in {
		xs[i] = c.node(v)
	}
	return []value{{n: graph.Concat(a, xs...)}}
}

// runSplit maps Split with sizes from its second input, or equal parts,
// one per output.
func runSplit(c *call, n *node, in []value) []value {
	s := in[0].shape()
	a := axis(n.int("axis", 0), len(s))
	var sizes []int
	if len(in) > 1 {
		sizes = intsOf(in[1])
	} else {
		k := len(n.out)
		if s[a]%k != 0 {
			fail("axis %d of %s does not split into %d equal parts", a, shapeOf(s), k)
		}
		for range k {
			sizes = append(sizes, s[a]/k)
		}
	}
	var out []value
	if in[0].n != nil {
		for _, p := range graph.Split(in[0].n, a, sizes...) {
			out = append(out, value{n: p})
		}
		return out
	}
	for _, p := range tensor.Split(in[0].h, a, sizes...) {
		out = append(out, hostValue(p.Contiguous(), in[0].boolean))
	}
	return out
}

// runSlice maps Slice(data, starts, ends, axes, steps) axis by axis with
// Python's clamping, which is ONNX's.
func runSlice(c *call, n *node, in []value) []value {
	x := in[0]
	r := len(x.shape())
	starts, ends := intsOf(in[1]), intsOf(in[2])
	axes := make([]int, len(starts))
	for i := range axes {
		axes[i] = i
	}
	if len(in) > 3 && (in[3].h != nil || in[3].n != nil) {
		axes = intsOf(in[3])
	}
	steps := slices.Repeat([]int{1}, len(starts))
	if len(in) > 4 && (in[4].h != nil || in[4].n != nil) {
		steps = intsOf(in[4])
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || len(steps) != len(starts) {
		fail("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	for i, a := range axes {
		a = axis(a, r)
		if steps[i] == 0 {
			fail("step 0 on axis %d", a)
		}
		if x.n != nil {
			x = value{n: graph.Slice(x.n, a, starts[i], ends[i], steps[i])}
		} else {
			x = hostValue(tensor.Slice(x.h, a, starts[i], ends[i], steps[i]).Contiguous(), x.boolean)
		}
	}
	return []value{x}
}

// runGather maps Gather: IndexSelect with the indices flattened, then the
// indices' shape put in place of the axis.
func runGather(c *call, n *node, in []value) []value {
	s := in[0].shape()
	a := axis(n.int("axis", 0), len(s))
	idx := intsOf(in[1])
	for i, k := range idx {
		if k < -s[a] || k >= s[a] {
			fail("index %d is out of range for axis %d of %s", k, a, shapeOf(s))
		}
		if k < 0 {
			idx[i] = k + s[a]
		}
	}
	out := slices.Concat(s[:a], in[1].shape(), s[a+1:])
	if in[0].n != nil {
		return []value{{n: graph.Reshape(graph.IndexSelect(in[0].n, a, idx), out...)}}
	}
	return []value{hostValue(tensor.Reshape(tensor.IndexSelect(in[0].h, a, idx).Contiguous(), out...), in[0].boolean)}
}

// runUnsqueeze maps Unsqueeze with its axes input (opset 13).
func runUnsqueeze(c *call, n *node, in []value) []value {
	s := in[0].shape()
	axes := intsOf(in[1])
	r := len(s) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		a = axis(a, r)
		if ins[a] {
			fail("axis %d repeats in %v", a, axes)
		}
		ins[a] = true
	}
	out, k := make([]int, r), 0
	for i := range out {
		if ins[i] {
			out[i] = 1
		} else {
			out[i] = s[k]
			k++
		}
	}
	return []value{reshape(in[0], out...)}
}

// runSqueeze maps Squeeze: the given axes, or every axis of size 1.
func runSqueeze(c *call, n *node, in []value) []value {
	s := in[0].shape()
	drop := make([]bool, len(s))
	if len(in) > 1 {
		for _, a := range intsOf(in[1]) {
			a = axis(a, len(s))
			if s[a] != 1 {
				fail("axis %d of %s is not of size 1", a, shapeOf(s))
			}
			drop[a] = true
		}
	} else {
		for i, d := range s {
			drop[i] = d == 1
		}
	}
	var out []int
	for i, d := range s {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return []value{reshape(in[0], out...)}
}

// runExpand maps Expand: broadcast of the input and the shape together.
func runExpand(c *call, n *node, in []value) []value {
	shape := sized(tensor.BroadcastShapes("Expand", in[0].shape(), intsOf(in[1])))
	if in[0].n != nil {
		x := in[0].n
		if x.Dim() < len(shape) {
			x = graph.Reshape(x, slices.Concat(slices.Repeat([]int{1}, len(shape)-x.Dim()), x.Shape())...)
		}
		return []value{{n: graph.BroadcastTo(x, shape...)}}
	}
	return []value{hostValue(tensor.Expand(in[0].h, shape...).Contiguous(), in[0].boolean)}
}

// runTile maps Tile: each axis repeated as a block, by broadcasting a
// new axis before it.
func runTile(c *call, n *node, in []value) []value {
	s, reps := in[0].shape(), intsOf(in[1])
	if len(reps) != len(s) {
		fail("repeats %v for an input of shape %s", reps, shapeOf(s))
	}
	var mid, big, out []int
	for i, d := range sized(s) {
		mid = append(mid, 1, d)
		big = append(big, reps[i], d)
		out = append(out, reps[i]*d)
	}
	sized(big)
	x := reshape(in[0], mid...)
	if x.n != nil {
		return []value{{n: graph.Reshape(graph.BroadcastTo(x.n, big...), out...)}}
	}
	return []value{hostValue(tensor.Reshape(tensor.Expand(x.h, big...).Contiguous(), out...), x.boolean)}
}

// runShape maps Shape, with opset 15's start and end.
func runShape(c *call, n *node, in []value) []value {
	s := in[0].shape()
	r := len(s)
	lo, hi := n.int("start", 0), n.int("end", r)
	if lo < 0 {
		lo += r
	}
	if hi < 0 {
		hi += r
	}
	lo, hi = min(max(lo, 0), r), min(max(hi, 0), r)
	v := make([]float64, 0, r)
	for _, d := range s[lo:max(lo, hi)] {
		v = append(v, float64(d))
	}
	return []value{hostValue(tensor.FromFloat64s(v, len(v)), false)}
}

// runSize maps Size.
func runSize(c *call, n *node, in []value) []value {
	return []value{hostValue(tensor.Scalar(tensor.Float64, float64(prod(in[0].shape()))), false)}
}

// runConstantOfShape maps ConstantOfShape: a float node or host integers
// filled with the value attribute (float 0 by default).
func runConstantOfShape(c *call, n *node, in []value) []value {
	shape := sized(intsOf(in[0]))
	v, code := 0.0, int32(tFloat)
	if a := n.attr["value"]; a != nil {
		k, err := decodeTensor(a.GetT(), "")
		if err != nil || (k.f == nil && k.h == nil) {
			fail("value: %v", err)
		}
		code = a.GetT().GetDataType()
		t := k.f
		if t == nil {
			t = k.h
		}
		if t.Size() != 1 {
			fail("value holds %d elements, want 1", t.Size())
		}
		v = t.Values()[0]
	}
	if isFloat(code) {
		return []value{{n: c.g.Const(tensor.Full(floatDType(code), v, shape...))}}
	}
	return []value{hostValue(tensor.Full(tensor.Float64, v, shape...), code == tBool)}
}

// runRange maps Range(start, limit, delta).
func runRange(c *call, n *node, in []value) []value {
	start, limit, delta := host(in[0]).Item(), host(in[1]).Item(), host(in[2]).Item()
	if delta == 0 {
		fail("delta 0")
	}
	steps := math.Ceil((limit - start) / delta)
	if !(steps < maxElements) {
		fail("range(%g, %g, %g) is too long", start, limit, delta)
	}
	k := max(int(steps), 0)
	v := make([]float64, k)
	for i := range v {
		v[i] = start + float64(i)*delta
	}
	t := tensor.FromFloat64s(v, k)
	if in[0].n != nil {
		return []value{{n: c.g.Const(t.Cast(in[0].n.DType()))}}
	}
	return []value{hostValue(t, false)}
}

// runPad maps Pad in constant mode: pads (begins, then ends) and an
// optional constant value.
func runPad(c *call, n *node, in []value) []value {
	s := in[0].shape()
	p := intsOf(in[1])
	if len(p) != 2*len(s) {
		fail("%d pads for an input of rank %d", len(p), len(s))
	}
	pairs := make([][2]int, len(s))
	for i := range s {
		pairs[i] = [2]int{p[i], p[i+len(s)]}
		if p[i] < 0 || p[i+len(s)] < 0 {
			fail("negative pads %v are not imported", p)
		}
	}
	out := make([]int, len(s))
	for i := range s {
		out[i] = s[i] + pairs[i][0] + pairs[i][1]
	}
	sized(out)
	v := 0.0
	if len(in) > 2 && (in[2].n != nil || in[2].h != nil) {
		v = host(in[2]).Item()
	}
	if in[0].h != nil {
		return []value{hostValue(tensor.Pad(in[0].h, pairs, v), in[0].boolean)}
	}
	return []value{{n: graph.Pad(in[0].n, pairs, v)}}
}

// checkConstant decodes Constant's value, in any of its forms, once when
// the model is read.
func checkConstant(n *node) error {
	if len(n.attr) != 1 {
		return fmt.Errorf("want exactly one value attribute, got %d", len(n.attr))
	}
	for name, a := range n.attr {
		switch name {
		case "value":
			k, err := decodeTensor(a.GetT(), "")
			if err != nil {
				return err
			}
			n.konst = k
		case "value_float":
			n.konst.f = tensor.Scalar(tensor.Float32, float64(a.GetF()))
		case "value_floats":
			v := make([]float64, len(a.GetFloats()))
			for i, f := range a.GetFloats() {
				v[i] = float64(f)
			}
			n.konst.f = tensor.FromValues(tensor.Float32, v, len(v))
		case "value_int":
			n.konst.h = tensor.Scalar(tensor.Float64, float64(a.GetI()))
		case "value_ints":
			v := make([]float64, len(a.GetInts()))
			for i, f := range a.GetInts() {
				v[i] = float64(f)
			}
			n.konst.h = tensor.FromFloat64s(v, len(v))
		}
	}
	return nil
}

// runConstant maps Constant: a constant node for floats, host data for
// integers and booleans.
func runConstant(c *call, n *node, in []value) []value {
	if n.konst.f != nil {
		return []value{{n: c.g.Const(n.konst.f)}}
	}
	return []value{hostValue(n.konst.h, n.konst.boolean)}
}
