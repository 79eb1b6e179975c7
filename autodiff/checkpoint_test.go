package autodiff_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// A chain of tanh layers, rematerialised in segments of two: the gradient
// is the plain chain's, bit for bit, and the step keeps fewer buffers.
func ExampleCheckpoint() {
	rng := tensor.NewRNG(1)
	ws := make([]*tensor.Tensor, 8)
	for i := range ws {
		ws[i] = rng.Normal(tensor.Float64, 0, 0.3, 64, 64)
	}
	x := rng.Normal(tensor.Float64, 0, 1, 256, 64)
	layer := func(h, w *graph.Node) *graph.Node { return graph.Tanh(graph.MatMul(h, w)) }
	run := func(remat bool) ([]float64, int64) {
		g := graph.New()
		params := make([]*graph.Node, len(ws))
		for i, w := range ws {
			params[i] = g.Var(w)
		}
		h := g.Const(x)
		for i := 0; i < len(ws); i += 2 {
			seg := func(in []*graph.Node) *graph.Node { return layer(layer(in[0], in[1]), in[2]) }
			if remat {
				h = autodiff.Checkpoint(seg, h, params[i], params[i+1])
			} else {
				h = seg([]*graph.Node{h, params[i], params[i+1]})
			}
		}
		grads := autodiff.Grad(graph.Sum(graph.Square(h), nil, false), params...)
		return grads[0].Value().Values(), g.BufferBytes()
	}
	plain, plainBytes := run(false)
	remat, rematBytes := run(true)
	fmt.Println("same gradient:", fmt.Sprint(plain) == fmt.Sprint(remat))
	fmt.Printf("buffers: %.2f of the plain chain's\n", float64(rematBytes)/float64(plainBytes))
	// Output:
	// same gradient: true
	// buffers: 0.57 of the plain chain's
}

func TestCheckpointInputUsedInsideAndOutside(t *testing.T) {
	// w is read inside the segment and after it; x through a view.
	rng := tensor.NewRNG(2)
	xv, wv := rng.Normal(tensor.Float64, 0, 1, 4, 3), rng.Normal(tensor.Float64, 0, 1, 3)
	grads := func(remat bool) []*tensor.Tensor {
		g := graph.New()
		x, w := g.Var(xv), g.Var(wv)
		seg := func(in []*graph.Node) *graph.Node {
			return graph.Exp(graph.Mul(graph.Transpose(in[0]), graph.Reshape(in[1], 3, 1)))
		}
		var y *graph.Node
		if remat {
			y = autodiff.Checkpoint(seg, x, w)
		} else {
			y = seg([]*graph.Node{x, w})
		}
		loss := graph.Sum(graph.Mul(y, graph.Reshape(w, 3, 1)), nil, false)
		gs := autodiff.Grad(loss, x, w)
		return []*tensor.Tensor{gs[0].Value(), gs[1].Value()}
	}
	want, got := grads(false), grads(true)
	for i := range want {
		assert.InDeltaSlice(t, want[i].Values(), got[i].Values(), 1e-14)
	}
}

func TestCheckpointMisuse(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	id := func(in []*graph.Node) *graph.Node { return graph.Neg(in[0]) }
	numtest.Misuse(t, "Checkpoint", numtest.Here(), func() { autodiff.Checkpoint(nil, x) }, "nil function")
	numtest.Misuse(t, "Checkpoint", numtest.Here(), func() { autodiff.Checkpoint(id) }, "no inputs")
	numtest.Misuse(t, "Checkpoint", numtest.Here(), func() { autodiff.Checkpoint(id, x, x) }, "share one value")
	none := func([]*graph.Node) *graph.Node { return nil }
	numtest.Misuse(t, "Checkpoint", numtest.Here(), func() { autodiff.Checkpoint(none, x) }, "returned nil")
	other := graph.New().Var(tensor.FromFloat64s([]float64{1}, 1))
	elsewhere := func([]*graph.Node) *graph.Node { return other }
	numtest.Misuse(t, "Checkpoint", numtest.Here(), func() { autodiff.Checkpoint(elsewhere, x) }, "another graph")
	require.Equal(t, 1, g.Len(), "failed checkpoints add no node")
}

func TestCheckpointReplaysInACapturedProgram(t *testing.T) {
	// A captured step with checkpointed segments gives the eager step's
	// gradients, bit for bit, on new parameter values.
	rng := tensor.NewRNG(3)
	w1, w2 := rng.Normal(tensor.Float64, 0, 0.5, 4, 4), rng.Normal(tensor.Float64, 0, 0.5, 4, 4)
	x := rng.Normal(tensor.Float64, 0, 1, 6, 4)
	seg := func(in []*graph.Node) *graph.Node { return graph.Tanh(graph.MatMul(in[0], in[1])) }
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		h := autodiff.Checkpoint(seg, in[0], in[1])
		h = autodiff.Checkpoint(seg, h, in[2])
		loss := graph.Sum(graph.Square(h), nil, false)
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[1], in[2])...)
	}
	in := []*tensor.Tensor{x, w1, w2}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	for k := range 3 {
		g := graph.New()
		nodes := []*graph.Node{g.Var(x), g.Var(w1), g.Var(w2)}
		want := step(g, nodes)
		got, err := p.Run(in)
		require.NoError(t, err)
		for i := range want {
			require.Equal(t, want[i].Value().Values(), got[i].Values(), "step %d output %d", k, i)
		}
		w1.Fill(0.1 * float64(k+1)) // new values in place, as an optimiser would
	}
}
