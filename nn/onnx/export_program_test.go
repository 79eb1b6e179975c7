package onnx

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/nn/onnx/internal/pb"
	"github.com/gradus-ml/gradus/tensor"
)

// capturedMLP captures an MLP's forward pass, with an elementwise tail
// that the capture fuses, on x and the MLP's parameters.
func capturedMLP(t *testing.T) (*graph.Program, []*tensor.Tensor, nn.Module) {
	t.Helper()
	rng := tensor.NewRNG(3)
	mlp := nn.NewSequential(nn.NewLinear(rng, 4, 8, true, tensor.Float32), nn.Tanh{}, nn.NewLinear(rng, 8, 3, true, tensor.Float32))
	mlp.SetTraining(false)
	in := append([]*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 5, 4)}, nn.Values(mlp.Params())...)
	fn := func(g *graph.Graph, x []*graph.Node) []*graph.Node {
		y := mlp.Forward(x[0])
		return []*graph.Node{graph.AddScalar(graph.MulScalar(graph.Exp(graph.Neg(graph.Square(y))), 2), 0.5)}
	}
	p, err := graph.Capture(fn, in, graph.CaptureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p, in, mlp
}

// A captured MLP forward, fused steps and all, exports as the ops it
// fused; re-imported it computes what the program computes and has the
// MLP's parameters. With GRADUS_ONNX_EXPORT_DIR set it is written there
// for export_check.py (make test-onnx) as export_program_mlp.
func TestExportProgram(t *testing.T) {
	p, in, mlp := capturedMLP(t)
	fused := false
	for _, s := range p.Steps() {
		fused = fused || strings.HasPrefix(s.Op, "fused(")
	}
	if !fused {
		t.Fatalf("no fused step in the captured program:\n%v", p)
	}
	want, err := p.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ExportProgram(&buf, p, in, mlp, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	var mp pb.ModelProto
	if err := proto.Unmarshal(buf.Bytes(), &mp); err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, n := range mp.Graph.Node {
		ops[n.GetOpType()]++
	}
	if len(mp.Graph.Input) != 1 || len(mp.Graph.Initializer) != 4 || ops["Exp"] != 1 || ops["Neg"] != 1 || ops["Tanh"] != 1 {
		t.Errorf("%d inputs, %d initializers, operators %v", len(mp.Graph.Input), len(mp.Graph.Initializer), ops)
	}
	m, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got, w := paramNames(m.Params()), paramNames(mlp.Params()); strings.Join(got, " ") != strings.Join(w, " ") {
		t.Errorf("parameters %v, want %v", got, w)
	}
	got, err := m.Run(in[0])
	if err != nil {
		t.Fatal(err)
	}
	g, w := got[0].Contiguous().Values(), want[0].Contiguous().Values()
	if len(g) != len(w) {
		t.Fatalf("%d values, want %d", len(g), len(w))
	}
	for i := range w {
		if math.Abs(g[i]-w[i]) > 1e-6 {
			t.Fatalf("element %d: %v, want %v", i, g[i], w[i])
		}
	}
	if dir := os.Getenv(exportDirEnv); dir != "" {
		base := filepath.Join(dir, "export_program_mlp")
		if err := os.WriteFile(base+".onnx", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		writeNPY(t, base+".a.in0.npy", in[0], false)
		writeNPY(t, base+".a.out0.npy", want[0], false)
	}
	// Misuse panics; a module's state alone is no graph input.
	for _, f := range []func(){
		func() { ExportProgram(&buf, nil, in, mlp, ExportOptions{}) },
		func() { ExportProgram(&buf, p, in, mlp, ExportOptions{IndexInputs: []int{0}}) },
		func() { ExportProgram(&buf, p, in[1:], mlp, ExportOptions{}) },
	} {
		func() {
			defer func() {
				if _, ok := recover().(*tensor.Error); !ok {
					t.Error("no *tensor.Error panic")
				}
			}()
			f()
		}()
	}
}
