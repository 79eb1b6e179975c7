package onnx

// Export writes a Gradus model as an ONNX file (opset 17, IR version 8).
//
// How it works: Export runs the model's forward pass define-by-run on the
// example inputs, as any step runs, and translates the recorded graph
// node by node. Every graph op the forward pass used must have a row in
// exportTable (export_ops.go), the one place that says which ONNX
// operators stand for which graph op; an op without one is an error
// naming it (ErrNotExportable). Parameters and buffers become
// initializers named by their state-dict names (nn.State: "fc1.weight",
// "bn.running_mean"), in Gradus's layouts, which are PyTorch's, and the
// buffers among them are listed in the metadata under BuffersKey. Other
// constants the forward pass made (a causal mask, a zero state, a reshape
// target, a pooling divisor) become Constant nodes named "const_<node>",
// so that a re-import has exactly the module's parameters and buffers.
// Parameters the forward pass does not read are written as initializers
// as well. The graph's inputs and outputs carry
// their dtype (float32 or float64; int64 for index inputs) and shape.
//
// The batch dimension is dynamic where the ops allow it: Export traces
// the forward pass a second time with one more example in the batch, and
// names "batch" every input and output dimension that changed, writing
// the reshapes and broadcasts in between with -1 or 1 in that place. When
// the graph cannot follow a batch of another size (a zero state made for
// the example's batch, a slice along the batch axis, a forward pass whose
// ops depend on the batch) every shape is fixed as traced instead.
// Loops run in Go (an RNN's time steps) are unrolled, so sequence lengths
// are fixed at the example's.
//
// What is exported is what the forward pass computes, in the ops Gradus
// used: a BatchNorm in evaluation mode becomes the arithmetic of its
// affine map, an LSTM its gates' matrix products, not ONNX's fused
// operators. Values agree with Gradus's to rounding.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// ExportOpset is the version of ONNX's default operator set that Export
// writes.
const ExportOpset = 17

// ErrNotExportable is wrapped by the errors Export returns for a model it
// cannot write: a graph op with no ONNX mapping, a Var that is neither an
// input nor one of the module's parameters, a forward pass that draws
// random numbers.
var ErrNotExportable = errors.New("cannot be exported to ONNX")

// BuffersKey is the metadata key (metadata_props) under which Export lists
// the initializers that are buffers, not trainable parameters (BatchNorm's
// running statistics), separated by commas. Read and Open import the
// initializers it names as buffers, so that a re-imported Gradus model has
// the module's parameters as its Params and its buffers as its Buffers.
const BuffersKey = "gradus.buffers"

// ExportOptions configures Export. The zero value exports a layer (a
// module with Forward(x)) on one input named "input", its output named
// "output", with a dynamic batch on axis 0 where the ops allow it.
type ExportOptions struct {
	// Forward builds the model's outputs on g from the inputs' nodes, one
	// per example tensor, in order. Nil calls m's Forward when m is an
	// nn.Layer with one input. Set it for modules with other signatures:
	//
	//	Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
	//		out, hN, cN := lstm.Forward(in[0], nil, nil)
	//		return []*graph.Node{out, hN, cN}
	//	}
	Forward func(g *graph.Graph, in []*graph.Node) []*graph.Node

	// IndexInputs lists the positions in example of inputs that hold
	// integer indices, such as an Embedding's token ids, as float values.
	// They become int64 inputs of the ONNX graph. Forward receives them as
	// constant nodes and passes Indices(node) to the model; each lookup
	// (graph.IndexSelect) of exactly those indices reads the input.
	IndexInputs []int

	// InputNames and OutputNames name the graph's inputs and outputs. The
	// defaults are "input" and "output", or "input0", "input1", … when
	// there are several.
	InputNames, OutputNames []string

	// BatchAxes gives each input's batch axis, -1 for an input without
	// one. Nil means axis 0 of every input.
	BatchAxes []int

	// StaticBatch fixes every shape as traced, with no dynamic batch.
	StaticBatch bool

	// Name is the ONNX graph's name; the default is "gradus".
	Name string
}

// Export writes m as an ONNX model to w: the graph that its forward pass
// (opts.Forward, or m's Forward) builds on the example inputs, with m's
// parameters and buffers as initializers under their state-dict names.
// The model runs in whatever mode it is in; call m.SetTraining(false)
// first, as for inference, so that Dropout passes its input through and
// BatchNorm uses its running statistics. See the notes at the top of
// export.go for what is written.
//
// Export returns an error wrapping ErrNotExportable when the forward pass
// uses a graph op with no ONNX mapping (the error names it), reads a
// tensor that is neither an input nor in nn.State(m), or draws random
// numbers (two traces differ); a *tensor.Error raised while tracing is
// returned as that error. Errors from w are returned as they are.
//
// Export runs the forward pass three times (twice to check that it is
// repeatable, once more with a larger batch to find the batch dimension),
// so a module that updates state as it runs (BatchNorm in training mode)
// must be in evaluation mode.
//
// Export panics with a *tensor.Error if m is nil, example is empty or
// holds nil, mixes dtypes, opts.Forward is nil and m is not a one-input
// nn.Layer, the batch axes or index positions in opts do not fit the
// inputs, or the names in opts are too few, too many, empty or repeated.
func Export(w io.Writer, m nn.Module, example []*tensor.Tensor, opts ExportOptions) error {
	model, err := exportModel(m, example, opts)
	if err != nil {
		return err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(model)
	if err != nil {
		return fmt.Errorf("onnx.Export: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// Save is Export to the file path, written atomically (as checkpoints
// are: a temporary file, synced, renamed over path), so a failure leaves
// an existing file as it was. It panics as Export does.
func Save(path string, m nn.Module, example []*tensor.Tensor, opts ExportOptions) error {
	model, err := exportModel(m, example, opts)
	if err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(model)
	if err != nil {
		return fmt.Errorf("onnx.Save: %s: %w", path, err)
	}
	err = checkpoint.WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("onnx.Save: %w", err)
	}
	return nil
}

// Indices returns the values of an index input's node (see
// ExportOptions.IndexInputs) as ints, for the model's lookups. It panics
// with a *tensor.Error if n is nil or holds a value that is not an
// integer.
func Indices(n *graph.Node) []int {
	if n == nil {
		tensor.Fail("onnx.Indices", "nil node")
	}
	v := n.Value().Contiguous().Values()
	out := make([]int, len(v))
	for i, x := range v {
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			tensor.Fail("onnx.Indices", "element %d is %v, not an integer", i, x)
		}
		out[i] = int(x)
	}
	return out
}

// exTrace is one run of the forward pass on its own graph.
type exTrace struct {
	g    *graph.Graph
	ins  []*graph.Node
	outs []*graph.Node
}

func exportModel(m nn.Module, example []*tensor.Tensor, opts ExportOptions) (*pb.ModelProto, error) {
	const op = "onnx.Export"
	fwd := checkExport(op, m, example, &opts)
	isIndex := make([]bool, len(example))
	for _, i := range opts.IndexInputs {
		isIndex[i] = true
	}
	a, err := traceForward(fwd, example, isIndex)
	if err != nil {
		return nil, err
	}
	if err := checkRepeatable(fwd, example, isIndex, a); err != nil {
		return nil, err
	}
	inNames := exNames(opts.InputNames, "input", len(example))
	outNames := exNames(opts.OutputNames, "output", len(a.outs))
	if len(inNames) != len(example) || len(outNames) != len(a.outs) {
		tensor.Fail(op, "%d input names for %d inputs and %d output names for %d outputs",
			len(inNames), len(example), len(outNames), len(a.outs))
	}
	var dyn [][]bool
	if !opts.StaticBatch {
		if dyn, err = batchDims(fwd, example, isIndex, opts.BatchAxes, a); err != nil {
			return nil, err
		}
	}
	e := newExporter(m, a, isIndex, inNames, dyn)
	err = e.run()
	if errors.Is(err, errNeedStatic) {
		e = newExporter(m, a, isIndex, inNames, nil)
		err = e.run()
	}
	if err != nil {
		return nil, err
	}
	buffers := e.rest(m)
	taken := map[string]bool{}
	for _, t := range e.inits {
		taken[t.GetName()] = true
	}
	for _, n := range e.nodes {
		taken[n.Output[0]] = true
	}
	for _, name := range append(slices.Clone(inNames), outNames...) {
		if name == "" || taken[name] {
			tensor.Fail(op, "input or output name %q is empty or already names another value (a parameter, a node, another input or output)", name)
		}
		taken[name] = true
	}
	name := opts.Name
	if name == "" {
		name = "gradus"
	}
	gr := &pb.GraphProto{Name: proto.String(name), Node: e.nodes, Initializer: e.inits}
	for i, t := range example {
		elem := exElemType(t.DType())
		if isIndex[i] {
			elem = int32(pb.TensorProto_INT64)
		}
		gr.Input = append(gr.Input, exValueInfo(inNames[i], elem, t.Shape(), e.dynOf(a.ins[i])))
	}
	for i, o := range a.outs {
		gr.Node = append(gr.Node, &pb.NodeProto{OpType: proto.String("Identity"), Name: proto.String(outNames[i]),
			Input: []string{e.names[o]}, Output: []string{outNames[i]}})
		gr.Output = append(gr.Output, exValueInfo(outNames[i], exElemType(o.DType()), o.Shape(), e.dynOf(o)))
	}
	var meta []*pb.StringStringEntryProto
	if len(buffers) > 0 {
		meta = append(meta, &pb.StringStringEntryProto{Key: proto.String(BuffersKey), Value: proto.String(strings.Join(buffers, ","))})
	}
	return &pb.ModelProto{
		MetadataProps: meta,
		IrVersion:     proto.Int64(int64(pb.Version_IR_VERSION)),
		ProducerName:  proto.String("gradus"),
		OpsetImport:   []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}},
		Graph:         gr,
	}, nil
}

// checkExport validates Export's arguments (misuse panics) and returns
// the forward function.
func checkExport(op string, m nn.Module, example []*tensor.Tensor, opts *ExportOptions) func(*graph.Graph, []*graph.Node) []*graph.Node {
	if m == nil {
		tensor.Fail(op, "nil module")
	}
	if len(example) == 0 {
		tensor.Fail(op, "no example inputs")
	}
	for i, t := range example {
		if t == nil {
			tensor.Fail(op, "example input %d is nil", i)
		}
		if t.DType() != example[0].DType() {
			tensor.Fail(op, "example inputs mix dtypes: input 0 is %v, input %d is %v", example[0].DType(), i, t.DType())
		}
	}
	for _, i := range opts.IndexInputs {
		if i < 0 || i >= len(example) {
			tensor.Fail(op, "index input %d out of range for %d inputs", i, len(example))
		}
	}
	if opts.BatchAxes != nil {
		if len(opts.BatchAxes) != len(example) {
			tensor.Fail(op, "%d batch axes for %d inputs", len(opts.BatchAxes), len(example))
		}
		for i, ax := range opts.BatchAxes {
			if ax < -1 || ax >= example[i].Dim() {
				tensor.Fail(op, "batch axis %d of input %d is out of range for shape %s", ax, i, tensor.FormatShape(example[i].Shape()))
			}
		}
	}
	if opts.Forward != nil {
		return opts.Forward
	}
	l, ok := m.(nn.Layer)
	if !ok || len(example) != 1 {
		tensor.Fail(op, "set ExportOptions.Forward: %T is not an nn.Layer taking one input (%d example inputs)", m, len(example))
	}
	return func(g *graph.Graph, in []*graph.Node) []*graph.Node { return []*graph.Node{l.Forward(in[0])} }
}

func exNames(given []string, base string, n int) []string {
	if given != nil {
		return given
	}
	if n == 1 {
		return []string{base}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", base, i)
	}
	return out
}

// traceForward runs fwd on a new graph: float inputs as Vars, index inputs
// as Consts. A *tensor.Error raised by the model is returned.
func traceForward(fwd func(*graph.Graph, []*graph.Node) []*graph.Node, example []*tensor.Tensor, isIndex []bool) (tr exTrace, err error) {
	defer tensor.Recover(&err)
	g := graph.New()
	ins := make([]*graph.Node, len(example))
	for i, t := range example {
		if isIndex[i] {
			ins[i] = g.Const(t)
		} else {
			ins[i] = g.Var(t)
		}
	}
	outs := fwd(g, ins)
	if len(outs) == 0 {
		tensor.Fail("onnx.Export", "the forward pass returned no outputs")
	}
	for i, o := range outs {
		if o == nil || o.Graph() != g {
			tensor.Fail("onnx.Export", "output %d is nil or belongs to another graph", i)
		}
	}
	return exTrace{g, ins, outs}, nil
}

// checkRepeatable traces the forward pass again and refuses it unless
// every node is the same op on the same inputs with the same bits: a
// model that draws random numbers (Dropout in training mode) would be
// exported with one draw frozen.
func checkRepeatable(fwd func(*graph.Graph, []*graph.Node) []*graph.Node, example []*tensor.Tensor, isIndex []bool, a exTrace) error {
	b, err := traceForward(fwd, example, isIndex)
	if err != nil {
		return err
	}
	if !sameStructure(a, b) {
		return fmt.Errorf("onnx.Export: %w: two traces of the forward pass built different graphs", ErrNotExportable)
	}
	an, bn := a.g.Nodes(), b.g.Nodes()
	for i := range an {
		if !exBitsEqual(an[i].Value(), bn[i].Value()) {
			return fmt.Errorf("onnx.Export: %w: node %d (%v) differs between two runs of the forward pass: it draws random numbers (Dropout in training mode? call SetTraining(false))", ErrNotExportable, i, an[i])
		}
	}
	return nil
}

// sameStructure reports whether two traces ran the same ops on the same
// inputs, in the same order, with outputs at the same nodes.
func sameStructure(a, b exTrace) bool {
	an, bn := a.g.Nodes(), b.g.Nodes()
	if len(an) != len(bn) || len(a.outs) != len(b.outs) {
		return false
	}
	for i, x := range an {
		y := bn[i]
		if (x.Op() == nil) != (y.Op() == nil) || x.IsVar() != y.IsVar() || len(x.Inputs()) != len(y.Inputs()) || x.Dim() != y.Dim() {
			return false
		}
		if x.Op() != nil && (x.Op().Name() != y.Op().Name() || !sameAttrs(x.Op(), y.Op())) {
			return false
		}
		for j, in := range x.Inputs() {
			if in.ID() != y.Inputs()[j].ID() {
				return false
			}
		}
	}
	for i, o := range a.outs {
		if o.ID() != b.outs[i].ID() {
			return false
		}
	}
	return true
}

// sameAttrs reports whether two ops hold the same parameters apart from
// the shapes that the batch changes, which the rules write with -1 or 1
// (reshape targets, a transposed convolution's input shape) or read from
// an index input (lookups). A slice whose bounds follow the batch differs.
func sameAttrs(a, b graph.Op) bool {
	x, y := graph.OpAttrs(a), graph.OpAttrs(b)
	for _, k := range []string{"shape", "input_shape", "indices"} {
		delete(x, k)
		delete(y, k)
	}
	return reflect.DeepEqual(x, y)
}

func exBitsEqual(a, b *tensor.Tensor) bool {
	if a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	x, y := a.Contiguous().Values(), b.Contiguous().Values()
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// batchDims traces the forward pass with one more example in each input's
// batch and returns, per node of a, which dimensions changed; nil when the
// two graphs differ in anything else, so that the batch must be fixed.
func batchDims(fwd func(*graph.Graph, []*graph.Node) []*graph.Node, example []*tensor.Tensor, isIndex []bool, axes []int, a exTrace) ([][]bool, error) {
	grown := make([]*tensor.Tensor, len(example))
	any := false
	for i, t := range example {
		ax := 0
		if axes != nil {
			ax = axes[i]
		}
		if ax < 0 || t.Dim() == 0 || t.Shape()[ax] == 0 {
			grown[i] = t
			continue
		}
		grown[i] = tensor.Concat(ax, t, tensor.Slice(t, ax, 0, 1, 1))
		any = true
	}
	if !any {
		return nil, nil
	}
	b, err := traceForward(fwd, grown, isIndex)
	if err != nil || !sameStructure(a, b) {
		return nil, nil // the model does not take another batch size as it is: fix the batch
	}
	an, bn := a.g.Nodes(), b.g.Nodes()
	dyn := make([][]bool, len(an))
	for i, x := range an {
		xs, ys := x.Shape(), bn[i].Shape()
		var d []bool
		for k := range xs {
			if xs[k] != ys[k] {
				if d == nil {
					d = make([]bool, len(xs))
				}
				d[k] = true
			}
		}
		dyn[i] = d
		// A constant of the same shape but other values (a mask made
		// from the batch size) would be frozen at the example's.
		if d == nil && x.IsConst() && !slices.Contains(a.ins, x) && !exBitsEqual(x.Value(), bn[i].Value()) {
			return nil, nil
		}
	}
	return dyn, nil
}

// errNeedStatic is returned by a rule that cannot write its op for a
// dynamic batch; Export then writes the whole graph with fixed shapes.
var errNeedStatic = errors.New("needs a fixed batch")

// exporter translates one trace into ONNX nodes and initializers.
type exporter struct {
	tr      exTrace
	dyn     [][]bool                  // per node id, the dimensions that follow the batch; nil: fixed
	names   map[*graph.Node]string    // the ONNX value holding each node's value
	state   map[*tensor.Tensor]string // the module's parameters and buffers by tensor
	isIndex []bool
	inNames []string
	index   []exIndexInput // the index inputs, for matching lookups
	nodes   []*pb.NodeProto
	inits   []*pb.TensorProto
	written map[*tensor.Tensor]string // the initializers written, by tensor
	consts  map[string]string         // cached int64 and scalar constants by key
	tmp     int

	// The input the batch size is read from, for constants made for the
	// example's batch (a zero initial state): its name, batch axis and
	// size in the trace, and the value holding the size once read.
	batchIn    string
	batchAxis  int
	batchSize  int
	batchValue string
}

type exIndexInput struct {
	name   string
	values []int
	flat   string // the input reshaped to one axis, once made
}

func newExporter(m nn.Module, tr exTrace, isIndex []bool, inNames []string, dyn [][]bool) *exporter {
	e := &exporter{tr: tr, dyn: dyn, names: map[*graph.Node]string{}, state: map[*tensor.Tensor]string{},
		isIndex: isIndex, inNames: inNames, written: map[*tensor.Tensor]string{}, consts: map[string]string{}}
	st := nn.State(m)
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := e.state[st[k]]; !ok { // tied tensors take their first name
			e.state[st[k]] = k
		}
	}
	for i, in := range tr.ins {
		if d := e.dynOf(in); e.batchIn == "" && d != nil {
			e.batchIn, e.batchAxis, e.batchSize = inNames[i], slices.Index(d, true), in.Shape()[slices.Index(d, true)]
		}
		if isIndex[i] {
			e.index = append(e.index, exIndexInput{name: inNames[i], values: Indices(in)})
		} else {
			e.names[in] = inNames[i]
		}
	}
	return e
}

// dynOf returns the dimensions of n that follow the batch, or nil.
func (e *exporter) dynOf(n *graph.Node) []bool {
	if e.dyn == nil {
		return nil
	}
	return e.dyn[n.ID()]
}

// run emits every node the outputs depend on, in creation order.
func (e *exporter) run() error {
	nodes := e.tr.g.Nodes()
	live := make([]bool, len(nodes))
	for _, o := range e.tr.outs {
		live[o.ID()] = true
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if live[i] {
			for _, in := range nodes[i].Inputs() {
				live[in.ID()] = true
			}
		}
	}
	for i, n := range nodes {
		if !live[i] {
			continue
		}
		if err := e.emit(n); err != nil {
			return err
		}
	}
	return nil
}

// emit translates one node.
func (e *exporter) emit(n *graph.Node) error {
	if _, done := e.names[n]; done {
		return nil
	}
	e.tmp = 0
	if n.Op() == nil {
		return e.leaf(n)
	}
	rule, ok := exportTable[n.Op().Name()]
	if !ok {
		return fmt.Errorf("onnx.Export: %w: graph op %q (node %d, %s) has no ONNX mapping", ErrNotExportable, n.Op().Name(), n.ID(), graph.Describe(n))
	}
	in := make([]string, len(n.Inputs()))
	for i, x := range n.Inputs() {
		in[i] = e.names[x]
	}
	out, err := rule(e, n, in)
	if err != nil {
		if errors.Is(err, errNeedStatic) {
			return err
		}
		return fmt.Errorf("onnx.Export: %w: graph op %q (node %d, %s): %v", ErrNotExportable, n.Op().Name(), n.ID(), graph.Describe(n), err)
	}
	e.names[n] = out
	return nil
}

// leaf names a leaf: an index input read as floats, a parameter or
// buffer, or a constant.
func (e *exporter) leaf(n *graph.Node) error {
	for i, in := range e.tr.ins {
		if in == n && e.isIndex[i] {
			e.names[n] = e.node(n, "Cast", []string{e.inNames[i]}, exAttr("to", int64(exElemType(n.DType()))))
			return nil
		}
	}
	t := n.Value()
	if name, ok := e.written[t]; ok { // a tensor read through two nodes is one initializer
		e.names[n] = name
		return nil
	}
	if name, ok := e.state[t]; ok {
		e.inits = append(e.inits, exTensor(name, t))
		e.written[t] = name
		e.names[n] = name
		return nil
	}
	if n.IsVar() {
		return fmt.Errorf("onnx.Export: %w: a Var %s (node %d) is neither an input nor a parameter or buffer of the module", ErrNotExportable, graph.Describe(n), n.ID())
	}
	if d := e.dynOf(n); slices.Contains(d, true) {
		return e.filled(n, d) // a constant made for the example's batch
	}
	e.names[n] = e.constant(fmt.Sprintf("const_%d", n.ID()), exTensor("", t))
	return nil
}

// constant appends a Constant node named name whose output, also named
// name, holds t, and returns the name. Constants are nodes, not
// initializers, so that a re-import lists exactly the module's state as
// its parameters and buffers.
func (e *exporter) constant(name string, t *pb.TensorProto) string {
	e.nodes = append(e.nodes, &pb.NodeProto{Name: proto.String(name), OpType: proto.String("Constant"),
		Output: []string{name}, Attribute: []*pb.AttributeProto{exAttr("value", t)}})
	return name
}

// rest writes the parameters and buffers the forward pass did not read as
// initializers too, so that the file holds the module's whole state, and
// returns the names of the buffers, sorted.
func (e *exporter) rest(m nn.Module) []string {
	st := nn.State(m)
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t := st[k]
		if _, done := e.written[t]; !done && e.state[t] == k {
			e.inits = append(e.inits, exTensor(k, t))
			e.written[t] = k
		}
	}
	var bufs []string
	for _, b := range nn.Buffers(m) {
		if e.written[b.Value] == b.Name {
			bufs = append(bufs, b.Name)
		}
	}
	sort.Strings(bufs)
	return slices.Compact(bufs)
}

// filled writes a constant whose dimensions dyn follow the batch as
// ConstantOfShape of a shape read from the batch input, when all its
// elements are equal (a zero state) and those dimensions are the batch
// size itself; other such constants need a fixed batch.
func (e *exporter) filled(n *graph.Node, dyn []bool) error {
	v := n.Value().Contiguous().Values()
	for _, x := range v {
		if math.Float64bits(x) != math.Float64bits(v[0]) {
			return errNeedStatic
		}
	}
	if e.batchIn == "" || len(v) == 0 {
		return errNeedStatic
	}
	if e.batchValue == "" {
		e.batchValue = e.node(n, "Shape", []string{e.batchIn}, exAttr("start", e.batchAxis), exAttr("end", e.batchAxis+1))
	}
	dims := make([]string, n.Dim())
	for k, d := range n.Shape() {
		if !dyn[k] {
			dims[k] = e.ints(int64(d))
			continue
		}
		if d != e.batchSize {
			return errNeedStatic
		}
		dims[k] = e.batchValue
	}
	shape := e.node(n, "Concat", dims, exAttr("axis", 0))
	fill := exTensor("", tensor.FromValues(n.DType(), v[:1], 1))
	e.names[n] = e.node(n, "ConstantOfShape", []string{shape}, exAttr("value", fill))
	return nil
}
