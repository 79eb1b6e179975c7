package graph_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// eagerRun builds fn on a fresh graph and returns copies of its outputs:
// the reference every captured run is compared with.
func eagerRun(fn graph.StepFunc, in []*tensor.Tensor) []*tensor.Tensor {
	g := graph.New()
	nodes := make([]*graph.Node, len(in))
	for i, t := range in {
		nodes[i] = g.VarOf(t)
	}
	var out []*tensor.Tensor
	for _, n := range fn(g, nodes) {
		out = append(out, n.Value().Clone())
	}
	return out
}

// requireSameBits fails unless got and want hold the same bits.
func requireSameBits(t *testing.T, want, got []*tensor.Tensor, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.Equal(t, want[i].Shape(), got[i].Shape(), "%s: output %d shape", what, i)
		w, g := want[i].Values(), got[i].Values()
		for j := range w {
			if math.Float64bits(w[j]) != math.Float64bits(g[j]) {
				t.Fatalf("%s: output %d element %d: captured %v, eager %v", what, i, j, g[j], w[j])
			}
		}
	}
}

func TestCaptureOptimisationsCountOps(t *testing.T) {
	tests := []struct {
		name                      string
		fn                        graph.StepFunc
		ops, dead, folded, merged int
		wantOpsInOrder            []string
	}{
		{
			name: "repeated exp merged",
			fn: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Add(graph.Exp(in[0]), graph.Exp(in[0]))}
			},
			ops: 2, merged: 1, wantOpsInOrder: []string{"exp", "add"},
		},
		{
			name: "unused log removed",
			fn: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				graph.Log(in[0])
				graph.Sum(graph.Log(in[0]), nil, false)
				return []*graph.Node{graph.Exp(in[0])}
			},
			ops: 1, dead: 3, wantOpsInOrder: []string{"exp"},
		},
		{
			name: "constant subgraph folded",
			fn: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				c := graph.Exp(graph.MulScalar(g.Scalar(tensor.Float64, 2), 3)) // e^6, no input involved
				return []*graph.Node{graph.Mul(in[0], c)}
			},
			// mulscalar and exp fold; the scalar 2 and e^6·... : only mul runs.
			ops: 1, folded: 2, dead: 2, wantOpsInOrder: []string{"mul"},
		},
		{
			name: "equal constants merged, then the ops on them",
			fn: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				a := graph.Mul(in[0], g.Scalar(tensor.Float64, 0.5))
				b := graph.Mul(in[0], g.Scalar(tensor.Float64, 0.5))
				return []*graph.Node{graph.Sub(a, b), graph.Mul(in[0], g.Scalar(tensor.Float64, 0.25))}
			},
			ops: 3, merged: 2, wantOpsInOrder: []string{"mul", "sub", "mul"},
		},
		{
			name: "ops with different parameters kept apart",
			fn: func(g *graph.Graph, in []*graph.Node) []*graph.Node {
				return []*graph.Node{graph.Add(graph.MulScalar(in[0], 2), graph.MulScalar(in[0], 3))}
			},
			ops: 3, wantOpsInOrder: []string{"mul_scalar", "mul_scalar", "add"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tensor.FromFloat64s([]float64{0.5, -1, 2}, 3)
			// Without fusion, which would make chains of these one step
			// (capture_fuse_test.go).
			p, err := graph.Capture(tt.fn, []*tensor.Tensor{x}, graph.CaptureOptions{NoFusion: true})
			require.NoError(t, err)
			st := p.Stats()
			assert.Equal(t, tt.ops, st.Ops, "ops\n%s", p)
			assert.Equal(t, tt.dead, st.Dead, "dead\n%s", p)
			assert.Equal(t, tt.folded, st.Folded, "folded\n%s", p)
			assert.Equal(t, tt.merged, st.Merged, "merged\n%s", p)
			var names []string
			for _, s := range p.Steps() {
				names = append(names, s.Op)
			}
			assert.Equal(t, tt.wantOpsInOrder, names)

			// New values: the program equals the eager step on them.
			x2 := tensor.FromFloat64s([]float64{-0.25, 3, 0.125}, 3)
			got, err := p.Run([]*tensor.Tensor{x2})
			require.NoError(t, err)
			requireSameBits(t, eagerRun(tt.fn, []*tensor.Tensor{x2}), got, tt.name)
		})
	}
}

func TestCaptureRunsGradientsOnNewInputs(t *testing.T) {
	// loss = Σ tanh(x·w + b)², its gradients in w and b.
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		h := graph.Tanh(graph.Add(graph.MatMul(in[0], in[1]), in[2]))
		loss := graph.Sum(graph.Mul(h, h), nil, false)
		return append([]*graph.Node{loss}, autodiff.Grad(loss, in[1], in[2])...)
	}
	rng := tensor.NewRNG(7)
	w := rng.Normal(tensor.Float32, 0, 1, 5, 4)
	b := rng.Normal(tensor.Float32, 0, 1, 4)
	p, err := graph.Capture(fn, []*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 3, 5), w, b}, graph.CaptureOptions{})
	require.NoError(t, err)
	for i := range 5 {
		in := []*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 3, 5), w, b}
		got, err := p.Run(in)
		require.NoError(t, err)
		requireSameBits(t, eagerRun(fn, in), got, "run")
		w.Fill(float64(i) / 10) // parameters change in place between calls
	}
}

func TestCaptureShapeChange(t *testing.T) {
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		return []*graph.Node{graph.Sum(graph.Exp(in[0]), nil, false)}
	}
	x := tensor.FromFloat64s([]float64{1, 2, 3}, 3)
	x4 := tensor.FromFloat64s([]float64{1, 2, 3, 4}, 4)
	tests := []struct {
		name    string
		opts    graph.CaptureOptions
		in      *tensor.Tensor
		wantErr error
		msg     string
		want    float64
	}{
		{"longer input refused", graph.CaptureOptions{}, x4, graph.ErrShapeChanged, "input 0 is (4,) float64, captured as (3,) float64", 0},
		{"other dtype refused", graph.CaptureOptions{}, x.Cast(tensor.Float32), graph.ErrShapeChanged, "input 0 is (3,) float32, captured as (3,) float64", 0},
		{"longer input recaptured", graph.CaptureOptions{Recapture: true}, x4, nil, "", math.E + math.Exp(2) + math.Exp(3) + math.Exp(4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := graph.Capture(fn, []*tensor.Tensor{x}, tt.opts)
			require.NoError(t, err)
			got, err := p.Run([]*tensor.Tensor{tt.in})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), tt.msg)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.want, got[0].Item(), 1e-12)
		})
	}
}

func TestCaptureRefuses(t *testing.T) {
	rng := tensor.NewRNG(3)
	drop := nn.NewDropout(tensor.NewRNG(1), 0.5)
	hidden := tensor.FromFloat64s([]float64{1, 2, 3}, 3)
	tests := []struct {
		name string
		fn   graph.StepFunc
		want string
	}{
		{"dropout's random mask", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{drop.Forward(in[0])}
		}, "different values in two traces"},
		{"random constant", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.Add(in[0], g.Const(rng.Normal(tensor.Float64, 0, 1, 3)))}
		}, "different values in two traces"},
		{"undeclared parameter", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.Mul(in[0], g.VarOf(hidden))}
		}, "not a declared input"},
		{"indices from Go", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.IndexSelect(in[0], 0, []int{2, 0})}
		}, "index_select holds its indices"},
		{"input read as a constant", func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			return []*graph.Node{graph.Add(in[0], g.Const(in[0].Value()))}
		}, "Const of input 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tensor.FromFloat64s([]float64{0.5, -1, 2}, 3)
			_, err := graph.Capture(tt.fn, []*tensor.Tensor{x}, graph.CaptureOptions{})
			require.ErrorIs(t, err, graph.ErrNotCapturable)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestCaptureMisusePanics(t *testing.T) {
	x := tensor.FromFloat64s([]float64{1}, 1)
	id := func(g *graph.Graph, in []*graph.Node) []*graph.Node { return in }
	tests := []struct {
		name string
		call func()
		want string
	}{
		{"nil step", func() { graph.Capture(nil, []*tensor.Tensor{x}, graph.CaptureOptions{}) }, "nil step function"},
		{"input twice", func() { graph.Capture(id, []*tensor.Tensor{x, x}, graph.CaptureOptions{}) }, "input 1 is the same tensor as input 0"},
		{"wrong input count", func() {
			p, _ := graph.Capture(id, []*tensor.Tensor{x}, graph.CaptureOptions{})
			p.Run(nil)
		}, "0 inputs for a program captured with 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				var e *tensor.Error
				r := recover()
				err, _ := r.(error)
				require.True(t, errors.As(err, &e), "panic %v is not a *tensor.Error", r)
				assert.Contains(t, e.Error(), tt.want)
				assert.Contains(t, e.Caller, "capture_test.go:")
			}()
			tt.call()
		})
	}
}

func TestCaptureBufferPlanSharesMemory(t *testing.T) {
	// A chain of eight elementwise ops on 1,000 floats: each buffer dies
	// once the next op has read it, so two buffers' worth of arena serve
	// all eight (the output lives to the end).
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x := in[0]
		for range 4 {
			x = graph.Tanh(graph.MulScalar(x, 1.5))
		}
		return []*graph.Node{x}
	}
	x := tensor.Full(tensor.Float32, 0.1, 1000)
	p, err := graph.Capture(fn, []*tensor.Tensor{x}, graph.CaptureOptions{NoFusion: true})
	require.NoError(t, err)
	pl := p.Plan()
	require.Len(t, pl.Buffers, 8)
	assert.Equal(t, int64(8*4000), pl.NaiveBytes)
	assert.Equal(t, int64(2*1008*4), pl.ArenaBytes, "two buffers of 1,000 floats rounded to 1,008")
	assertPlanValid(t, pl)
	assert.Equal(t, len(p.Steps()), pl.Buffers[7].Last, "the output lives to the end")
	assert.Contains(t, p.String(), "%8 = tanh(%7) float32 (1000,)  buf 7 @1008")
}

// assertPlanValid checks that no two buffers of one dtype live at the
// same time share memory.
func assertPlanValid(t *testing.T, pl graph.BufferPlan) {
	t.Helper()
	for i, a := range pl.Buffers {
		for j, b := range pl.Buffers[:i] {
			if a.DType != b.DType || a.Last < b.First || b.Last < a.First {
				continue
			}
			if a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size {
				t.Fatalf("buffers %d %+v and %d %+v are live together and overlap", j, b, i, a)
			}
		}
	}
}

func TestCaptureViewsKeepTheirBaseAlive(t *testing.T) {
	// y is a reshape (a view) of e = exp(x); e's buffer must survive until
	// the last reader of y, past ops that would otherwise reuse it.
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		e := graph.Exp(in[0])
		y := graph.Reshape(e, 3, 2)
		z := graph.Neg(graph.Neg(graph.Neg(in[0])))
		return []*graph.Node{graph.Add(graph.Reshape(z, 3, 2), y)}
	}
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 6}, 6)
	p, err := graph.Capture(fn, []*tensor.Tensor{x}, graph.CaptureOptions{})
	require.NoError(t, err)
	assertPlanValid(t, p.Plan())
	assert.True(t, strings.Contains(p.String(), "view"), p.String())
	x2 := tensor.FromFloat64s([]float64{-1, 0.5, 2, 0, 1, 3}, 6)
	got, err := p.Run([]*tensor.Tensor{x2})
	require.NoError(t, err)
	requireSameBits(t, eagerRun(fn, []*tensor.Tensor{x2}), got, "views")
}

func TestCaptureOutputsOwnTheirMemory(t *testing.T) {
	// The gradient in c is a constant (zeros) and the two exp outputs are
	// one slot after merging; scaling each output in place, as gradient
	// clipping does, must leave the next Run's results as eager ones.
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		loss := graph.Sum(graph.Exp(in[0]), nil, false)
		gs := autodiff.Grad(loss, in[0], in[1])
		return []*graph.Node{graph.Exp(in[0]), graph.Exp(in[0]), gs[1], loss}
	}
	x := tensor.FromFloat64s([]float64{0.5, -1}, 2)
	c := tensor.FromFloat64s([]float64{3}, 1)
	in := []*tensor.Tensor{x, c}
	p, err := graph.Capture(fn, in, graph.CaptureOptions{})
	require.NoError(t, err)
	for range 3 {
		got, err := p.Run(in)
		require.NoError(t, err)
		requireSameBits(t, eagerRun(fn, in), got, "run")
		for _, o := range got {
			tensor.CopyInto(o, tensor.AddScalar(tensor.MulScalar(o, 2), 1))
		}
	}
}
