package onnx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
)

// zoo is a model exported by testdata/zoo.py with its expected values:
// inputs in0…, the first output, the weighting r of the scalar
// sum(out·r), and PyTorch's gradients of that scalar.
type zoo struct {
	m       *Model
	fx      map[string]*tensor.Tensor
	sources map[string]string // initializer → the PyTorch parameters it came from
}

func loadZoo(t *testing.T, name string) zoo {
	t.Helper()
	m, err := Open("testdata/" + name + ".onnx")
	if err != nil {
		t.Fatal(err)
	}
	fx, err := data.LoadNPZ("testdata/" + name + ".npz")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	z := zoo{m: m, fx: fx}
	if err := json.Unmarshal(b, &z.sources); err != nil {
		t.Fatal(err)
	}
	return z
}

// maxAbsDiff returns max |a − b|, or +Inf when the shapes differ.
func maxAbsDiff(a, b *tensor.Tensor) float64 {
	if !slices.Equal(a.Shape(), b.Shape()) {
		return math.Inf(1)
	}
	av, bv := a.Values(), b.Values()
	d := 0.0
	for i := range av {
		d = max(d, math.Abs(av[i]-bv[i]))
	}
	return d
}

// The zoo's models reproduce PyTorch's outputs to 1e-5 and the gradients
// of sum(out·r) with respect to the float inputs and every parameter to
// 1e-4 (float32 throughout). Gradients of initializers the exporter made
// from PyTorch parameters (transposed weights, the gate-reordered LSTM
// and GRU weights) are mapped back and summed per parameter.
func TestZoo(t *testing.T) {
	for _, name := range []string{"mlp", "cnn", "lstm", "gru", "encoder13", "encoder17", "decoder", "ops", "ops2", "digits"} {
		t.Run(name, func(t *testing.T) {
			z := loadZoo(t, name)
			g := graph.New()
			var ins, vars []*graph.Node
			for i, vi := range z.m.Inputs() {
				x := z.fx["in"+strconv.Itoa(i)]
				if x == nil {
					t.Fatalf("no in%d in the fixture", i)
				}
				if vi.ElemType == "float32" {
					ins = append(ins, g.Var(x))
					vars = append(vars, ins[i])
				} else {
					ins = append(ins, g.Const(x))
				}
			}
			outs, err := z.m.Call(g, ins...)
			if err != nil {
				t.Fatal(err)
			}
			d := maxAbsDiff(outs[0].Value(), z.fx["out"])
			t.Logf("%s: output max abs diff %.2g", name, d)
			if d > 1e-5 {
				t.Errorf("output differs from PyTorch's by %g (shape %v, want %v)", d, outs[0].Shape(), z.fx["out"].Shape())
			}
			loss := graph.Sum(graph.Mul(outs[0], g.Const(z.fx["r"])), nil, false)
			ps := z.m.Params()
			wrt := slices.Clone(vars)
			for _, p := range ps {
				if n := g.Bound(p.Value); n != nil {
					wrt = append(wrt, n)
				}
			}
			grads := autodiff.Grad(loss, wrt...)
			worst := 0.0
			for i := range vars {
				worst = max(worst, checkGrad(t, "input "+strconv.Itoa(i), grads[i].Value(), z.fx["grad_in"+strconv.Itoa(i)]))
			}
			got := map[string]*tensor.Tensor{}
			k := len(vars)
			for _, p := range ps {
				if g.Bound(p.Value) == nil {
					continue
				}
				addSource(t, got, z.sources[p.Name], p.Name, grads[k].Value())
				k++
			}
			for key, want := range z.fx {
				if name, ok := strings.CutPrefix(key, "grad_param."); ok {
					worst = max(worst, checkGrad(t, name, got[name], want))
				}
			}
			t.Logf("%s: gradient max abs diff %.2g", name, worst)
		})
	}
}

// checkGrad compares a gradient with PyTorch's to 1e-4 and returns the
// difference.
func checkGrad(t *testing.T, what string, got, want *tensor.Tensor) float64 {
	t.Helper()
	if got == nil || want == nil {
		t.Errorf("%s: gradient missing (got %v, want %v)", what, got != nil, want != nil)
		return 0
	}
	d := maxAbsDiff(got, want)
	if d > 1e-4 {
		t.Errorf("%s: gradient differs from PyTorch's by %g", what, d)
	}
	return d
}

// addSource adds an initializer's gradient to the PyTorch parameters it
// was made from (see source in testdata/zoo.py), laid out by the rules of
// TorchStateDict.
func addSource(t *testing.T, got map[string]*tensor.Tensor, src, init string, gr *tensor.Tensor) {
	t.Helper()
	if src == "" {
		t.Errorf("initializer %q has no PyTorch source", init)
		return
	}
	parts, err := torchLayout(src, init, gr)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		v := p.t.Contiguous()
		if old := got[p.name]; old != nil {
			v = tensor.Add(old, v)
		}
		got[p.name] = v
	}
}

// In training mode the CNN's batch normalisations use the batch's
// statistics and update their running ones as PyTorch's train() does;
// evaluation mode, the mode a model is read in, leaves them alone.
func TestBatchNormTraining(t *testing.T) {
	z := loadZoo(t, "cnn")
	before := map[string]*tensor.Tensor{}
	for _, b := range z.m.Buffers() {
		before[b.Name] = b.Value.Clone()
	}
	if _, err := z.m.Run(z.fx["in0"]); err != nil {
		t.Fatal(err)
	}
	for _, b := range z.m.Buffers() {
		if maxAbsDiff(b.Value, before[b.Name]) != 0 {
			t.Errorf("evaluation mode changed %s", b.Name)
		}
	}
	z.m.SetTraining(true)
	ys, err := z.m.Run(z.fx["in0"])
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(ys[0], z.fx["train_out"]); d > 1e-5 {
		t.Errorf("training-mode output differs from PyTorch's by %g", d)
	}
	if len(z.m.Buffers()) != 6 {
		t.Errorf("%d buffers, want 6", len(z.m.Buffers()))
	}
	for _, b := range z.m.Buffers() {
		if d := maxAbsDiff(b.Value, z.fx["train_buffer."+b.Name]); d > 1e-6 {
			t.Errorf("%s differs from PyTorch's after a training step by %g", b.Name, d)
		}
	}
}

// A model PyTorch exported, imported, exported again by Gradus and
// re-imported computes what the first import computes, and has the same
// parameters and buffers under the same names (for PyTorch's models, the
// state-dict names): the constants the forward pass made (pooling
// divisors, zero states) are Constant nodes, not initializers.
func TestReexport(t *testing.T) {
	for _, name := range []string{"mlp", "cnn", "lstm", "gru", "decoder", "ops", "digits"} {
		t.Run(name, func(t *testing.T) {
			z := loadZoo(t, name)
			var buf bytes.Buffer
			if err := Export(&buf, z.m, []*tensor.Tensor{z.fx["in0"]}, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := Read(&buf)
			if err != nil {
				t.Fatal(err)
			}
			want, err := z.m.Run(z.fx["in0"])
			if err != nil {
				t.Fatal(err)
			}
			got, err := back.Run(z.fx["in0"])
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(got[0], want[0]); d > 1e-6 {
				t.Errorf("re-exported model's output differs by %g", d)
			}
			if got, want := paramNames(back.Params()), paramNames(z.m.Params()); !slices.Equal(got, want) {
				t.Errorf("parameters %v, want %v", got, want)
			}
			if got, want := paramNames(back.Buffers()), paramNames(z.m.Buffers()); !slices.Equal(got, want) {
				t.Errorf("buffers %v, want %v", got, want)
			}
		})
	}
}

// TorchStateDict maps every zoo model's initializers back to the PyTorch
// module's state dict: exactly its parameters (those PyTorch reported
// gradients for) and running statistics, in PyTorch's shapes, with the
// two copies of a Linear used twice (gru: Gemm and MatMul) agreeing.
// With GRADUS_ONNX_TORCH_DIR set it writes them there as NAME.safetensors,
// which `make test-onnx-import` loads into the PyTorch modules with
// strict=True and runs (testdata/torch_load.py --zoo).
func TestTorchStateDict(t *testing.T) {
	dir := os.Getenv("GRADUS_ONNX_TORCH_DIR")
	for _, name := range []string{"mlp", "cnn", "lstm", "gru", "encoder13", "encoder17", "decoder", "ops", "ops2", "digits"} {
		t.Run(name, func(t *testing.T) {
			z := loadZoo(t, name)
			sd, err := TorchStateDict(z.m, z.sources)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]int{}
			for key, g := range z.fx {
				if name, ok := strings.CutPrefix(key, "grad_param."); ok {
					want[name] = g.Shape()
				}
			}
			for _, b := range z.m.Buffers() {
				want[b.Name] = b.Value.Shape()
			}
			for k, shape := range want {
				if sd[k] == nil || !slices.Equal(sd[k].Shape(), shape) {
					t.Errorf("%s: %v, want shape %v", k, sd[k], shape)
				}
			}
			if len(sd) != len(want) {
				t.Errorf("%d tensors, want %d", len(sd), len(want))
			}
			if dir != "" {
				if err := checkpoint.WriteFile(filepath.Join(dir, name+".safetensors"), sd, nil); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TorchStateDict's rules on values: a transpose, PReLU's flattening and
// the gate order of a one-layer LSTM's B; and its errors.
func TestTorchStateDictRules(t *testing.T) {
	z := loadZoo(t, "gru")
	w := z.m.floats["fc.weight"].Value
	sd, err := TorchStateDict(z.m, z.sources)
	if err != nil {
		t.Fatal(err)
	}
	if !exBitsEqual(sd["fc.weight"], w) || sd["fc.weight"] == w {
		t.Error("fc.weight is not a copy of the initializer")
	}
	// B of a bidirectional LSTM with hidden size 1: gates i o f c per
	// direction, then the same for the hidden bias.
	b := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 18}, 2, 8)
	parts, err := torchLayout("LSTM::0:B", "b", b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, p := range parts {
		got[p.name] = p.t.Values()
	}
	want := map[string][]float64{"bias_ih_l0": {1, 3, 4, 2}, "bias_hh_l0": {5, 7, 8, 6},
		"bias_ih_l0_reverse": {11, 13, 14, 12}, "bias_hh_l0_reverse": {15, 17, 18, 16}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("LSTM B: %v, want %v", got, want)
	}
	parts, err = torchLayout("R:prelu.weight", "p", tensor.FromFloat64s([]float64{1, 2, 3}, 3, 1, 1))
	if err != nil || len(parts) != 1 || fmt.Sprint(parts[0].t.Shape()) != "[3]" {
		t.Errorf("R: %v %v", parts, err)
	}
	for rule, msg := range map[string]string{"X:a:b": "not T:name", "LSTM:x:one:W": "not a number", "GRU:x:0:Q": "not W, R or B"} {
		if _, err := torchLayout(rule, "b", b); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", rule, err, msg)
		}
	}
	if _, err := TorchStateDict(z.m, map[string]string{"nope": "x"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown initializer: %v", err)
	}
	// The two copies of fc's weight trained apart no longer agree.
	z.m.floats["fc.weight"].Value.Float32s()[0] += 1
	if _, err := TorchStateDict(z.m, z.sources); err == nil || !strings.Contains(err.Error(), "different values") {
		t.Errorf("diverged copies: %v", err)
	}
}
