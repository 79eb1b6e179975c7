package onnx_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn/onnx"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// tensorInfo declares a graph input or output; dims of -1 are symbolic.
func tensorInfo(name string, elem int32, dims ...int64) *pb.ValueInfoProto {
	s := &pb.TensorShapeProto{}
	for _, d := range dims {
		if d < 0 {
			s.Dim = append(s.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}})
		} else {
			s.Dim = append(s.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(elem), Shape: s}}}}
}

// op builds a node.
func op(typ, name string, in, out []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(typ), Name: proto.String(name), Input: in, Output: out, Attribute: attrs}
}

// intAttr builds an integer attribute.
func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// raw builds an initializer from little-endian bytes.
func raw(name string, elem int32, b []byte, dims ...int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(elem), Dims: dims, RawData: b}
}

// f32 returns the little-endian bytes of float32 values.
func f32(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// model serialises a graph at the given opset: x (float32, (batch, 3)) in,
// y out unless outputs are given.
func model(opset int64, nodes []*pb.NodeProto, inits []*pb.TensorProto, outputs ...*pb.ValueInfoProto) []byte {
	if outputs == nil {
		outputs = []*pb.ValueInfoProto{tensorInfo("y", 1)}
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8), ProducerName: proto.String("test"),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(opset)}},
		Graph: &pb.GraphProto{Name: proto.String("g"), Node: nodes, Initializer: inits,
			Input: []*pb.ValueInfoProto{tensorInfo("x", 1, -1, 3)}, Output: outputs}}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// Bad files are errors that say what is wrong, found when the model is
// read, before anything runs.
func TestReadErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	npz, _ := os.ReadFile("testdata/cnn.npz")
	relu := func(in, out string) *pb.NodeProto { return op("Relu", "r_"+out, []string{in}, []string{out}) }
	for _, c := range []struct {
		name string
		file []byte
		kind error
		want []string
	}{
		{"empty", nil, onnx.ErrFormat, []string{"not an ONNX model"}},
		{"truncated", good[:len(good)/2], onnx.ErrFormat, []string{"truncated"}},
		{"wrong magic", npz, onnx.ErrFormat, []string{"not"}},
		{"text", []byte("hello, world\n"), onnx.ErrFormat, []string{"not"}},
		{"short initializer", model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "b"}, []string{"y"})},
			[]*pb.TensorProto{raw("b", 1, f32(1, 2), 3)}), onnx.ErrFormat,
			[]string{`"b"`, "8 bytes of data for shape (3,) float32, want 12"}},
		{"short typed data", model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "b"}, []string{"y"})},
			[]*pb.TensorProto{{Name: proto.String("b"), DataType: proto.Int32(1), Dims: []int64{3}, FloatData: []float32{1}}}), onnx.ErrFormat,
			[]string{`"b"`, "1 values of data for shape (3,) float32, want 3"}},
		{"cycle", model(13, []*pb.NodeProto{relu("x", "a"), op("Add", "loop", []string{"a", "c"}, []string{"b"}), relu("b", "c"), relu("b", "y")}, nil),
			onnx.ErrFormat, []string{"cycle", `"loop" (Add)`, `"r_c" (Relu)`}},
		{"missing input", model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "w"}, []string{"y"})}, nil),
			onnx.ErrFormat, []string{`node "add" (Add) reads "w"`}},
		{"missing output", model(13, []*pb.NodeProto{relu("x", "z")}, nil), onnx.ErrFormat, []string{`output "y"`}},
		{"operator", model(13, []*pb.NodeProto{op("Einsum", "e", []string{"x"}, []string{"y"})}, nil),
			onnx.ErrUnsupported, []string{`node "e" (Einsum)`, "operator Einsum is not imported", "supported: Abs"}},
		{"opset", model(11, []*pb.NodeProto{relu("x", "y")}, nil), onnx.ErrUnsupported, []string{"opset 11", "13 to 17"}},
		{"attribute value", model(13, []*pb.NodeProto{op("MaxPool", "pool", []string{"x"}, []string{"y"}, intAttr("ceil_mode", 1))}, nil),
			onnx.ErrUnsupported, []string{`node "pool" (MaxPool)`, "ceil_mode = 1"}},
		{"unknown attribute", model(13, []*pb.NodeProto{op("Relu", "r", []string{"x"}, []string{"y"}, intAttr("fast", 1))}, nil),
			onnx.ErrUnsupported, []string{`node "r" (Relu)`, `attribute "fast"`}},
		{"domain", model(13, []*pb.NodeProto{{OpType: proto.String("Gelu"), Domain: proto.String("com.microsoft"), Input: []string{"x"}, Output: []string{"y"}}}, nil),
			onnx.ErrUnsupported, []string{`"#0" (Gelu)`, "com.microsoft"}},
		{"inputs", model(13, []*pb.NodeProto{op("Add", "a", []string{"x"}, []string{"y"})}, nil), onnx.ErrFormat, []string{"1 inputs", "2 to 2"}},
		{"element type", model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "s"}, []string{"y"})},
			[]*pb.TensorProto{raw("s", 8, nil, 1)}), onnx.ErrFormat, []string{"string"}},
		{"external data without a folder", model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "b"}, []string{"y"})},
			[]*pb.TensorProto{{Name: proto.String("b"), DataType: proto.Int32(1), Dims: []int64{3}, DataLocation: pb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("b.bin")}}}}),
			onnx.ErrFormat, []string{"Open(path)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := onnx.Read(bytes.NewReader(c.file))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q does not wrap %v", err, c.kind)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// External data is read from the model's folder, and refused outside it.
func TestExternalData(t *testing.T) {
	m, err := onnx.Open("testdata/mlp.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Params()) != 6 || m.Params()[0].Name != "fc1.weight" {
		t.Errorf("params %v", m.Params())
	}
	f, _ := os.Open("testdata/mlp.onnx")
	defer f.Close()
	if _, err := onnx.Read(f); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("Read of a model with external data: %v", err)
	}
	dir := t.TempDir()
	ext := func(loc string, length int) []byte {
		return model(13, []*pb.NodeProto{op("Add", "add", []string{"x", "b"}, []string{"y"})},
			[]*pb.TensorProto{{Name: proto.String("b"), DataType: proto.Int32(1), Dims: []int64{3}, DataLocation: pb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String(loc)},
					{Key: proto.String("offset"), Value: proto.String("4")}, {Key: proto.String("length"), Value: proto.String(strconv.Itoa(length))}}}})
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), f32(9, 1, 2, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		loc    string
		length int
		want   string
	}{{"w.bin", 12, ""}, {"w.bin", 16, "holds 16 bytes, want 16 at offset 4"}, {"../w.bin", 12, "inside the model's folder"}, {"/etc/passwd", 12, "relative"}, {"none.bin", 12, "no such file"}} {
		path := filepath.Join(dir, "m.onnx")
		if err := os.WriteFile(path, ext(c.loc, c.length), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := onnx.Open(path)
		if c.want == "" {
			if err != nil {
				t.Fatal(err)
			}
			y, err := m.Run(tensor.FromFloat32s([]float32{1, 1, 1}, 1, 3))
			if err != nil || !equal(y[0].Values(), []float64{2, 3, 4}) {
				t.Errorf("x + b = %v (%v), want (2, 3, 4)", y, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("location %q length %d: error %v, want %q", c.loc, c.length, err, c.want)
		}
	}
}

// equal compares float slices exactly.
func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Initializers of every dtype the safetensors reader knows decode to
// their values, stored raw and in the typed fields: floats as float
// tensors (half types widened to float32), integers and booleans exactly.
func TestInitializerDTypes(t *testing.T) {
	le := binary.LittleEndian
	u16 := func(v ...uint16) []byte {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			le.PutUint16(b[2*i:], x)
		}
		return b
	}
	u32 := func(v ...uint32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			le.PutUint32(b[4*i:], x)
		}
		return b
	}
	u64 := func(v ...uint64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			le.PutUint64(b[8*i:], x)
		}
		return b
	}
	f64 := func(v ...float64) []byte {
		b := make([]byte, 8*len(v))
		for i, x := range v {
			le.PutUint64(b[8*i:], math.Float64bits(x))
		}
		return b
	}
	neg := func(v int64) uint64 { return uint64(v) }
	for _, c := range []struct {
		name  string
		elem  int32
		raw   []byte
		typed *pb.TensorProto
		dt    tensor.DType
		want  []float64
	}{
		{"float32", 1, f32(1.5, -2), &pb.TensorProto{FloatData: []float32{1.5, -2}}, tensor.Float32, []float64{1.5, -2}},
		{"float64", 11, f64(1.25, -3), &pb.TensorProto{DoubleData: []float64{1.25, -3}}, tensor.Float64, []float64{1.25, -3}},
		{"float16", 10, u16(0x3C00, 0xC100), &pb.TensorProto{Int32Data: []int32{0x3C00, 0xC100}}, tensor.Float32, []float64{1, -2.5}},
		{"bfloat16", 16, u16(0x3F80, 0xC020), &pb.TensorProto{Int32Data: []int32{0x3F80, 0xC020}}, tensor.Float32, []float64{1, -2.5}},
		{"int64", 7, u64(7, neg(-9)), &pb.TensorProto{Int64Data: []int64{7, -9}}, tensor.Float64, []float64{7, -9}},
		{"uint64", 13, u64(7, 1<<40), &pb.TensorProto{Uint64Data: []uint64{7, 1 << 40}}, tensor.Float64, []float64{7, 1 << 40}},
		{"int32", 6, u32(7, uint32(neg(-9))), &pb.TensorProto{Int32Data: []int32{7, -9}}, tensor.Float64, []float64{7, -9}},
		{"uint32", 12, u32(7, 1<<31), &pb.TensorProto{Uint64Data: []uint64{7, 1 << 31}}, tensor.Float64, []float64{7, 1 << 31}},
		{"int16", 5, u16(7, 0xFFF7), &pb.TensorProto{Int32Data: []int32{7, -9}}, tensor.Float64, []float64{7, -9}},
		{"uint16", 4, u16(7, 60000), &pb.TensorProto{Int32Data: []int32{7, 60000}}, tensor.Float64, []float64{7, 60000}},
		{"int8", 3, []byte{7, 0xF7}, &pb.TensorProto{Int32Data: []int32{7, -9}}, tensor.Float64, []float64{7, -9}},
		{"uint8", 2, []byte{7, 200}, &pb.TensorProto{Int32Data: []int32{7, 200}}, tensor.Float64, []float64{7, 200}},
		{"bool", 9, []byte{1, 0}, &pb.TensorProto{Int32Data: []int32{1, 0}}, tensor.Float64, []float64{1, 0}},
	} {
		for _, form := range []string{"raw", "typed"} {
			tp := c.typed
			if form == "raw" {
				tp = &pb.TensorProto{RawData: c.raw}
			}
			tp.Name, tp.DataType, tp.Dims = proto.String("c"), proto.Int32(c.elem), []int64{2}
			m, err := onnx.Read(bytes.NewReader(model(13, []*pb.NodeProto{op("Identity", "id", []string{"c"}, []string{"y"})}, []*pb.TensorProto{tp}, tensorInfo("y", c.elem))))
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, form, err)
			}
			y, err := m.Run(tensor.Zeros(tensor.Float32, 1, 3))
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, form, err)
			}
			if y[0].DType() != c.dt || !equal(y[0].Values(), c.want) {
				t.Errorf("%s %s: got %v %v, want %v %v", c.name, form, y[0].DType(), y[0].Values(), c.dt, c.want)
			}
		}
	}
}

// Inputs that do not fit are errors naming the input or the node; a
// wrong number of inputs is misuse.
func TestCallErrors(t *testing.T) {
	shape := raw("shape", 7, []byte{4, 0, 0, 0, 0, 0, 0, 0}, 1)
	m, err := onnx.Read(bytes.NewReader(model(13, []*pb.NodeProto{op("Reshape", "flat", []string{"x", "shape"}, []string{"y"})}, []*pb.TensorProto{shape})))
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	if _, err := m.Call(g, g.Const(tensor.Zeros(tensor.Float32, 2, 4))); err == nil || !strings.Contains(err.Error(), `input "x" has shape (2, 4), the model takes (batch, 3)`) {
		t.Errorf("wrong input shape: %v", err)
	}
	if _, err := m.Call(g, g.Const(tensor.Zeros(tensor.Float32, 2, 3))); err == nil || !strings.Contains(err.Error(), `node "flat" (Reshape): cannot reshape (2, 3)`) {
		t.Errorf("bad reshape: %v", err)
	}
	if y, err := m.Run(tensor.Zeros(tensor.Float32, 4, 3)); err == nil || y != nil {
		t.Errorf("(4, 3) reshaped to (4): %v, %v", y, err)
	}
	numtest.Misuse(t, "onnx.Model.Call", numtest.Here(), func() { m.Call(g) }, "0 inputs, the model takes 1 (x (batch, 3))")           //nolint:errcheck
	numtest.Misuse(t, "onnx.Model.Call", numtest.Here(), func() { m.Call(g, g.Const(tensor.Zeros(tensor.Float64, 1, 3))) }, "float64") //nolint:errcheck
	numtest.Misuse(t, "onnx.Model.Forward", numtest.Here(), func() { m.Forward(g.Const(tensor.Zeros(tensor.Float32, 2, 3))) }, "cannot reshape (2, 3)")
	enc, err := onnx.Open("testdata/encoder17.onnx")
	if err != nil {
		t.Fatal(err)
	}
	numtest.Misuse(t, "onnx.Model.Forward", numtest.Here(), func() { enc.Forward(g.Const(tensor.Zeros(tensor.Float32, 2, 5, 16))) }, "2 inputs and 1 outputs; use Call")
}

// ElemTypeName names ONNX's element type codes.
func TestElemTypeName(t *testing.T) {
	for code, name := range map[int32]string{1: "float32", 11: "float64", 10: "float16", 16: "bfloat16", 7: "int64", 9: "bool", 8: "string", 14: "type 14"} {
		if got := onnx.ElemTypeName(code); got != name {
			t.Errorf("ElemTypeName(%d) = %q, want %q", code, got, name)
		}
	}
}

// Inspect describes a file that Read refuses (an operator and an output
// type Gradus does not import), and Model.Summary of a file Read takes is
// what Inspect says of it.
func TestSummary(t *testing.T) {
	b := model(17, []*pb.NodeProto{op("Einsum", "e", []string{"x"}, []string{"y"}),
		op("Relu", "r", []string{"x"}, []string{"z"})}, nil, tensorInfo("y", 8, 2), tensorInfo("z", 1, -1, 3))
	if _, err := onnx.Read(bytes.NewReader(b)); !errors.Is(err, onnx.ErrUnsupported) {
		t.Fatalf("Read: %v, want onnx.ErrUnsupported", err)
	}
	s, err := onnx.Inspect(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Inputs, s.Outputs, s.Operators, s.Nodes); got != "[x float32 (batch, 3)] [y string (2) z float32 (batch, 3)] map[Einsum:1 Relu:1] 2" {
		t.Errorf("summary %s", got)
	}
	m, err := onnx.Open("testdata/cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := onnx.Inspect(f)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Summary()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Model.Summary %+v, Inspect %+v", got, want)
	}
	if got.Initializers != 20 || got.Operators["Conv"] != 4 || !slices.Equal(m.Operators(), slices.Sorted(maps.Keys(want.Operators))) {
		t.Errorf("%d initializers, %v operators; Operators() = %v", got.Initializers, got.Operators, m.Operators())
	}
	got.Inputs[0].Shape[0] = 99 // a copy
	if m.Inputs()[0].Shape[0] != -1 {
		t.Error("Summary shares the model's input shapes")
	}
}
