package onnx

import (
	"fmt"
	"runtime"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// value is what flows along an edge of the imported graph: float data as a
// graph node, so gradients reach the parameters and inputs, or integers and
// booleans computed in Go (shapes, indices, masks), which have no
// gradient. Because the graph runs as it is built, shapes are known values
// and all of the exporter's shape arithmetic is done on the host.
type value struct {
	n       *graph.Node
	h       *tensor.Tensor // float64 holding integers, or 0/1 for booleans
	boolean bool
}

// call is the state of one Call: the graph, the model and the float dtype.
type call struct {
	g  *graph.Graph
	m  *Model
	dt tensor.DType
}

// node returns v as a float node, making a constant of host data.
func (c *call) node(v value) *graph.Node {
	if v.n != nil {
		return v.n
	}
	return c.g.Const(v.h.Cast(c.dt))
}

// host returns v's values on the host; a float node's values are read
// without a gradient (comparisons, casts to integers).
func host(v value) *tensor.Tensor {
	if v.h != nil {
		return v.h
	}
	return v.n.Value().Cast(tensor.Float64)
}

// intsOf returns v's values as ints (shape vectors, indices, axes).
func intsOf(v value) []int {
	t := host(v)
	out := make([]int, t.Size())
	for i, x := range t.Values() {
		out[i] = clampInt(x)
	}
	return out
}

// hostValue wraps a float64 tensor of integers or booleans.
func hostValue(t *tensor.Tensor, boolean bool) value { return value{h: t, boolean: boolean} }

// shape returns v's shape.
func (v value) shape() []int {
	if v.n != nil {
		return v.n.Shape()
	}
	return v.h.Shape()
}

// Call applies the model to inputs, one node per graph input in the order of
// Inputs, and returns one node per graph output. Float inputs must have
// the dtype of the file (float32 for PyTorch exports); integer and boolean
// inputs are given as float nodes holding their values and are read
// without gradients. The model's parameters enter g through nn.Param.Node,
// so nn.Gradients and optimisers work on them, and every output
// differentiates with respect to the parameters and float inputs by the
// rules of the graph ops the operators map to. Integer and boolean outputs
// come back as float64 constants.
//
// Call panics with a *tensor.Error for a wrong number of inputs or a nil
// one. An input whose shape differs from a fixed size in the file, or with
// which a node fails (shapes that do not fit a Reshape, say), is an error
// naming the node and its operator; nodes already built stay in g.
func (m *Model) Call(g *graph.Graph, inputs ...*graph.Node) (outs []*graph.Node, err error) {
	if g == nil {
		tensor.Fail("onnx.Model.Call", "nil graph")
	}
	if len(inputs) != len(m.inputs) {
		tensor.Fail("onnx.Model.Call", "%d inputs, the model takes %d (%s)", len(inputs), len(m.inputs), m.inputNames())
	}
	c := &call{g: g, m: m, dt: m.dtype()}
	env := make(map[string]value, len(m.nodes)*2)
	for i, x := range inputs {
		vi := m.inputs[i]
		if x == nil {
			tensor.Fail("onnx.Model.Call", "input %d (%q) is nil", i, vi.Name)
		}
		if x.Graph() != g {
			tensor.Fail("onnx.Model.Call", "input %d (%q) belongs to another graph", i, vi.Name)
		}
		if err := vi.fits(x.Shape()); err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
		if isFloat(vi.code) {
			if x.DType() != floatDType(vi.code) {
				tensor.Fail("onnx.Model.Call", "input %q is %v, the model takes %s", vi.Name, x.DType(), vi.ElemType)
			}
			env[vi.Name] = value{n: x}
			if i == 0 {
				c.dt = x.DType()
			}
		} else {
			env[vi.Name] = hostValue(x.Value().Cast(tensor.Float64), vi.code == tBool)
		}
	}
	var cur *node
	defer func() {
		if cur == nil {
			return
		}
		r := recover()
		switch e := r.(type) {
		case nil:
		case nodeFailure:
			err = fmt.Errorf("onnx: %v: %s", cur, e.msg)
		case *tensor.Error:
			err = fmt.Errorf("onnx: %v: %w", cur, e)
		case runtime.Error: // a malformed file that the checks let through
			err = fmt.Errorf("onnx: %v: %w: %v", cur, ErrFormat, e)
		default:
			panic(r)
		}
	}()
	in := make([]value, 0, 8)
	for _, n := range m.nodes {
		cur = n
		in = in[:0]
		for _, name := range n.in {
			in = append(in, c.lookup(env, name))
		}
		res := n.spec.run(c, n, in)
		for i, name := range n.out {
			if name != "" && i < len(res) {
				env[name] = res[i]
			}
		}
	}
	cur = nil
	for _, o := range m.outputs {
		v := env[o.Name]
		if v.n == nil {
			v.n = g.Const(v.h.Clone())
		}
		outs = append(outs, v.n)
	}
	return outs, nil
}

// lookup returns the value named name: computed, an initializer, or
// absent (an optional input left out).
func (c *call) lookup(env map[string]value, name string) value {
	if name == "" {
		return value{}
	}
	if v, ok := env[name]; ok {
		return v
	}
	var v value
	if p := c.m.floats[name]; p != nil {
		if c.m.buffer[name] {
			v = value{n: c.g.Const(p.Value)}
		} else {
			v = value{n: p.Node(c.g)}
		}
	} else {
		h := c.m.hosts[name]
		v = hostValue(h.h, h.boolean)
	}
	env[name] = v
	return v
}

// fits reports an error if shape has the wrong rank or differs from one of
// the fixed sizes of the input.
func (vi ValueInfo) fits(shape []int) error {
	if vi.Shape == nil {
		return nil
	}
	ok := len(shape) == len(vi.Shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = vi.Shape[i] < 0 || vi.Shape[i] == shape[i]
	}
	if !ok {
		return fmt.Errorf("input %q has shape %s, the model takes %s", vi.Name, shapeOf(shape), vi.ShapeString())
	}
	return nil
}

// String formats vi as its name, element type and shape:
// "input float32 (batch, 4)".
func (vi ValueInfo) String() string { return vi.Name + " " + vi.ElemType + " " + vi.ShapeString() }

// ShapeString formats the declared shape with symbolic sizes by name and
// unknown ones as "?": "(batch, 3, ?)"; "()" for a scalar or a value
// without a shape.
func (vi ValueInfo) ShapeString() string {
	s := "("
	for i, d := range vi.Shape {
		if i > 0 {
			s += ", "
		}
		switch {
		case d >= 0:
			s += fmt.Sprint(d)
		case vi.Dims[i] != "":
			s += vi.Dims[i]
		default:
			s += "?"
		}
	}
	return s + ")"
}

// inputNames lists the graph inputs for messages.
func (m *Model) inputNames() string {
	s := ""
	for i, vi := range m.inputs {
		if i > 0 {
			s += ", "
		}
		s += vi.Name + " " + vi.ShapeString()
	}
	return s
}

// Run evaluates the model on tensors, one per graph input, in a fresh
// graph and returns the outputs' values (see Call).
func (m *Model) Run(inputs ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	g := graph.New()
	nodes := make([]*graph.Node, len(inputs))
	for i, t := range inputs {
		if t == nil {
			tensor.Fail("onnx.Model.Run", "input %d is nil", i)
		}
		nodes[i] = g.Const(t)
	}
	outs, err := m.Call(g, nodes...)
	if err != nil {
		return nil, err
	}
	res := make([]*tensor.Tensor, len(outs))
	for i, o := range outs {
		res[i] = o.Value().Clone()
	}
	return res, nil
}

// Forward applies a model with one input and one output to x, so that the
// model is an nn.Layer (Sequential, train's loops). It panics with a
// *tensor.Error where Call would return an error.
func (m *Model) Forward(x *graph.Node) *graph.Node {
	if len(m.inputs) != 1 || len(m.outputs) != 1 {
		tensor.Fail("onnx.Model.Forward", "the model has %d inputs and %d outputs; use Call", len(m.inputs), len(m.outputs))
	}
	if x == nil {
		tensor.Fail("onnx.Model.Forward", "nil input")
	}
	outs, err := m.Call(x.Graph(), x)
	if err != nil {
		tensor.Fail("onnx.Model.Forward", "%v", err)
	}
	return outs[0]
}

// axis normalises a possibly negative axis of a rank-r tensor.
func axis(a, r int) int {
	if a < -r || a >= r {
		fail("axis %d is out of range for rank %d", a, r)
	}
	if a < 0 {
		a += r
	}
	return a
}
