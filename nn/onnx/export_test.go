package onnx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// exportDirEnv names a folder into which TestExportFamilies writes every
// exported model with its inputs and Gradus's outputs as .npy files, for
// testdata/export_check.py (make test-onnx) to check with onnx.checker
// and an independent NumPy evaluator of the ONNX operators.
const exportDirEnv = "GRADUS_ONNX_EXPORT_DIR"

// TestExportFamilies exports one model of every nn module family and
// reads the file back: opset, inputs and outputs with their dtypes,
// shapes and batch dimension, initializers under state-dict names with
// their shapes, the operators expected, and every node's inputs defined
// before it.
func TestExportFamilies(t *testing.T) {
	dir := os.Getenv(exportDirEnv)
	for _, c := range exportCases() {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Export(&buf, c.m, c.in, c.opts); err != nil {
				t.Fatal(err)
			}
			var m pb.ModelProto
			if err := proto.Unmarshal(buf.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			checkModel(t, &c, &m)
			if dir != "" {
				writeCase(t, dir, &c)
			}
		})
	}
}

func checkModel(t *testing.T, c *exportCase, m *pb.ModelProto) {
	t.Helper()
	if len(m.OpsetImport) != 1 || m.OpsetImport[0].GetVersion() != 17 || m.GetIrVersion() != 8 {
		t.Errorf("opset %v, IR version %d; want 17 and 8", m.OpsetImport, m.GetIrVersion())
	}
	gr := m.Graph
	want := c.outputs(c.in)
	if len(gr.Input) != len(c.in) || len(gr.Output) != len(want) {
		t.Fatalf("%d inputs and %d outputs, want %d and %d", len(gr.Input), len(gr.Output), len(c.in), len(want))
	}
	check := func(what string, vi *pb.ValueInfoProto, x *tensor.Tensor, index bool) {
		tt := vi.Type.GetTensorType()
		elem := exElemType(x.DType())
		if index {
			elem = int32(pb.TensorProto_INT64)
		}
		if tt.GetElemType() != elem {
			t.Errorf("%s %s: element type %d, want %d", what, vi.GetName(), tt.GetElemType(), elem)
		}
		dims := tt.Shape.Dim
		if len(dims) != x.Dim() {
			t.Fatalf("%s %s: %d dims, want shape %v", what, vi.GetName(), len(dims), x.Shape())
		}
		batch := 0
		for k, d := range dims {
			if d.GetDimParam() == "batch" {
				batch++
			} else if d.GetDimValue() != int64(x.Shape()[k]) {
				t.Errorf("%s %s: dim %d is %v, want %d", what, vi.GetName(), k, d, x.Shape()[k])
			}
		}
		if c.dynamic && batch != 1 || !c.dynamic && batch != 0 {
			t.Errorf("%s %s: %d batch dims; dynamic %v", what, vi.GetName(), batch, c.dynamic)
		}
	}
	for i, x := range c.in {
		check("input", gr.Input[i], x, slices.Contains(c.opts.IndexInputs, i))
	}
	for i, x := range want {
		check("output", gr.Output[i], x, false)
	}
	inits := map[string][]int64{}
	defined := map[string]bool{}
	for _, in := range gr.Initializer {
		inits[in.GetName()] = in.Dims
		defined[in.GetName()] = true
	}
	for name, shape := range c.inits {
		if got, ok := inits[name]; !ok || !slices.Equal(got, exDims(shape)) {
			t.Errorf("initializer %q: dims %v (present %v), want %v", name, got, ok, shape)
		}
	}
	// The initializers are the module's state under its names; the
	// constants the forward pass made are Constant nodes.
	for name := range inits {
		if _, ok := nn.State(c.m)[name]; !ok {
			t.Errorf("initializer %q is not in the module's state dict", name)
		}
	}
	for _, in := range gr.Input {
		defined[in.GetName()] = true
	}
	counts := map[string]int{}
	for _, n := range gr.Node {
		counts[n.GetOpType()]++
		for _, in := range n.Input {
			if !defined[in] {
				t.Errorf("node %s (%s) reads %q before it is defined", n.GetName(), n.GetOpType(), in)
			}
		}
		for _, out := range n.Output {
			if defined[out] {
				t.Errorf("node %s defines %q twice", n.GetName(), out)
			}
			defined[out] = true
		}
	}
	for op, k := range c.ops {
		if counts[op] != k {
			t.Errorf("%d %s nodes, want %d (all: %v)", counts[op], op, k, counts)
		}
	}
}

// writeCase saves c's model and, as .npy files, its inputs and outputs;
// for a dynamic batch also inputs and outputs at a larger batch.
func writeCase(t *testing.T, dir string, c *exportCase) {
	t.Helper()
	base := filepath.Join(dir, "export_"+c.name)
	if err := Save(base+".onnx", c.m, c.in, c.opts); err != nil {
		t.Fatal(err)
	}
	write := func(tag string, in []*tensor.Tensor) {
		for i, x := range in {
			writeNPY(t, fmt.Sprintf("%s.%s.in%d.npy", base, tag, i), x, slices.Contains(c.opts.IndexInputs, i))
		}
		for i, y := range c.outputs(in) {
			writeNPY(t, fmt.Sprintf("%s.%s.out%d.npy", base, tag, i), y, false)
		}
	}
	write("a", c.in)
	if !c.dynamic {
		return
	}
	big := c.bigger()
	write("b", big)
}

// bigger returns c's inputs with a larger batch: the examples, others
// made from them, and the first again.
func (c *exportCase) bigger() []*tensor.Tensor {
	big := make([]*tensor.Tensor, len(c.in))
	for i, x := range c.in {
		ax := 0
		if c.opts.BatchAxes != nil {
			ax = c.opts.BatchAxes[i]
		}
		other := x
		if !slices.Contains(c.opts.IndexInputs, i) {
			other = tensor.AddScalar(tensor.MulScalar(x, -0.5), 0.25)
		}
		big[i] = tensor.Concat(ax, x, other, tensor.Slice(x, ax, 0, 1, 1))
	}
	return big
}

// writeNPY writes x as a NumPy .npy file (format 1.0): float32 or float64,
// or int64 for index inputs.
func writeNPY(t *testing.T, path string, x *tensor.Tensor, index bool) {
	t.Helper()
	descr, v := "<f4", x.Contiguous().Values()
	switch {
	case index:
		descr = "<i8"
	case x.DType() == tensor.Float64:
		descr = "<f8"
	}
	shape := ""
	for _, d := range x.Shape() {
		shape += fmt.Sprintf("%d, ", d)
	}
	if x.Dim() > 1 {
		shape = strings.TrimSuffix(shape, ", ")
	} else {
		shape = strings.TrimSuffix(shape, " ")
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	for _, f := range v {
		switch descr {
		case "<i8":
			binary.Write(&b, binary.LittleEndian, int64(f))
		case "<f4":
			binary.Write(&b, binary.LittleEndian, math.Float32bits(float32(f)))
		default:
			binary.Write(&b, binary.LittleEndian, math.Float64bits(f))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A graph whose op parameters or constants follow the batch (a slice
// that drops the last example, a constant made from the batch size) is
// written with a fixed batch.
func TestExportBatchDependent(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	m := nn.NewLinear(tensor.NewRNG(1), 2, 2, true, tensor.Float64)
	for _, c := range []struct {
		name string
		fwd  func(g *graph.Graph, in []*graph.Node) []*graph.Node
		out  string
	}{
		{"slice", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{m.Forward(graph.Slice(in[0], 0, 0, in[0].Shape()[0]-1, 1))}
		}, "[output float64 (2, 2)]"},
		{"constant", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			inv := tensor.Full(tensor.Float64, 1/float64(in[0].Shape()[0]), 2)
			return []*graph.Node{graph.Mul(m.Forward(in[0]), g.Const(inv))}
		}, "[output float64 (3, 2)]"},
	} {
		var buf bytes.Buffer
		if err := Export(&buf, m, []*tensor.Tensor{x}, ExportOptions{Forward: c.fwd}); err != nil {
			t.Fatal(err)
		}
		s, err := Inspect(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(s.Inputs, s.Outputs); got != "[input float64 (3, 2)] "+c.out {
			t.Errorf("%s: inputs and outputs %s; want fixed shapes", c.name, got)
		}
	}
}

// An op without a row in the table is an error naming it.
func TestExportUnmapped(t *testing.T) {
	m := nn.NewLinear(tensor.NewRNG(1), 2, 2, true, tensor.Float64)
	err := Export(&bytes.Buffer{}, m, []*tensor.Tensor{tensor.Zeros(tensor.Float64, 2, 2)}, ExportOptions{
		Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.Lgamma(graph.AddScalar(m.Forward(in[0]), 3))}
		},
	})
	if !errors.Is(err, ErrNotExportable) || !strings.Contains(err.Error(), `graph op "lgamma"`) {
		t.Errorf("err = %v, want ErrNotExportable naming lgamma", err)
	}
}

// A forward pass that draws random numbers is refused, and so is a Var
// that is not the module's.
func TestExportRefuses(t *testing.T) {
	rng := tensor.NewRNG(1)
	x := []*tensor.Tensor{tensor.Ones(tensor.Float32, 4, 3)}
	drop := nn.NewSequential(nn.NewLinear(rng, 3, 3, true, tensor.Float32), nn.NewDropout(rng, 0.5))
	err := Export(&bytes.Buffer{}, drop, x, ExportOptions{})
	if !errors.Is(err, ErrNotExportable) || !strings.Contains(err.Error(), "SetTraining(false)") {
		t.Errorf("dropout in training mode: err = %v", err)
	}
	other := nn.NewLinear(rng, 3, 3, true, tensor.Float32)
	err = Export(&bytes.Buffer{}, drop, x, ExportOptions{Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		return []*graph.Node{other.Forward(in[0])}
	}})
	if !errors.Is(err, ErrNotExportable) || !strings.Contains(err.Error(), "neither an input nor a parameter") {
		t.Errorf("a foreign parameter: err = %v", err)
	}
}

func TestExportMisuse(t *testing.T) {
	m := nn.NewLinear(tensor.NewRNG(1), 2, 2, true, tensor.Float32)
	x := tensor.Zeros(tensor.Float32, 1, 2)
	var b bytes.Buffer
	one := []*tensor.Tensor{x}
	// Each check is on one line: the panic names the line of the Export call.
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, nil, one, ExportOptions{}) }, "nil module")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, nil, ExportOptions{}) }, "no example inputs")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, []*tensor.Tensor{x, x}, ExportOptions{}) }, "set ExportOptions.Forward")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, one, ExportOptions{BatchAxes: []int{2}}) }, "batch axis 2")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, one, ExportOptions{IndexInputs: []int{1}}) }, "index input 1")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, one, ExportOptions{OutputNames: []string{"a", "b"}}) }, "2 output names for 1 outputs")
	numtest.Misuse(t, "onnx.Export", numtest.Here(), func() { Export(&b, m, one, ExportOptions{InputNames: []string{"weight"}}) }, `"weight" is empty or already names`)
}

// Save replaces a file whole and leaves it as it was when the export fails.
func TestSave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.onnx")
	m := nn.NewLinear(tensor.NewRNG(1), 2, 2, true, tensor.Float32)
	x := []*tensor.Tensor{tensor.Zeros(tensor.Float32, 1, 2)}
	if err := Save(path, m, x, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	err := Save(path, m, x, ExportOptions{Forward: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Lgamma(in[0])}
	}})
	if !errors.Is(err, ErrNotExportable) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want ErrNotExportable naming %s", err, path)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed Save changed the file")
	}
	var pm pb.ModelProto
	if err := proto.Unmarshal(before, &pm); err != nil || pm.Graph.GetName() != "gradus" {
		t.Errorf("saved file: %v, graph %q", err, pm.Graph.GetName())
	}
}

// Inspect summarises a file that Export wrote, and refuses bytes that are
// not a model, naming the file.
func TestInspect(t *testing.T) {
	c := exportCases()[10] // lstm: three inputs and outputs, a batch on axis 1 of the states
	if c.name != "lstm" {
		t.Fatalf("case %q, want lstm", c.name)
	}
	path := filepath.Join(t.TempDir(), "lstm.onnx")
	if err := Save(path, c.m, c.in, c.opts); err != nil {
		t.Fatal(err)
	}
	s, err := InspectFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.IRVersion != 8 || s.Opsets[""] != 17 || s.Producer != "gradus" || s.Graph != "gradus" {
		t.Errorf("summary %+v", s)
	}
	wantIn := "[input0 float32 (batch, 3, 3) input1 float32 (2, batch, 4) input2 float32 (2, batch, 4)]"
	if fmt.Sprint(s.Inputs) != wantIn {
		t.Errorf("inputs %v, want %v", s.Inputs, wantIn)
	}
	if in := s.Inputs[1]; in.ElemType != "float32" || !slices.Equal(in.Shape, []int{2, -1, 4}) || !slices.Equal(in.Dims, []string{"", "batch", ""}) {
		t.Errorf("input 1: %#v", in)
	}
	if len(s.Outputs) != 3 || fmt.Sprint(s.Outputs[0]) != "output0 float32 (batch, 3, 4)" {
		t.Errorf("outputs %v", s.Outputs)
	}
	if s.Parameters < int64(nn.NumParams(c.m)) || s.Operators["Sigmoid"] != 18 || s.Operators["Identity"] != 3 {
		t.Errorf("%d parameters (the module has %d), operators %v", s.Parameters, nn.NumParams(c.m), s.Operators)
	}
	bad := filepath.Join(t.TempDir(), "bad.onnx")
	os.WriteFile(bad, []byte("not a model at all"), 0o644)
	if _, err := InspectFile(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "not an ONNX model") {
		t.Errorf("corrupt file: err = %v", err)
	}
}

// The .npy files make test-onnx reads are what data.LoadNPY reads.
func TestWriteNPY(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		x     *tensor.Tensor
		index bool
	}{
		{tensor.FromFloat64s([]float64{1.5, -2, 3, 4, 5, 6}, 2, 3).Cast(tensor.Float32), false},
		{tensor.FromFloat64s([]float64{0.1, 0.2, 0.3}, 3), false},
		{tensor.FromFloat64s([]float64{3, 0, 6, 1}, 2, 2), true},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%d.npy", i))
		writeNPY(t, path, c.x, c.index)
		got, err := data.LoadNPY(path)
		if err != nil {
			t.Fatal(err)
		}
		want := c.x
		if c.index {
			want = c.x.Cast(tensor.Float64)
		}
		if got.DType() != want.DType() || !slices.Equal(got.Shape(), want.Shape()) || !slices.Equal(got.Values(), want.Values()) {
			t.Errorf("%d: read %v %v %v, want %v %v %v", i, got.DType(), got.Shape(), got.Values(), want.DType(), want.Shape(), want.Values())
		}
	}
}
