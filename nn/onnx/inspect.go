package onnx

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
)

// Summary describes an ONNX model without running it: what
// `gradus onnx inspect` prints. Inspect reads any ONNX file, also one with
// operators or element types Gradus does not import; Model.Summary gives
// the same for an imported model.
type Summary struct {
	IRVersion int64
	Opsets    map[string]int64 // operator set versions by domain ("" is the default, ai.onnx)
	Producer  string           // producer name and version, e.g. "gradus" or "pytorch 1.13.1"
	Graph     string           // the graph's name
	// Inputs are the graph's inputs, initializers left out, and Outputs its
	// outputs. An element type Gradus does not import is named all the
	// same ("string", "type 8"); a value that is not a tensor has
	// ElemType "?" and a nil Shape.
	Inputs, Outputs []ValueInfo
	// Operators counts the graph's nodes by operator, "domain.Op" outside
	// the default domain. Nodes inside subgraphs (If, Loop) are not counted.
	Operators    map[string]int
	Nodes        int   // nodes in the graph
	Initializers int   // initializers (parameters and constants)
	Parameters   int64 // scalars in the floating-point initializers
}

// Inspect reads an ONNX model from r and summarises it. A stream that is
// not an ONNX model, or one without a graph, is an error.
func Inspect(r io.Reader) (*Summary, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("onnx.Inspect: %w", err)
	}
	s, err := summarize(b)
	if err != nil {
		return nil, fmt.Errorf("onnx.Inspect: %w", err)
	}
	return s, nil
}

// InspectFile is Inspect of the file path; its errors name the file.
func InspectFile(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx.InspectFile: %w", err)
	}
	s, err := summarize(b)
	if err != nil {
		return nil, fmt.Errorf("onnx.InspectFile: %s: %w", path, err)
	}
	return s, nil
}

func summarize(b []byte) (*Summary, error) {
	var m pb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not an ONNX model: %w", err)
	}
	if m.GetGraph() == nil || m.GetIrVersion() == 0 {
		return nil, fmt.Errorf("not an ONNX model: no graph or IR version (%d bytes)", len(b))
	}
	return summarizeProto(&m), nil
}

// summarizeProto summarises a model that has a graph.
func summarizeProto(m *pb.ModelProto) *Summary {
	g := m.GetGraph()
	s := &Summary{IRVersion: m.GetIrVersion(), Opsets: map[string]int64{}, Producer: m.GetProducerName(),
		Graph: g.GetName(), Operators: map[string]int{}, Nodes: len(g.Node), Initializers: len(g.Initializer)}
	if v := m.GetProducerVersion(); v != "" {
		s.Producer += " " + v
	}
	for _, o := range m.OpsetImport {
		d := o.GetDomain()
		if d == "ai.onnx" {
			d = ""
		}
		s.Opsets[d] = o.GetVersion()
	}
	inits := map[string]bool{}
	for _, t := range g.Initializer {
		inits[t.GetName()] = true
		switch pb.TensorProto_DataType(t.GetDataType()) {
		case pb.TensorProto_FLOAT, pb.TensorProto_DOUBLE, pb.TensorProto_FLOAT16, pb.TensorProto_BFLOAT16:
			n := int64(1)
			for _, d := range t.Dims {
				n *= d
			}
			s.Parameters += n
		}
	}
	for _, vi := range g.Input {
		if !inits[vi.GetName()] { // IR < 4 lists initializers among the inputs
			s.Inputs = append(s.Inputs, describe(vi))
		}
	}
	for _, vi := range g.Output {
		s.Outputs = append(s.Outputs, describe(vi))
	}
	for _, n := range g.Node {
		op := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			op = d + "." + op
		}
		s.Operators[op]++
	}
	return s
}

// describe returns what a graph input or output says of itself, whatever
// its type: the importer checks what it supports on top (valueInfo).
func describe(v *pb.ValueInfoProto) ValueInfo {
	vi := ValueInfo{Name: v.GetName(), ElemType: "?"}
	tt := v.GetType().GetTensorType()
	if tt == nil {
		return vi
	}
	vi.code = tt.GetElemType()
	if vi.code != 0 {
		vi.ElemType = ElemTypeName(vi.code)
	}
	for _, d := range tt.GetShape().GetDim() {
		size := -1
		if _, ok := d.GetValue().(*pb.TensorShapeProto_Dimension_DimValue); ok && d.GetDimValue() >= 0 {
			size = int(d.GetDimValue())
		}
		vi.Shape = append(vi.Shape, size)
		vi.Dims = append(vi.Dims, d.GetDimParam())
	}
	return vi
}

// clone returns a deep copy of s.
func (s *Summary) clone() *Summary {
	c := *s
	c.Opsets = maps.Clone(s.Opsets)
	c.Operators = maps.Clone(s.Operators)
	c.Inputs, c.Outputs = cloneInfos(s.Inputs), cloneInfos(s.Outputs)
	return &c
}

func cloneInfos(vs []ValueInfo) []ValueInfo {
	out := slices.Clone(vs)
	for i := range out {
		out[i].Shape, out[i].Dims = slices.Clone(out[i].Shape), slices.Clone(out[i].Dims)
	}
	return out
}
