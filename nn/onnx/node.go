package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// node is a checked NodeProto: its operator is in ops, its attributes are
// ones Gradus knows and their values ones it implements.
type node struct {
	name, op string
	in, out  []string
	attr     map[string]*pb.AttributeProto
	spec     *opSpec
	konst    constant // Constant's value, decoded when the model is read
}

// opSpec is what Gradus knows of an operator: how many inputs it takes,
// which attributes it reads, a check of their values run when the model is
// read, and its translation into graph ops.
type opSpec struct {
	minIn, maxIn int
	attrs        string // space-separated attribute names
	check        func(n *node) error
	run          func(c *call, n *node, in []value) []value
}

// String names the node in errors: its name, or its position when unnamed,
// and its operator.
func (n *node) String() string { return fmt.Sprintf("node %q (%s)", n.name, n.op) }

// newNode checks np against the operator table; the i-th node of a graph
// without a name is called "#i".
func newNode(np *pb.NodeProto, i int) (*node, error) {
	n := &node{name: np.GetName(), op: np.GetOpType(), in: np.GetInput(), out: np.GetOutput(), attr: map[string]*pb.AttributeProto{}}
	if n.name == "" {
		n.name = fmt.Sprintf("#%d", i)
	}
	if d := np.GetDomain(); d != "" && d != "ai.onnx" {
		return nil, fmt.Errorf("%w: %v: operator domain %q (only the default ONNX domain is imported)", ErrUnsupported, n, d)
	}
	spec := ops[n.op]
	if spec == nil {
		return nil, fmt.Errorf("%w: %v: operator %s is not imported (supported: %s)", ErrUnsupported, n, n.op, strings.Join(SupportedOperators(), ", "))
	}
	n.spec = spec
	known := strings.Fields(spec.attrs)
	for _, a := range np.GetAttribute() {
		if !slices.Contains(known, a.GetName()) {
			return nil, fmt.Errorf("%w: %v: attribute %q of %s is not imported", ErrUnsupported, n, a.GetName(), n.op)
		}
		if a.GetRefAttrName() != "" {
			return nil, fmt.Errorf("%w: %v: attribute %q refers to a function attribute", ErrUnsupported, n, a.GetName())
		}
		n.attr[a.GetName()] = a
	}
	real := len(n.in)
	for real > 0 && n.in[real-1] == "" {
		real--
	}
	if real < spec.minIn || (spec.maxIn >= 0 && real > spec.maxIn) {
		return nil, fmt.Errorf("%w: %v has %d inputs, %s takes %d to %d", ErrFormat, n, real, n.op, spec.minIn, spec.maxIn)
	}
	n.in = n.in[:real]
	if len(n.out) == 0 {
		return nil, fmt.Errorf("%w: %v has no outputs", ErrFormat, n)
	}
	if spec.check != nil {
		if err := spec.check(n); err != nil {
			return nil, fmt.Errorf("%w: %v: %v", ErrUnsupported, n, err)
		}
	}
	return n, nil
}

// SupportedOperators returns the ONNX operators Read accepts, sorted.
func SupportedOperators() []string {
	var names []string
	for k := range ops {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// has reports whether the attribute is present.
func (n *node) has(name string) bool { return n.attr[name] != nil }

// int returns an integer attribute, or def when it is absent.
func (n *node) int(name string, def int) int {
	if a := n.attr[name]; a != nil {
		return int(a.GetI())
	}
	return def
}

// float returns a float attribute, or def when it is absent.
func (n *node) float(name string, def float64) float64 {
	if a := n.attr[name]; a != nil {
		return float64(a.GetF())
	}
	return def
}

// str returns a string attribute, or def when it is absent.
func (n *node) str(name, def string) string {
	if a := n.attr[name]; a != nil {
		return string(a.GetS())
	}
	return def
}

// ints returns an integer-list attribute, or nil when it is absent.
func (n *node) ints(name string) []int {
	a := n.attr[name]
	if a == nil {
		return nil
	}
	out := make([]int, len(a.GetInts()))
	for i, v := range a.GetInts() {
		out[i] = clampInt(float64(v))
	}
	return out
}

// clampInt converts an integer held as float64 to int, clamping the int64
// limits that ONNX uses for open slice ends.
func clampInt(v float64) int {
	switch {
	case v >= math.MaxInt64:
		return math.MaxInt
	case v <= math.MinInt64:
		return math.MinInt
	}
	return int(v)
}

// want returns an error if the integer attribute is set to another value
// than the only one Gradus imports.
func (n *node) want(name string, want int) error {
	if n.has(name) && n.int(name, want) != want {
		return fmt.Errorf("attribute %s = %d is not imported (only %d)", name, n.int(name, want), want)
	}
	return nil
}

// wantStr is want for string attributes.
func (n *node) wantStr(name string, allowed ...string) error {
	if v := n.str(name, allowed[0]); !slices.Contains(allowed, v) {
		return fmt.Errorf("attribute %s = %q is not imported (only %s)", name, v, strings.Join(allowed, ", "))
	}
	return nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// nodeFailure is the panic value of fail: a failure of one node while it
// runs, turned into an error naming the node by Call.
type nodeFailure struct{ msg string }

// fail stops the node being run with an error message.
func fail(format string, args ...any) {
	panic(nodeFailure{fmt.Sprintf(format, args...)})
}

// shapeOf formats a shape for messages.
func shapeOf(s []int) string { return tensor.FormatShape(s) }
