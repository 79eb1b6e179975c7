package onnx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/graph"
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
				addSource(t, got, z.sources[p.Name], p.Name, grads[k].Value(), z.fx)
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
// was made from (see source in testdata/zoo.py).
func addSource(t *testing.T, got map[string]*tensor.Tensor, src, init string, gr *tensor.Tensor, fx map[string]*tensor.Tensor) {
	add := func(name string, v *tensor.Tensor) {
		v = v.Contiguous()
		if old := got[name]; old != nil {
			v = tensor.Add(old, v)
		}
		got[name] = v
	}
	parts := strings.Split(src, ":")
	switch {
	case src == "":
		t.Errorf("initializer %q has no PyTorch source", init)
	case len(parts) == 1:
		add(src, gr)
	case parts[0] == "T":
		add(parts[1], tensor.Transpose(gr))
	case parts[0] == "R":
		add(parts[1], tensor.Reshape(gr, fx["grad_param."+parts[1]].Shape()...))
	default: // LSTM|GRU:prefix:layer:W|R|B
		order := []int{0, 3, 1, 2}
		if parts[0] == "GRU" {
			order = []int{1, 0, 2}
		}
		for d := range gr.Shape()[0] {
			sfx := []string{"", "_reverse"}[d]
			gd := tensor.Reshape(tensor.Slice(gr, 0, d, d+1, 1).Contiguous(), gr.Shape()[1:]...)
			halves := map[string]*tensor.Tensor{"weight_ih": gd}
			switch parts[3] {
			case "R":
				halves = map[string]*tensor.Tensor{"weight_hh": gd}
			case "B":
				h := tensor.Split(gd, 0, gd.Shape()[0]/2, gd.Shape()[0]/2)
				halves = map[string]*tensor.Tensor{"bias_ih": h[0], "bias_hh": h[1]}
			}
			for kind, v := range halves {
				size := v.Shape()[0] / len(order)
				chunks := tensor.Split(v, 0, slices.Repeat([]int{size}, len(order))...)
				torch := make([]*tensor.Tensor, len(order))
				for j, o := range order {
					torch[o] = chunks[j]
				}
				add(fmt.Sprintf("%s.%s_l%s%s", parts[1], kind, parts[2], sfx), tensor.Concat(0, torch...))
			}
		}
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
