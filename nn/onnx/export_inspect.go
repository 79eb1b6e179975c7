package onnx

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
)

// Summary describes an ONNX model without running it: what
// `gradus onnx inspect` prints. It reads any ONNX file, not only those
// Export writes.
type Summary struct {
	IRVersion int64
	Opsets    map[string]int64 // operator set versions by domain ("" is the default, ai.onnx)
	Producer  string           // producer name and version, e.g. "gradus" or "pytorch 1.13.1"
	Graph     string           // the graph's name
	Inputs    []ValueSummary   // the graph's inputs, initializers left out
	Outputs   []ValueSummary
	// Operators counts the graph's nodes by operator, "domain.Op" outside
	// the default domain. Nodes inside subgraphs (If, Loop) are not counted.
	Operators    map[string]int
	Nodes        int   // nodes in the graph
	Initializers int   // initializers (parameters and constants)
	Parameters   int64 // scalars in the floating-point initializers
}

// ValueSummary is one input or output of a graph.
type ValueSummary struct {
	Name  string
	DType string   // ONNX's element type in lower case ("float", "double", "int64"), or "?"
	Shape []string // each dimension's size, or its symbolic name ("batch"), or "?"
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
	g := m.GetGraph()
	if g == nil || m.GetIrVersion() == 0 {
		return nil, fmt.Errorf("not an ONNX model: no graph or IR version (%d bytes)", len(b))
	}
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
			s.Inputs = append(s.Inputs, valueSummary(vi))
		}
	}
	for _, vi := range g.Output {
		s.Outputs = append(s.Outputs, valueSummary(vi))
	}
	for _, n := range g.Node {
		op := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			op = d + "." + op
		}
		s.Operators[op]++
	}
	return s, nil
}

func valueSummary(vi *pb.ValueInfoProto) ValueSummary {
	v := ValueSummary{Name: vi.GetName(), DType: "?"}
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return v
	}
	if name, ok := pb.TensorProto_DataType_name[tt.GetElemType()]; ok && tt.GetElemType() != 0 {
		v.DType = strings.ToLower(name)
	}
	if tt.Shape == nil {
		return v
	}
	v.Shape = make([]string, len(tt.Shape.Dim))
	for i, d := range tt.Shape.Dim {
		switch x := d.GetValue().(type) {
		case *pb.TensorShapeProto_Dimension_DimValue:
			v.Shape[i] = strconv.FormatInt(x.DimValue, 10)
		case *pb.TensorShapeProto_Dimension_DimParam:
			v.Shape[i] = x.DimParam
		default:
			v.Shape[i] = "?"
		}
	}
	return v
}
