//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// TestTransformsOnGPU: per-example gradients (vmap of grad) of a small
// perceptron give on the GPU what they give on the CPU; capturing a step
// on GPU tensors is refused with ErrNotCapturable (programs run on the
// CPU), inputs and parameters alike.
func TestTransformsOnGPU(t *testing.T) {
	dev := device(t)
	w1, w2 := randn(tensor.Float32, 81, 5, 7), randn(tensor.Float32, 82, 7, 3)
	w2g := w2.To(dev)
	xs, ys := randn(tensor.Float32, 83, 6, 5), randn(tensor.Float32, 84, 6, 3)
	loss := func(p, ex []*graph.Node) *graph.Node {
		h := graph.Tanh(graph.MatMul(graph.Reshape(ex[0], 1, 5), p[0]))
		r := graph.Sub(graph.MatMul(h, p[1]), graph.Reshape(ex[1], 1, 3))
		return graph.Sum(graph.Mul(r, r), nil, false)
	}
	perExample := func(d tensor.Device) []*tensor.Tensor {
		g := graph.New()
		ps := []*graph.Node{g.Var(w1.To(d)), g.Var(w2.To(d))}
		grads := autodiff.PerExampleGrads(loss, ps, []*graph.Node{g.Const(xs.To(d)), g.Const(ys.To(d))})
		return []*tensor.Tensor{grads[0].Value(), grads[1].Value()}
	}
	pg, pc := perExample(dev), perExample(tensor.CPU)
	for i := range pc {
		near(t, "per-example gradient", pg[i], pc[i], 1e-5)
	}

	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		l := loss([]*graph.Node{in[0], g.VarOf(w2g)}, []*graph.Node{graph.Reshape(in[1], 5), graph.Reshape(in[2], 3)})
		return append([]*graph.Node{l}, autodiff.Grad(l, in[0])...)
	}
	x0, y0 := tensor.Slice(xs, 0, 0, 1, 1), tensor.Slice(ys, 0, 0, 1, 1)
	// A step on CPU inputs whose values come from a GPU parameter alone.
	onParam := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		p := g.VarOf(w2g)
		return []*graph.Node{graph.Sum(graph.Mul(p, p), nil, false)}
	}
	for _, c := range []struct {
		what string
		step graph.StepFunc
		in   []*tensor.Tensor
	}{
		{"a GPU input", step, []*tensor.Tensor{w1.To(dev), x0, y0}},
		{"a GPU parameter read through VarOf", onParam, []*tensor.Tensor{x0}},
	} {
		_, err := graph.Capture(c.step, c.in, graph.CaptureOptions{})
		if !errors.Is(err, graph.ErrNotCapturable) || !strings.Contains(err.Error(), "run the step eagerly on the GPU") {
			t.Errorf("capture with %s: %v, want ErrNotCapturable saying to run it eagerly", c.what, err)
		}
	}
}

// TestConstantsBeforeFirstGPULeaf: ops on CPU constants recorded before
// the graph meets its first GPU leaf (a noise batch reshaped for a
// generator, as gan.Generator does) run on the CPU; their values follow
// the graph to the GPU when a GPU op reads them, and the result and the
// parameter's gradient equal the CPU's.
func TestConstantsBeforeFirstGPULeaf(t *testing.T) {
	dev := device(t)
	z, w := randn(tensor.Float32, 91, 4, 6), randn(tensor.Float32, 92, 3, 2)
	run := func(d tensor.Device) (*tensor.Tensor, *tensor.Tensor) {
		g := graph.New()
		zn := graph.Reshape(g.Const(z), 4, 3, 2) // on the CPU: no GPU leaf yet
		wn := g.Var(w.To(d))
		y := graph.Sum(graph.Mul(graph.Tanh(zn), wn), nil, false)
		return y.Value(), autodiff.Grad(y, wn)[0].Value()
	}
	gy, gg := run(dev)
	cy, cg := run(tensor.CPU)
	near(t, "value", gy, cy, 1e-5)
	near(t, "gradient", gg, cg, 1e-5)
}
