package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

func TestLSTMCellStepByHand(t *testing.T) {
	// A 1-unit cell, gates stacked i, f, g, o, with x = 1, h = 0.5, c = 2:
	//   i: 0.5·1 +  1·0.5 + 0    + 0.5   = 1.5  → σ(1.5)
	//   f:  −1·1 +  2·0.5 + 0.5  − 0.5   = 0    → σ(0) = 0.5
	//   g:   1·1 +  0·0.5 + 0    + 0.5   = 1.5  → tanh(1.5)
	//   o:   2·1 + −2·0.5 + 0.25 − 0.25  = 1    → σ(1)
	//   c' = 0.5·2 + σ(1.5)·tanh(1.5) = 1.7400261
	//   h' = σ(1)·tanh(c')           = 0.6873630
	c2 := 1 + sigmoid(1.5)*math.Tanh(1.5)
	h2 := sigmoid(1) * math.Tanh(c2)
	require.InDelta(t, 1.740026109351293, c2, 1e-12)
	require.InDelta(t, 0.6873629649083425, h2, 1e-12)
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			cell := nn.NewLSTMCell(tensor.NewRNG(1), 1, 1, true, dt)
			set(cell.WeightIH, 0.5, -1, 1, 2)
			set(cell.WeightHH, 1, 2, 0, -2)
			set(cell.BiasIH, 0, 0.5, 0, 0.25)
			set(cell.BiasHH, 0.5, -0.5, 0.5, -0.25)
			g := graph.New()
			x := g.Const(tensor.FromValues(dt, []float64{1}, 1, 1))
			h := g.Const(tensor.FromValues(dt, []float64{0.5}, 1, 1))
			c := g.Const(tensor.FromValues(dt, []float64{2}, 1, 1))
			hn, cn := cell.Forward(x, h, c)
			require.Equal(t, []int{1, 1}, hn.Shape())
			assert.InDelta(t, c2, cn.Item(), numtest.Tol(dt)*10)
			assert.InDelta(t, h2, hn.Item(), numtest.Tol(dt)*10)

			// Zero state: c' = σ(i)·tanh(g) with i = 0.5 + 0.5 = 1, g = 1 + 0.5;
			// o = 2 + 0 = 2 → h' = σ(2)·tanh(c').
			hz, cz := cell.Forward(x, nil, nil)
			wantC := sigmoid(1) * math.Tanh(1.5)
			assert.InDelta(t, wantC, cz.Item(), numtest.Tol(dt)*10)
			assert.InDelta(t, sigmoid(2)*math.Tanh(wantC), hz.Item(), numtest.Tol(dt)*10)
		})
	}
}

func TestGRUCellStepByHand(t *testing.T) {
	// A 1-unit cell, gates stacked r, z, n, with x = 1, h = 0.5:
	//   r = σ(1·1 + 0 + 2·0.5 − 1)          = σ(1)
	//   z = σ(−1·1 + 0.5 + 2·0.5 + 0)       = σ(0.5)
	//   n = tanh(0.5·1 + 0.25 + r·(1·0.5 + 0.5)) = tanh(0.75 + σ(1))
	//   h' = (1 − z)·n + z·0.5              = 0.6516453
	r, z := sigmoid(1), sigmoid(0.5)
	n := math.Tanh(0.75 + r)
	want := (1-z)*n + z*0.5
	require.InDelta(t, 0.6516452990404605, want, 1e-12)
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			cell := nn.NewGRUCell(tensor.NewRNG(1), 1, 1, true, dt)
			set(cell.WeightIH, 1, -1, 0.5)
			set(cell.WeightHH, 2, 2, 1)
			set(cell.BiasIH, 0, 0.5, 0.25)
			set(cell.BiasHH, -1, 0, 0.5)
			g := graph.New()
			x := g.Const(tensor.FromValues(dt, []float64{1}, 1))
			h := g.Const(tensor.FromValues(dt, []float64{0.5}, 1))
			hn := cell.Forward(x, h)
			require.Equal(t, []int{1}, hn.Shape())
			assert.InDelta(t, want, hn.Item(), numtest.Tol(dt)*10)

			// Zero state: r = σ(1 − 1) = 0.5, z = σ(−1 + 0.5) = σ(−0.5),
			// n = tanh(0.75 + 0.5·0.5), h' = (1 − z)·n.
			hz := cell.Forward(x, nil)
			assert.InDelta(t, (1-sigmoid(-0.5))*math.Tanh(1), hz.Item(), numtest.Tol(dt)*10)
		})
	}
}

func paramNames(m nn.Module) []string {
	var names []string
	for _, p := range m.Params() {
		names = append(names, p.Name)
	}
	return names
}

func TestRNNParamNamesShapesAndCounts(t *testing.T) {
	rng := tensor.NewRNG(1)
	lstm := nn.NewLSTM(rng, 28, 128, nn.RNNOptions{})
	assert.Equal(t, 4*128*(28+128)+8*128, nn.NumParams(lstm))
	assert.Equal(t, 80896, nn.NumParams(lstm))

	lstm2 := nn.NewLSTM(rng, 10, 20, nn.RNNOptions{Layers: 2, BatchFirst: true, DType: tensor.Float64})
	assert.Equal(t, []string{
		"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
		"weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
	}, paramNames(lstm2))
	shapes := [][]int{{80, 10}, {80, 20}, {80}, {80}, {80, 20}, {80, 20}, {80}, {80}}
	for i, p := range lstm2.Params() {
		assert.Equal(t, shapes[i], p.Value.Shape(), p.Name)
	}

	assert.Equal(t, []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}, paramNames(nn.NewLSTMCell(rng, 3, 4, true, tensor.Float32)))
	assert.Equal(t, []string{"weight_ih", "weight_hh"}, paramNames(nn.NewGRUCell(rng, 3, 4, false, tensor.Float32)))
	gru := nn.NewGRU(rng, 28, 128, nn.RNNOptions{})
	assert.Equal(t, 3*128*(28+128)+6*128, nn.NumParams(gru))
	assert.Equal(t, []int{384, 28}, gru.Params()[0].Value.Shape())

	// PyTorch's init: everything in U(−1/√h, 1/√h), h = 20.
	k := 1 / math.Sqrt(20)
	for _, p := range lstm2.Params() {
		for _, v := range p.Value.Values() {
			require.LessOrEqual(t, math.Abs(v), k, p.Name)
		}
	}
}

// manualLSTM runs the cells of m step by step, the definition that Forward
// must reproduce, and returns the last layer's outputs per step.
func manualLSTM(m *nn.LSTM, xs []*graph.Node) (outs, hs, cs []*graph.Node) {
	hs = make([]*graph.Node, m.Layers)
	cs = make([]*graph.Node, m.Layers)
	for _, x := range xs {
		in := x
		for l, cell := range m.Cells {
			hs[l], cs[l] = cell.Forward(in, hs[l], cs[l])
			in = hs[l]
		}
		outs = append(outs, in)
	}
	return outs, hs, cs
}

func TestLSTMMatchesCellLoop(t *testing.T) {
	for _, dt := range numtest.DTypes {
		for _, batchFirst := range []bool{false, true} {
			t.Run(dt.String(), func(t *testing.T) {
				const T, B, in, h = 3, 2, 4, 5
				rng := tensor.NewRNG(11)
				m := nn.NewLSTM(rng, in, h, nn.RNNOptions{Layers: 2, BatchFirst: batchFirst, DType: dt})
				g := graph.New()
				xt := rng.Normal(dt, 0, 1, T, B, in)
				var xs []*graph.Node
				for s := range T {
					xs = append(xs, g.Const(tensor.Squeeze(tensor.Slice(xt, 0, s, s+1, 1), 0)))
				}
				x := g.Const(xt)
				if batchFirst {
					x = g.Const(tensor.Permute(xt, 1, 0, 2))
				}
				out, hN, cN := m.Forward(x, nil, nil)
				if batchFirst {
					require.Equal(t, []int{B, T, h}, out.Shape())
					out = graph.Permute(out, 1, 0, 2)
				} else {
					require.Equal(t, []int{T, B, h}, out.Shape())
				}
				require.Equal(t, []int{2, B, h}, hN.Shape())
				require.Equal(t, []int{2, B, h}, cN.Shape())
				outs, hs, cs := manualLSTM(m, xs)
				d := numtest.Tol(dt) * 100
				assert.InDeltaSlice(t, graph.Stack(0, outs...).Value().Values(), out.Value().Values(), d)
				assert.InDeltaSlice(t, graph.Stack(0, hs...).Value().Values(), hN.Value().Values(), d)
				assert.InDeltaSlice(t, graph.Stack(0, cs...).Value().Values(), cN.Value().Values(), d)
				// The last output is the last layer's final state.
				assert.InDeltaSlice(t, hs[1].Value().Values(), graph.Slice(out, 0, T-1, T, 1).Value().Values(), d)

				// Given initial states are used: starting from the final state of
				// this run equals running the sequence twice.
				out2, _, _ := m.Forward(x, hN, cN)
				outs2, _, _ := manualLSTM(m, append(append([]*graph.Node{}, xs...), xs...))
				if batchFirst {
					out2 = graph.Permute(out2, 1, 0, 2)
				}
				assert.InDeltaSlice(t, graph.Stack(0, outs2[T:]...).Value().Values(), out2.Value().Values(), d)
			})
		}
	}
}

func TestGRUMatchesCellLoop(t *testing.T) {
	for _, dt := range numtest.DTypes {
		const T, B, in, h = 3, 2, 4, 5
		rng := tensor.NewRNG(12)
		m := nn.NewGRU(rng, in, h, nn.RNNOptions{Layers: 2, DType: dt})
		g := graph.New()
		xt := rng.Normal(dt, 0, 1, T, B, in)
		out, hN := m.Forward(g.Const(xt), nil)
		require.Equal(t, []int{T, B, h}, out.Shape())
		require.Equal(t, []int{2, B, h}, hN.Shape())
		hs := make([]*graph.Node, 2)
		var outs []*graph.Node
		for s := range T {
			x := g.Const(tensor.Squeeze(tensor.Slice(xt, 0, s, s+1, 1), 0))
			for l, cell := range m.Cells {
				hs[l] = cell.Forward(x, hs[l])
				x = hs[l]
			}
			outs = append(outs, x)
		}
		d := numtest.Tol(dt) * 100
		assert.InDeltaSlice(t, graph.Stack(0, outs...).Value().Values(), out.Value().Values(), d)
		assert.InDeltaSlice(t, graph.Stack(0, hs...).Value().Values(), hN.Value().Values(), d)
	}
}

func TestRNNOneMatMulPerGateBlock(t *testing.T) {
	// Per layer: one product for the whole sequence's inputs, then one per
	// step for the hidden state, covering all gates (the first step has no
	// hidden product when the LSTM's initial state is zero).
	const T, layers = 3, 2
	rng := tensor.NewRNG(1)
	count := func(g *graph.Graph) int {
		n := 0
		for _, nd := range g.Nodes() {
			if nd.Op() != nil && (nd.Op().Name() == "matmul" || nd.Op().Name() == "linear") {
				n++
			}
		}
		return n
	}
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Const(tensor.Zeros(dt, T, 2, 3))
		h0 := g.Const(tensor.Zeros(dt, layers, 2, 4))
		nn.NewLSTM(rng, 3, 4, nn.RNNOptions{Layers: layers, DType: dt}).Forward(x, h0, h0)
		assert.Equal(t, (1+T)*layers, count(g), "LSTM with a given state")
		g.Reset()
		x = g.Const(tensor.Zeros(dt, T, 2, 3))
		nn.NewGRU(rng, 3, 4, nn.RNNOptions{Layers: layers, DType: dt}).Forward(x, nil)
		assert.Equal(t, (1+T)*layers, count(g), "GRU")
		g.Reset()
		x = g.Const(tensor.Zeros(dt, T, 2, 3))
		nn.NewLSTM(rng, 3, 4, nn.RNNOptions{Layers: layers, DType: dt}).Forward(x, nil, nil)
		assert.Equal(t, T*layers, count(g), "LSTM from a zero state")
		// Bidirectional: one product covers both directions' inputs, then
		// one hidden product per step and direction.
		g.Reset()
		x = g.Const(tensor.Zeros(dt, T, 2, 3))
		nn.NewGRU(rng, 3, 4, nn.RNNOptions{Layers: layers, Bidirectional: true, DType: dt}).Forward(x, nil)
		assert.Equal(t, (1+2*T)*layers, count(g), "bidirectional GRU")
	}
}

// The options' zero value is one layer, time-major, float32, as PyTorch's
// defaults; a bidirectional stack's upper layers read both directions;
// a negative layer count is refused, and a convolution refuses a transposed convolution's output padding.
func TestOptionsDefaults(t *testing.T) {
	rng := tensor.NewRNG(1)
	lstm := nn.NewLSTM(rng, 3, 4, nn.RNNOptions{})
	assert.Equal(t, 1, lstm.Layers)
	assert.False(t, lstm.BatchFirst)
	assert.Equal(t, tensor.Float32, lstm.Cells[0].WeightIH.Value.DType())
	assert.Len(t, lstm.Params(), 4)
	rnn := nn.NewRNN(rng, 3, 4, nn.RNNOptions{Layers: 2, Bidirectional: true, DType: tensor.Float64})
	assert.Equal(t, tensor.Float64, rnn.Cells[1].WeightIH.Value.DType())
	assert.Equal(t, []int{4, 8}, rnn.Cells[1].WeightIH.Value.Shape(), "layer 2 reads both directions")
	conv := nn.NewConv2D(rng, 2, 3, [2]int{3, 3}, nn.Conv2DOptions{})
	assert.Equal(t, tensor.Float32, conv.Weight.Value.DType())
	assert.NotNil(t, conv.Bias)
	c1 := nn.NewConv1D(rng, 2, 3, 5, nn.Conv1DOptions{NoBias: true, DType: tensor.Float64})
	assert.Equal(t, []int{3, 2, 5}, c1.Weight.Value.Shape())
	assert.Nil(t, c1.Bias)

	bi := nn.NewLSTM(rng, 3, 4, nn.RNNOptions{Layers: 2, Bidirectional: true})
	assert.Equal(t, []int{16, 8}, bi.Cells[1].WeightIH.Value.Shape(), "layer 2 reads both directions")
	assert.Len(t, bi.Reverse, 2)
	assert.Equal(t, "LSTM(3→4, 2 layers, bidirectional)", bi.String())
	assert.Contains(t, panicMessage(t, func() { nn.NewGRU(rng, 3, 4, nn.RNNOptions{Layers: -2}) }), "nn.NewGRU: number of layers must be positive, got -2")
	assert.Contains(t, panicMessage(t, func() { nn.NewRNN(rng, 3, 4, nn.RNNOptions{Layers: -1}) }), "number of layers must be positive, got -1")
	assert.Contains(t, panicMessage(t, func() {
		nn.NewConv2D(rng, 2, 3, [2]int{3, 3}, nn.Conv2DOptions{OutputPadding: [2]int{1, 1}})
	}), "OutputPadding [1 1] is for ConvTranspose2D only")
}
