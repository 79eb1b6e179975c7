package graph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Program.Build applies a captured program's ops again, fused steps and
// merged scatters expanded into graph ops, and computes the bits Run
// computes.
func TestProgramBuild(t *testing.T) {
	scatter := func(g *graph.Graph, in []*graph.Node) []*graph.Node {
		x, shape := in[0], []int{3, 5} // a sum of scatter_slice results with disjoint windows
		a := graph.ScatterSlice(graph.Exp(graph.Slice(x, 1, 0, 2, 1)), shape, 1, 0, 2, 1)
		b := graph.ScatterSlice(graph.Square(graph.Slice(x, 1, 3, 5, 1)), shape, 1, 3, 5, 1)
		return []*graph.Node{graph.Add(a, b)}
	}
	rng := tensor.NewRNG(5)
	for _, c := range []struct {
		name, step string
		fn         graph.StepFunc
		in         []*tensor.Tensor
	}{
		{"fused", "fused(", fusedChain, fusedInputs(tensor.Float64, 5, 7)},
		{"fused32", "fused(", fusedChain, fusedInputs(tensor.Float32, 4, 3)},
		{"scatter", "scatter_sum", scatter, []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 5)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := graph.Capture(c.fn, c.in, graph.CaptureOptions{})
			require.NoError(t, err)
			found := false
			for _, s := range p.Steps() {
				found = found || strings.HasPrefix(s.Op, c.step)
			}
			require.True(t, found, "no %s step in\n%v", c.step, p)
			want, err := p.Run(c.in)
			require.NoError(t, err)
			g := graph.New()
			in := make([]*graph.Node, len(c.in))
			for i, x := range c.in {
				in[i] = g.Const(x)
			}
			got := p.Build(g, in)
			require.Len(t, got, len(want))
			for i := range want {
				assert.Equal(t, want[i].Shape(), got[i].Shape())
				assert.Equal(t, want[i].Contiguous().Values(), got[i].Value().Contiguous().Values(), "output %d", i)
			}
			for _, n := range g.Nodes() {
				if n.Op() != nil {
					assert.NotContains(t, n.Op().Name(), "fused", "a fused op in the built graph")
				}
			}
		})
	}
	p, err := graph.Capture(fusedChain, fusedInputs(tensor.Float64, 2, 2), graph.CaptureOptions{})
	require.NoError(t, err)
	g := graph.New()
	assert.Panics(t, func() { p.Build(g, []*graph.Node{g.Const(tensor.Zeros(tensor.Float64, 2, 2))}) })
}
