package onnx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// The opset versions of the default domain that Import reads. PyTorch
// 1.13 exports 13 to 17 (17 by default from 2.0).
const (
	MinOpset = 13
	MaxOpset = 17
)

// ErrFormat is wrapped by every error about a file that is not a valid
// ONNX model: unreadable protobuf, a missing graph, data shorter than its
// shape, a cycle, an undefined input.
var ErrFormat = errors.New("invalid ONNX model")

// ErrUnsupported is wrapped by errors about valid models that use what
// Gradus does not import: an operator, an opset, an attribute or a value
// of one, an element type.
var ErrUnsupported = errors.New("unsupported ONNX feature")

// ValueInfo describes a graph input or output: Model.Inputs and Outputs,
// and Summary's.
type ValueInfo struct {
	Name     string
	ElemType string // "float32", "int64", "bool", ... ("?" in a Summary for a value that is not a tensor)
	// Shape has one entry per axis: its size, or -1 for a symbolic or
	// unknown size (a batch axis).
	// Shape is nil when the file gives no shape.
	Shape []int
	// Dims names the symbolic axes ("batch"), "" for fixed ones.
	Dims []string

	code int32
}

// Model is an ONNX model imported as a Gradus module. Its float
// initializers are parameters that optimisers train (named as in the
// file, which for PyTorch exports are the state-dict names), except the
// running statistics of BatchNormalization, which are buffers; Call
// applies the graph to nodes of a graph.Graph, so every imported
// operator differentiates by the rules of the graph ops it maps to.
//
// A model starts in evaluation mode, the form it was exported in (unlike
// Gradus's own modules, which start in training mode as PyTorch's do).
// SetTraining(true), which train's Trainer calls around its steps, makes
// BatchNormalization normalise with each batch's statistics and update
// its running statistics, as PyTorch's train() does. Dropout is the
// identity in both modes.
type Model struct {
	// Opset is the version of the default operator set.
	Opset int
	// Producer is the program that wrote the file, e.g. "pytorch 1.13.0".
	Producer string
	// Metadata holds the model's metadata_props.
	Metadata map[string]string

	inputs, outputs []ValueInfo
	nodes           []*node // in a topological order
	params, buffers []nn.NamedParam
	floats          map[string]*nn.Param // every float initializer by name
	hosts           map[string]constant  // integer and boolean initializers
	buffer          map[string]bool
	training        bool
	summary         *Summary
}

// maxModelBytes bounds what Read takes from a reader: protobuf's own limit.
const maxModelBytes = 2 << 30

// Read reads an ONNX model (a serialised ModelProto) from r and checks
// it: every node's operator, opset and attributes must be supported and
// every input defined, so that Call fails later only on inputs that do
// not fit. Tensors stored in external files cannot be found from a
// reader: use Open for those. Errors wrap ErrFormat or ErrUnsupported.
func Read(r io.Reader) (*Model, error) {
	return read(r, "", "")
}

// Open reads the ONNX model file at path (see Read). Initializers kept in
// external data files (onnx.save_model with save_as_external_data) are
// read from path's folder.
func Open(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, filepath.Dir(path), path)
}

func read(r io.Reader, dir, path string) (*Model, error) {
	wrap := func(err error) error {
		if path != "" {
			return fmt.Errorf("onnx: %s: %w", path, err)
		}
		return fmt.Errorf("onnx: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxModelBytes+1))
	if err != nil {
		return nil, wrap(err)
	}
	if len(b) > maxModelBytes {
		return nil, wrap(fmt.Errorf("%w: larger than 2 GiB (keep the weights in external data)", ErrFormat))
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(b, &mp); err != nil {
		return nil, wrap(fmt.Errorf("%w: not an ONNX model, or a truncated one: %v", ErrFormat, err))
	}
	if mp.GetIrVersion() <= 0 || mp.GetGraph() == nil || len(mp.GetOpsetImport()) == 0 {
		what := "no ir_version"
		if mp.GetIrVersion() > 0 {
			what = "no graph or no opset_import"
		}
		if bytes.HasPrefix(b, []byte("\x93NUMPY")) || bytes.HasPrefix(b, []byte("PK")) {
			what += "; this looks like a NumPy file"
		}
		return nil, wrap(fmt.Errorf("%w: not an ONNX model (%s)", ErrFormat, what))
	}
	m, err := build(&mp, dir)
	if err != nil {
		return nil, wrap(err)
	}
	return m, nil
}

// build checks mp and turns it into a Model.
func build(mp *pb.ModelProto, dir string) (*Model, error) {
	m := &Model{Producer: strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion()),
		floats: map[string]*nn.Param{}, hosts: map[string]constant{}, buffer: map[string]bool{}, Metadata: map[string]string{},
		summary: summarizeProto(mp)}
	for _, kv := range mp.GetMetadataProps() {
		m.Metadata[kv.GetKey()] = kv.GetValue()
	}
	for _, o := range mp.GetOpsetImport() {
		switch o.GetDomain() {
		case "", "ai.onnx":
			m.Opset = int(o.GetVersion())
		}
	}
	if m.Opset < MinOpset || m.Opset > MaxOpset {
		return nil, fmt.Errorf("%w: opset %d of the default domain; Gradus imports opsets %d to %d (re-export with opset_version=%d)", ErrUnsupported, m.Opset, MinOpset, MaxOpset, MaxOpset)
	}
	gp := mp.GetGraph()
	if len(gp.GetSparseInitializer()) > 0 {
		return nil, fmt.Errorf("%w: sparse initializers", ErrUnsupported)
	}
	defined := map[string]bool{}
	var inits []*pb.TensorProto
	for _, t := range gp.GetInitializer() {
		if defined[t.GetName()] || t.GetName() == "" {
			return nil, fmt.Errorf("%w: initializer name %q is empty or repeated", ErrFormat, t.GetName())
		}
		defined[t.GetName()] = true
		inits = append(inits, t)
	}
	for _, v := range gp.GetInput() {
		if defined[v.GetName()] {
			continue // an initializer listed as an input as well (keep_initializers_as_inputs)
		}
		vi, err := valueInfo(v)
		if err != nil {
			return nil, fmt.Errorf("graph input %w", err)
		}
		defined[v.GetName()] = true
		m.inputs = append(m.inputs, vi)
	}
	nodes := make([]*node, len(gp.GetNode()))
	for i, np := range gp.GetNode() {
		n, err := newNode(np, i)
		if err != nil {
			return nil, err
		}
		nodes[i] = n
	}
	sorted, err := topoSort(nodes, defined)
	if err != nil {
		return nil, err
	}
	m.nodes = sorted
	for _, v := range gp.GetOutput() {
		if !defined[v.GetName()] {
			return nil, fmt.Errorf("%w: graph output %q is not computed by any node", ErrFormat, v.GetName())
		}
		vi, err := valueInfo(v)
		if err != nil {
			return nil, fmt.Errorf("graph output %w", err)
		}
		m.outputs = append(m.outputs, vi)
	}
	if len(m.outputs) == 0 {
		return nil, fmt.Errorf("%w: the graph has no outputs", ErrFormat)
	}
	for _, n := range m.nodes {
		if n.op == "BatchNormalization" {
			for _, in := range n.in[3:] {
				m.buffer[in] = true
			}
		}
	}
	if list := m.Metadata[BuffersKey]; list != "" {
		for _, name := range strings.Split(list, ",") {
			m.buffer[name] = true
		}
	}
	for _, t := range inits {
		c, err := decodeTensor(t, dir)
		if err != nil {
			return nil, fmt.Errorf("%w: initializer %w", ErrFormat, err)
		}
		if c.h != nil {
			m.hosts[t.GetName()] = c
			continue
		}
		p := nn.NewParam(c.f)
		m.floats[t.GetName()] = p
		if m.buffer[t.GetName()] {
			m.buffers = append(m.buffers, nn.NamedParam{Name: t.GetName(), Param: p})
		} else {
			m.params = append(m.params, nn.NamedParam{Name: t.GetName(), Param: p})
		}
	}
	return m, nil
}

// valueInfo describes a graph input or output (describe); only tensors of
// the element types Gradus reads are accepted.
func valueInfo(v *pb.ValueInfoProto) (ValueInfo, error) {
	tt := v.GetType().GetTensorType()
	if tt == nil {
		return ValueInfo{}, fmt.Errorf("%q: %w: not a tensor (sequences, maps and optionals are not imported)", v.GetName(), ErrUnsupported)
	}
	if _, ok := elemTypes[tt.GetElemType()]; !ok {
		return ValueInfo{}, fmt.Errorf("%q: %w: element type %s", v.GetName(), ErrUnsupported, ElemTypeName(tt.GetElemType()))
	}
	return describe(v), nil
}

// topoSort orders nodes so that each comes after the producers of its
// inputs (ONNX requires files to be sorted; some writers do not), naming
// an input that nothing defines or the nodes of a cycle.
func topoSort(nodes []*node, defined map[string]bool) ([]*node, error) {
	producer := map[string]*node{}
	for _, n := range nodes {
		for _, o := range n.out {
			if o == "" {
				continue
			}
			if defined[o] || producer[o] != nil {
				return nil, fmt.Errorf("%w: %v writes %q, which is already defined", ErrFormat, n, o)
			}
			producer[o] = n
		}
	}
	waiting := map[*node]int{}
	users := map[*node][]*node{}
	var ready []*node
	for _, n := range nodes {
		for _, in := range n.in {
			if in == "" || defined[in] {
				continue
			}
			p := producer[in]
			if p == nil {
				return nil, fmt.Errorf("%w: %v reads %q, which is neither a graph input, an initializer nor any node's output", ErrFormat, n, in)
			}
			waiting[n]++
			users[p] = append(users[p], n)
		}
		if waiting[n] == 0 {
			ready = append(ready, n)
		}
	}
	out := make([]*node, 0, len(nodes))
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		out = append(out, n)
		for _, o := range n.out {
			if o != "" {
				defined[o] = true
			}
		}
		for _, u := range users[n] {
			if waiting[u]--; waiting[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(out) < len(nodes) {
		var stuck []string
		for _, n := range nodes {
			if waiting[n] > 0 {
				stuck = append(stuck, n.String())
			}
		}
		sort.Strings(stuck)
		return nil, fmt.Errorf("%w: the graph has a cycle through %s", ErrFormat, strings.Join(stuck, ", "))
	}
	return out, nil
}

// Summary describes the model as Inspect describes its file: versions,
// producer, inputs, outputs, operator counts and parameter count. The
// result is a copy.
func (m *Model) Summary() *Summary { return m.summary.clone() }

// Inputs describes the graph inputs that Call takes, in order
// (initializers that a file also lists as inputs are left out): the
// summary's Inputs.
func (m *Model) Inputs() []ValueInfo { return cloneInfos(m.summary.Inputs) }

// Outputs describes the graph outputs that Call returns, in order: the
// summary's Outputs.
func (m *Model) Outputs() []ValueInfo { return cloneInfos(m.summary.Outputs) }

// Operators returns the distinct operator types the graph uses, sorted:
// the keys of the summary's Operators.
func (m *Model) Operators() []string { return slices.Sorted(maps.Keys(m.summary.Operators)) }

// Params returns the trainable float initializers under their names, in
// the file's order.
func (m *Model) Params() []nn.NamedParam { return slices.Clone(m.params) }

// Buffers returns the float initializers that are state but not trained:
// the running means and variances of BatchNormalization.
func (m *Model) Buffers() []nn.NamedParam { return slices.Clone(m.buffers) }

// SetTraining switches between training mode (true), in which
// BatchNormalization uses and tracks batch statistics, and evaluation mode
// (false, the mode a model is read in). See Model.
func (m *Model) SetTraining(training bool) { m.training = training }

// String describes the model for errors and logs.
func (m *Model) String() string {
	return fmt.Sprintf("onnx.Model(opset %d, %d nodes, %d inputs, %d outputs)", m.Opset, len(m.nodes), len(m.inputs), len(m.outputs))
}

// dtype returns the float dtype of the model's first parameter, float32
// when it has none (Call prefers its first float input's).
func (m *Model) dtype() tensor.DType {
	if len(m.params) > 0 {
		return m.params[0].Value.DType()
	}
	return tensor.Float32
}
