package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// The composite LSTM and GRU that the fused cells (graph.LSTMCell,
// graph.GRUCell) and the one-GEMM input projection replaced, kept as the
// reference: per step, each layer's input and hidden products with their
// biases, the gates split and activated one op at a time.

func refAffine(x *graph.Node, w, b *nn.Param) *graph.Node {
	g := x.Graph()
	return graph.Add(graph.MatMulT(x, w.Node(g), false, true), b.Node(g))
}

func refLSTMStep(c *nn.LSTMCell, x, h, cs *graph.Node) (h2, c2 *graph.Node) {
	gates := refAffine(x, c.WeightIH, c.BiasIH)
	if h != nil {
		gates = graph.Add(gates, refAffine(h, c.WeightHH, c.BiasHH))
	} else {
		gates = graph.Add(gates, c.BiasHH.Node(x.Graph()))
	}
	n := c.Hidden
	parts := graph.Split(gates, -1, n, n, n, n)
	i, f, gg, o := graph.Sigmoid(parts[0]), graph.Sigmoid(parts[1]), graph.Tanh(parts[2]), graph.Sigmoid(parts[3])
	c2 = graph.Mul(i, gg)
	if cs != nil {
		c2 = graph.Add(graph.Mul(f, cs), c2)
	}
	return graph.Mul(o, graph.Tanh(c2)), c2
}

func refGRUStep(c *nn.GRUCell, x, h *graph.Node) *graph.Node {
	n := c.Hidden
	xi := graph.Split(refAffine(x, c.WeightIH, c.BiasIH), -1, n, n, n)
	hh := graph.Split(refAffine(h, c.WeightHH, c.BiasHH), -1, n, n, n)
	r := graph.Sigmoid(graph.Add(xi[0], hh[0]))
	z := graph.Sigmoid(graph.Add(xi[1], hh[1]))
	nn := graph.Tanh(graph.Add(xi[2], graph.Mul(r, hh[2])))
	return graph.Add(nn, graph.Mul(z, graph.Sub(h, nn)))
}

// refSteps returns the steps of x (T, B, In), or (B, T, In) with
// batchFirst, as (B, In) nodes.
func refSteps(x *graph.Node, batchFirst bool) []*graph.Node {
	ax := 0
	if batchFirst {
		ax = 1
	}
	xs := make([]*graph.Node, x.Shape()[ax])
	for t := range xs {
		xs[t] = graph.Squeeze(graph.Slice(x, ax, t, t+1, 1), ax)
	}
	return xs
}

func refState(st *graph.Node, l int) *graph.Node {
	if st == nil {
		return nil
	}
	return graph.Squeeze(graph.Slice(st, 0, l, l+1, 1), 0)
}

func refLSTM(m *nn.LSTM, x, h0, c0 *graph.Node) (out, hN, cN *graph.Node) {
	seq := refSteps(x, m.BatchFirst)
	var hs, cs []*graph.Node
	for l, cell := range m.Cells {
		h, c := refState(h0, l), refState(c0, l)
		for t, xt := range seq {
			h, c = refLSTMStep(cell, xt, h, c)
			seq[t] = h
		}
		hs, cs = append(hs, h), append(cs, c)
	}
	ax := 0
	if m.BatchFirst {
		ax = 1
	}
	return graph.Stack(ax, seq...), graph.Stack(0, hs...), graph.Stack(0, cs...)
}

func refGRU(m *nn.GRU, x, h0 *graph.Node) (out, hN *graph.Node) {
	seq := refSteps(x, m.BatchFirst)
	var hs []*graph.Node
	g := x.Graph()
	for l, cell := range m.Cells {
		h := refState(h0, l)
		if h == nil {
			h = g.Const(tensor.Zeros(x.DType(), seq[0].Shape()[0], m.Hidden))
		}
		for t, xt := range seq {
			h = refGRUStep(cell, xt, h)
			seq[t] = h
		}
		hs = append(hs, h)
	}
	ax := 0
	if m.BatchFirst {
		ax = 1
	}
	return graph.Stack(ax, seq...), graph.Stack(0, hs...)
}

// valuesAndGrads runs f on fresh nodes of x and the states (Vars) and
// returns its outputs' values, then the gradients of Σ r_k·out_k (fixed
// random r_k) with respect to the parameters, x and the states.
func valuesAndGrads(t *testing.T, ps []nn.NamedParam, ins []*tensor.Tensor, f func(in []*graph.Node) []*graph.Node) [][]float64 {
	t.Helper()
	g := graph.New()
	var xs []*graph.Node
	for _, p := range ps {
		xs = append(xs, p.Param.Node(g))
	}
	in := make([]*graph.Node, len(ins))
	for i, v := range ins {
		if v != nil {
			in[i] = g.Var(v)
			xs = append(xs, in[i])
		}
	}
	outs := f(in)
	rng := tensor.NewRNG(99)
	var res [][]float64
	var loss *graph.Node
	for _, o := range outs {
		res = append(res, o.Value().Contiguous().Values())
		r := g.Const(rng.Normal(o.DType(), 0, 1, o.Shape()...))
		term := graph.Sum(graph.Mul(o, r), nil, false)
		if loss == nil {
			loss = term
		} else {
			loss = graph.Add(loss, term)
		}
	}
	for _, d := range autodiff.Grad(loss, xs...) {
		res = append(res, d.Value().Contiguous().Values())
	}
	return res
}

// requireClose compares what valuesAndGrads returned for the fused and
// the reference graphs: within tol relative to each tensor's largest
// magnitude.
func requireClose(t *testing.T, want, got [][]float64, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for k := range want {
		require.Len(t, got[k], len(want[k]), "tensor %d", k)
		scale := 1.0
		for _, v := range want[k] {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range want[k] {
			require.InDelta(t, want[k][i], got[k][i], tol*scale, "tensor %d element %d", k, i)
		}
	}
}

// fusedTol is the agreement asked of the fused cells with the composite:
// float32 rounding (the fused LSTM adds b_hh to the input projection
// before the recurrent product, the composite after), and 1e-12 in
// float64.
func fusedTol(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return 2e-5
	}
	return 1e-12
}

func TestFusedLSTMMatchesComposite(t *testing.T) {
	const T, B, in, h = 5, 3, 4, 6
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			layers            int
			batchFirst, state bool
		}{{1, false, false}, {2, false, true}, {2, true, false}, {3, true, true}} {
			t.Run(fmt.Sprintf("%v/layers=%d/batchfirst=%v/state=%v", dt, c.layers, c.batchFirst, c.state), func(t *testing.T) {
				rng := tensor.NewRNG(21)
				m := nn.NewLSTM(rng, in, h, nn.RNNOptions{Layers: c.layers, BatchFirst: c.batchFirst, DType: dt})
				x := rng.Normal(dt, 0, 1, T, B, in)
				if c.batchFirst {
					x = rng.Normal(dt, 0, 1, B, T, in)
				}
				var h0, c0 *tensor.Tensor
				if c.state {
					h0, c0 = rng.Normal(dt, 0, 1, c.layers, B, h), rng.Normal(dt, 0, 1, c.layers, B, h)
				}
				ins := []*tensor.Tensor{x, h0, c0}
				want := valuesAndGrads(t, m.Params(), ins, func(n []*graph.Node) []*graph.Node {
					out, hN, cN := refLSTM(m, n[0], n[1], n[2])
					return []*graph.Node{out, hN, cN}
				})
				got := valuesAndGrads(t, m.Params(), ins, func(n []*graph.Node) []*graph.Node {
					out, hN, cN := m.Forward(n[0], n[1], n[2])
					return []*graph.Node{out, hN, cN}
				})
				requireClose(t, want, got, fusedTol(dt))
			})
		}
	}
}

func TestFusedGRUMatchesComposite(t *testing.T) {
	const T, B, in, h = 5, 3, 4, 6
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			layers            int
			batchFirst, state bool
		}{{1, false, false}, {2, true, true}, {3, false, true}} {
			t.Run(fmt.Sprintf("%v/layers=%d/batchfirst=%v/state=%v", dt, c.layers, c.batchFirst, c.state), func(t *testing.T) {
				rng := tensor.NewRNG(22)
				m := nn.NewGRU(rng, in, h, nn.RNNOptions{Layers: c.layers, BatchFirst: c.batchFirst, DType: dt})
				x := rng.Normal(dt, 0, 1, T, B, in)
				if c.batchFirst {
					x = rng.Normal(dt, 0, 1, B, T, in)
				}
				var h0 *tensor.Tensor
				if c.state {
					h0 = rng.Normal(dt, 0, 1, c.layers, B, h)
				}
				ins := []*tensor.Tensor{x, h0}
				want := valuesAndGrads(t, m.Params(), ins, func(n []*graph.Node) []*graph.Node {
					out, hN := refGRU(m, n[0], n[1])
					return []*graph.Node{out, hN}
				})
				got := valuesAndGrads(t, m.Params(), ins, func(n []*graph.Node) []*graph.Node {
					out, hN := m.Forward(n[0], n[1])
					return []*graph.Node{out, hN}
				})
				requireClose(t, want, got, fusedTol(dt))
			})
		}
	}
}

func TestFusedCellsMatchComposite(t *testing.T) {
	const B, in, h = 3, 4, 5
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		rng := tensor.NewRNG(23)
		lstm := nn.NewLSTMCell(rng, in, h, true, dt)
		gru := nn.NewGRUCell(rng, in, h, true, dt)
		ins := []*tensor.Tensor{rng.Normal(dt, 0, 1, B, in), rng.Normal(dt, 0, 1, B, h), rng.Normal(dt, 0, 1, B, h)}
		for _, zero := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/zero state=%v", dt, zero), func(t *testing.T) {
				cellIns := ins
				if zero {
					cellIns = []*tensor.Tensor{ins[0], nil, nil}
				}
				requireClose(t,
					valuesAndGrads(t, lstm.Params(), cellIns, func(n []*graph.Node) []*graph.Node {
						h2, c2 := refLSTMStep(lstm, n[0], n[1], n[2])
						return []*graph.Node{h2, c2}
					}),
					valuesAndGrads(t, lstm.Params(), cellIns, func(n []*graph.Node) []*graph.Node {
						h2, c2 := lstm.Forward(n[0], n[1], n[2])
						return []*graph.Node{h2, c2}
					}), fusedTol(dt))
				if zero {
					return
				}
				requireClose(t,
					valuesAndGrads(t, gru.Params(), ins[:2], func(n []*graph.Node) []*graph.Node {
						return []*graph.Node{refGRUStep(gru, n[0], n[1])}
					}),
					valuesAndGrads(t, gru.Params(), ins[:2], func(n []*graph.Node) []*graph.Node {
						return []*graph.Node{gru.Forward(n[0], n[1])}
					}), fusedTol(dt))
			})
		}
	}
}
