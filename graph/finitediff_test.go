package graph_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// An independent check of single ops' rules, without package autodiff:
// op.VJP and op.JVP of the output node are compared with central
// differences of ⟨ct, f(x)⟩ and of f(x) along a direction.

// fdEval builds f on a fresh graph at xs and returns its output values.
func fdEval(f func([]*graph.Node) *graph.Node, xs []*tensor.Tensor) []float64 {
	g := graph.New()
	nodes := make([]*graph.Node, len(xs))
	for i, x := range xs {
		nodes[i] = g.Var(x)
	}
	return f(nodes).Value().Values()
}

func fdDot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// fdCheck checks the VJP and JVP rules of the op producing f's output
// (f must apply exactly one op to its Var inputs) at float64 inputs xs.
func fdCheck(t *testing.T, f func([]*graph.Node) *graph.Node, xs []*tensor.Tensor) {
	t.Helper()
	const h, tol = 1e-6, 1e-6
	rng := tensor.NewRNG(3)
	g := graph.New()
	vars := make([]*graph.Node, len(xs))
	for i, x := range xs {
		vars[i] = g.Var(x)
	}
	y := f(vars)
	require.NotNil(t, y.Op())
	ct := rng.Normal(tensor.Float64, 0, 1, y.Shape()...)
	grads := y.Op().VJP(y, g.Const(ct), needAll(y))
	ctv := ct.Values()
	for i, x := range xs {
		vals := x.Float64s() // perturbed in place and restored
		var got []float64
		if grads[i] != nil {
			require.Equal(t, x.Shape(), grads[i].Shape(), "VJP shape of input %d", i)
			got = grads[i].Value().Values()
		} else {
			got = make([]float64, len(vals))
		}
		for k := range vals {
			x0 := vals[k]
			vals[k] = x0 + h
			fp := fdDot(ctv, fdEval(f, xs))
			vals[k] = x0 - h
			fm := fdDot(ctv, fdEval(f, xs))
			vals[k] = x0
			want := (fp - fm) / (2 * h)
			assert.InDelta(t, want, got[k], tol*math.Max(1, math.Abs(want)), "VJP input %d element %d", i, k)
		}

		// JVP along a random direction for input i alone.
		v := rng.Normal(tensor.Float64, 0, 1, x.Shape()...)
		tangents := make([]*graph.Node, len(xs))
		tangents[i] = g.Const(v)
		jv := y.Op().JVP(y, tangents)
		var jvv []float64
		if jv != nil {
			require.Equal(t, y.Shape(), jv.Shape(), "JVP shape for input %d", i)
			jvv = jv.Value().Values()
		} else {
			jvv = make([]float64, y.Size())
		}
		x0 := x.Clone()
		tensor.CopyInto(x, tensor.Add(x0, tensor.MulScalar(v, h)))
		fp := fdEval(f, xs)
		tensor.CopyInto(x, tensor.Sub(x0, tensor.MulScalar(v, h)))
		fm := fdEval(f, xs)
		tensor.CopyInto(x, x0)
		for k := range fp {
			want := (fp[k] - fm[k]) / (2 * h)
			assert.InDelta(t, want, jvv[k], tol*math.Max(1, math.Abs(want)), "JVP input %d output element %d", i, k)
		}
	}
}

func TestRulesAgainstFiniteDifferences(t *testing.T) {
	rng := tensor.NewRNG(11)
	normal := func(shape ...int) *tensor.Tensor { return rng.Normal(tensor.Float64, 0, 1, shape...) }
	pos := func(shape ...int) *tensor.Tensor { return rng.Uniform(tensor.Float64, 0.5, 3, shape...) }
	cases := []struct {
		name string
		f    func([]*graph.Node) *graph.Node
		xs   []*tensor.Tensor
	}{
		{"mul broadcast", bin(graph.Mul), []*tensor.Tensor{normal(2, 3), normal(3)}},
		{"div broadcast", bin(graph.Div), []*tensor.Tensor{normal(2, 3), pos(2, 1)}},
		{"pow", bin(graph.Pow), []*tensor.Tensor{pos(4), normal(4)}},
		{"gelu", un(graph.Gelu), []*tensor.Tensor{normal(5)}},
		{"softplus", un(graph.Softplus), []*tensor.Tensor{normal(5)}},
		{"digamma", un(graph.Digamma), []*tensor.Tensor{pos(5)}},
		{"polygamma", func(xs []*graph.Node) *graph.Node { return graph.Polygamma(2, xs[0]) }, []*tensor.Tensor{pos(5)}},
		{"logsumexp", func(xs []*graph.Node) *graph.Node { return graph.LogSumExp(xs[0], []int{0}, false) }, []*tensor.Tensor{normal(3, 2)}},
		{"variance", func(xs []*graph.Node) *graph.Node { return graph.Variance(xs[0], []int{1}, true, 1) }, []*tensor.Tensor{normal(2, 4)}},
		{"softmax", func(xs []*graph.Node) *graph.Node { return graph.Softmax(xs[0], 1) }, []*tensor.Tensor{normal(2, 3)}},
		{"log_softmax", func(xs []*graph.Node) *graph.Node { return graph.LogSoftmax(xs[0], 0) }, []*tensor.Tensor{normal(3, 2)}},
		{"matmul transA batch", func(xs []*graph.Node) *graph.Node { return graph.MatMulT(xs[0], xs[1], true, false) },
			[]*tensor.Tensor{normal(2, 3, 2), normal(3, 4)}},
		{"pad", func(xs []*graph.Node) *graph.Node { return graph.Pad(xs[0], [][2]int{{1, 0}, {0, 2}}, 3) }, []*tensor.Tensor{normal(2, 2)}},
		{"scatter_slice", func(xs []*graph.Node) *graph.Node { return graph.ScatterSlice(xs[0], []int{5, 2}, 0, 4, 0, -2) }, []*tensor.Tensor{normal(2, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { fdCheck(t, c.f, c.xs) })
	}
}

// needAll says that every input of n needs a cotangent, as outside a
// reverse sweep that could skip some.
func needAll(n *graph.Node) []bool {
	needs := make([]bool, len(n.Inputs()))
	for i := range needs {
		needs[i] = true
	}
	return needs
}
