package graph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/tensor"
)

// fusedChain is a step whose elementwise chains read broadcast operands
// (a row, a column, a 0-d scalar), a transposed view and a slice, and
// whose intermediate t is also an output, so it ends one chain and starts
// another.
func fusedChain(g *graph.Graph, in []*graph.Node) []*graph.Node {
	x, row, col, s := in[0], in[1], in[2], in[3]
	xt := graph.Slice(graph.Concat(0, x, x), 0, 0, x.Shape()[0], 1) // a slice of a concatenation: a view with an offset
	sq := graph.Transpose(in[4])                                    // a strided view of an (n, m) input
	t := graph.Tanh(graph.Add(graph.Mul(x, row), col))
	u := graph.Sigmoid(graph.Sub(graph.MulScalar(t, 1.5), s))
	v := graph.Div(graph.Add(u, graph.Exp(sq)), graph.AddScalar(graph.Square(xt), 1))
	w := graph.Sum(graph.Mul(v, graph.Relu(x)), nil, false)
	return append([]*graph.Node{t, v, w}, autodiff.Grad(w, in[:4]...)...)
}

func fusedInputs(dt tensor.DType, m, n int) []*tensor.Tensor {
	rng := tensor.NewRNG(3)
	return []*tensor.Tensor{
		rng.Normal(dt, 0, 1, m, n), rng.Normal(dt, 0, 1, n), rng.Normal(dt, 0, 1, m, 1),
		rng.Normal(dt, 0, 1), rng.Normal(dt, 0, 1, n, m),
	}
}

func TestCaptureFusionChangesNoBit(t *testing.T) {
	for _, c := range []struct {
		name string
		dt   tensor.DType
		m, n int
	}{
		{"float64 small", tensor.Float64, 5, 7},
		{"float32 blocks and a partial block", tensor.Float32, 9, 130},
		{"float32 split over goroutines", tensor.Float32, 257, 256},
		{"float64 split over goroutines", tensor.Float64, 256, 257},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := fusedInputs(c.dt, c.m, c.n)
			fusedP, err := graph.Capture(fusedChain, in, graph.CaptureOptions{})
			require.NoError(t, err)
			plain, err := graph.Capture(fusedChain, in, graph.CaptureOptions{NoFusion: true})
			require.NoError(t, err)
			assert.Positive(t, fusedP.Stats().Fused)
			assert.Zero(t, plain.Stats().Fused)
			assert.Less(t, fusedP.Stats().Ops, plain.Stats().Ops)
			assert.Contains(t, fusedP.String(), "fused(")
			assert.Less(t, fusedP.Plan().NaiveBytes, plain.Plan().NaiveBytes, "fused intermediates get no buffer")

			g := graph.New()
			nodes := make([]*graph.Node, len(in))
			for i, x := range in {
				nodes[i] = g.VarOf(x)
			}
			eager := fusedChain(g, nodes)
			for round := range 2 { // the second Run reuses the workers' scratch
				got, err := fusedP.Run(in)
				require.NoError(t, err)
				want, err := plain.Run(in)
				require.NoError(t, err)
				for i := range got {
					requireSameBits(t, []*tensor.Tensor{eager[i].Value()}, []*tensor.Tensor{got[i]}, "output against eager")
					requireSameBits(t, []*tensor.Tensor{want[i]}, []*tensor.Tensor{got[i]}, "output against unfused")
				}
				_ = round
			}
		})
	}
}

func TestCaptureFusionKeepsSharedValues(t *testing.T) {
	// a is read by two chains and b is an output: neither may vanish into
	// a fused step; c·d and its exp are fused.
	fn := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		a := graph.Exp(in[0])
		b := graph.Neg(a)
		c := graph.Mul(a, in[0])
		return []*graph.Node{b, graph.Log(graph.Exp(c)), graph.Sum(a, nil, false)}
	}
	x := tensor.FromFloat64s([]float64{0.5, -1, 2}, 3)
	p, err := graph.Capture(fn, []*tensor.Tensor{x}, graph.CaptureOptions{})
	require.NoError(t, err)
	var ops []string
	for _, s := range p.Steps() {
		ops = append(ops, s.Op)
	}
	assert.Equal(t, "exp neg fused(mul,exp,log) sum", strings.Join(ops, " "))
	assert.Equal(t, 2, p.Stats().Fused)
	out, err := p.Run([]*tensor.Tensor{x})
	require.NoError(t, err)
	for i, v := range []float64{0.5, -1, 2} {
		assert.InEpsilon(t, -math.Exp(v), out[0].At(i), 1e-15)
		assert.InEpsilon(t, math.Exp(v)*v, out[1].At(i), 1e-15)
	}
}

// trainEqual trains twice for steps from the same start, eagerly and with
// a captured program, and requires the same bits in every loss, gradient
// and final parameter. build returns a fresh model's inputs (data...,
// parameters...) and step; nData counts the data inputs.
func trainEqual(t *testing.T, steps, nData int, build func() ([]*tensor.Tensor, graph.StepFunc)) {
	t.Helper()
	eagerIn, eagerStep := build()
	captIn, captStep := build()
	eagerOpt := optim.NewAdam(eagerIn[nData:], optim.AdamOptions{LR: 1e-2})
	captOpt := optim.NewAdam(captIn[nData:], optim.AdamOptions{LR: 1e-2})
	p, err := graph.Capture(captStep, captIn, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Positive(t, p.Stats().Fused)
	g := graph.New()
	nodes := make([]*graph.Node, len(eagerIn))
	for range steps {
		g.Reset()
		for i, x := range eagerIn {
			nodes[i] = g.VarOf(x)
		}
		eager := eagerStep(g, nodes)
		want := make([]*tensor.Tensor, len(eager))
		for i, n := range eager {
			want[i] = n.Value()
		}
		got, err := p.Run(captIn)
		require.NoError(t, err)
		requireSameBits(t, want, got, "loss and gradients")
		require.NoError(t, eagerOpt.Step(want[1:]))
		require.NoError(t, captOpt.Step(got[1:]))
	}
	requireSameBits(t, eagerIn[nData:], captIn[nData:], "parameters after training")
}

func TestCapturedLSTMTrainingEqualsEager(t *testing.T) {
	trainEqual(t, 100, 2, func() ([]*tensor.Tensor, graph.StepFunc) {
		rng := tensor.NewRNG(7)
		m := nn.NewLSTM(rng, 5, 8, nn.RNNOptions{})
		in := append([]*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 6, 4, 5), rng.Normal(tensor.Float32, 0, 1, 1, 4, 8)},
			nn.Values(m.Params())...)
		return in, func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			_, h, _ := m.Forward(in[0], nil, nil)
			loss := losses.MSE(h, in[1], losses.Mean)
			return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
		}
	})
}

func TestCapturedTransformerTrainingEqualsEager(t *testing.T) {
	trainEqual(t, 100, 2, func() ([]*tensor.Tensor, graph.StepFunc) {
		rng := tensor.NewRNG(8)
		l := nn.NewTransformerEncoderLayer(rng, 16, 2, 32, tensor.Float32)
		in := append([]*tensor.Tensor{rng.Normal(tensor.Float32, 0, 1, 2, 5, 16), rng.Normal(tensor.Float32, 0, 1, 2, 5, 16)},
			nn.Values(l.Params())...)
		return in, func(g *graph.Graph, in []*graph.Node) []*graph.Node {
			loss := graph.Sum(graph.Mul(l.Forward(in[0], nil, false), in[1]), nil, false)
			return append([]*graph.Node{loss}, autodiff.Grad(loss, in[2:]...)...)
		}
	})
}
