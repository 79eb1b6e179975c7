package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// TestCaptureFindsConcatInsideConcat: a concat of consecutive pieces of
// an earlier concat along its outermost axis (the same slots, up to
// reshapes) becomes a view of it; one along an inner axis, one of pieces
// out of order and one that comes first stay concats.
func TestCaptureFindsConcatInsideConcat(t *testing.T) {
	rng := tensor.NewRNG(5)
	in := []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 3)}
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x := in[0]
		a, b, c := graph.Exp(x), graph.Sin(x), graph.Cos(x)
		early := graph.Concat(0, a, b) // before the whole stack: kept
		whole := graph.Concat(0, graph.Reshape(a, 1, 2, 3), graph.Reshape(b, 1, 2, 3), graph.Reshape(c, 1, 2, 3))
		inside := graph.Concat(0, b, c)  // rows 2-5 of whole, reshaped: a view
		swapped := graph.Concat(0, c, b) // out of order: kept
		inner := graph.Concat(1, b, c)   // along an inner axis: kept
		return []*graph.Node{early, whole, graph.MulScalar(inside, 2), swapped, inner}
	}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	ops := map[string]int{}
	for _, s := range p.Steps() {
		ops[s.Op]++
	}
	require.Equal(t, 1, ops["concat_view"], p.String())
	require.Equal(t, 1, p.Stats().Views)
	require.Equal(t, 4, ops["concat"], p.String())
	for k := range 2 {
		tensor.MulScalarTo(in[0], in[0], 1.5+float64(k))
		want := eagerRun(step, in)
		got, err := p.Run(in)
		require.NoError(t, err)
		requireSameBits(t, want, got, "outputs")
	}
	g := graph.New()
	var vals []*tensor.Tensor
	for _, n := range p.Build(g, []*graph.Node{g.VarOf(in[0])}) {
		vals = append(vals, n.Value())
	}
	requireSameBits(t, eagerRun(step, in), vals, "built program")
	plain, err := graph.Capture(step, in, graph.CaptureOptions{NoFusion: true})
	require.NoError(t, err)
	require.NotContains(t, plain.String(), "concat_view")
}

// TestCaptureConcatViewKeepsOutputsApart: a concat that is an output
// keeps its own memory, so changing one output in place leaves the
// other as eager leaves it.
func TestCaptureConcatViewKeepsOutputsApart(t *testing.T) {
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x := in[0]
		a, b, c := graph.Exp(x), graph.Sin(x), graph.Cos(x)
		whole := graph.Concat(0, graph.Reshape(a, 1, 2, 3), graph.Reshape(b, 1, 2, 3), graph.Reshape(c, 1, 2, 3))
		inside := graph.Concat(0, b, c)
		return []*graph.Node{whole, graph.Reshape(inside, 12)}
	}
	in := []*tensor.Tensor{tensor.NewRNG(5).Normal(tensor.Float64, 0, 1, 2, 3)}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Zero(t, p.Stats().Views, p.String())
	out, err := p.Run(in)
	require.NoError(t, err)
	before := out[1].Clone()
	out[0].Fill(0) // a caller clipping one output in place
	requireSameBits(t, []*tensor.Tensor{before}, out[1:], "the other output")
}

// TestCaptureConcatViewKeepsItsBaseAlive: the earlier concat is read only
// early and is no output; the view of it is read after other buffers came
// and went, so the planner must keep the earlier buffer alive for it.
func TestCaptureConcatViewKeepsItsBaseAlive(t *testing.T) {
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x := in[0]
		a, b, c := graph.Exp(x), graph.Sin(x), graph.Cos(x)
		whole := graph.Concat(0, graph.Reshape(a, 1, 2, 3), graph.Reshape(b, 1, 2, 3), graph.Reshape(c, 1, 2, 3))
		s := graph.Sum(whole, nil, false)
		inside := graph.Concat(0, b, c)
		y := x
		for range 4 { // buffers that could take the earlier concat's place
			y = graph.Tanh(graph.Add(graph.Square(y), x))
		}
		return []*graph.Node{s, graph.Sum(graph.Mul(graph.Concat(0, y, y), inside), nil, false)}
	}
	in := []*tensor.Tensor{tensor.NewRNG(6).Normal(tensor.Float64, 0, 1, 2, 3)}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, p.Stats().Views, p.String())
	for k := range 3 {
		tensor.MulScalarTo(in[0], in[0], 0.7+float64(k))
		got, err := p.Run(in)
		require.NoError(t, err)
		requireSameBits(t, eagerRun(step, in), got, "outputs")
	}
}

// TestCaptureDropsPiecesOfAConcatView: the reshapes that only fed a concat
// turned into a view are no longer run.
func TestCaptureDropsPiecesOfAConcatView(t *testing.T) {
	step := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x := graph.Reshape(in[0], 1, 2, 3)
		a, b, c := graph.Exp(x), graph.Sin(x), graph.Cos(x)
		whole := graph.Concat(0, a, b, c)
		inside := graph.Concat(0, graph.Reshape(b, 2, 3), graph.Reshape(c, 2, 3))
		return []*graph.Node{graph.Sum(whole, nil, false), graph.Sum(graph.Square(inside), nil, false)}
	}
	in := []*tensor.Tensor{tensor.NewRNG(7).Normal(tensor.Float32, 0, 1, 2, 3)}
	p, err := graph.Capture(step, in, graph.CaptureOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, p.Stats().Views, p.String())
	reshapes := 0
	for _, s := range p.Steps() {
		if s.Op == "reshape" {
			reshapes++
		}
	}
	require.Equal(t, 1, reshapes, "only the input's reshape is left:\n%v", p)
	require.Contains(t, p.String(), "(removed: nothing reads it after the rewrites)")
	got, err := p.Run(in)
	require.NoError(t, err)
	requireSameBits(t, eagerRun(step, in), got, "outputs")
}
