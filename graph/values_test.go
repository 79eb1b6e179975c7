package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// vtCase is a forward-value check: f applied to constant-free Var inputs
// must give want (row-major) with the given shape.
type vtCase struct {
	name   string
	inputs [][]float64
	shapes [][]int
	f      func(xs []*graph.Node) *graph.Node
	want   []float64
	shape  []int
}

// vtVars adds one Var per input to g.
func vtVars(g *graph.Graph, dt tensor.DType, inputs [][]float64, shapes [][]int) []*graph.Node {
	xs := make([]*graph.Node, len(inputs))
	for i, in := range inputs {
		xs[i] = g.Var(tensor.FromValues(dt, in, shapes[i]...))
	}
	return xs
}

func vtRun(t *testing.T, cases []vtCase) {
	t.Helper()
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				y := c.f(vtVars(g, dt, c.inputs, c.shapes))
				assert.Equal(t, dt, y.DType())
				assert.Equal(t, c.shape, y.Shape())
				numtest.Close(t, c.want, y.Value(), numtest.Tol(dt))
			})
		}
	}
}

// vjpCase is a hand-worked derivative: the cotangents that op.VJP of f's
// output node gives its inputs for cotangent ct.
type vjpCase struct {
	name   string
	inputs [][]float64
	shapes [][]int
	f      func(xs []*graph.Node) *graph.Node
	ct     []float64
	want   [][]float64 // per input; nil for a symbolic zero
}

func vjpRun(t *testing.T, cases []vjpCase) {
	t.Helper()
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				xs := vtVars(g, dt, c.inputs, c.shapes)
				y := c.f(xs)
				require.NotNil(t, y.Op())
				ct := g.Const(tensor.FromValues(dt, c.ct, y.Shape()...))
				got := y.Op().VJP(y, ct, needAll(y))
				require.Len(t, got, len(c.want))
				for i, w := range c.want {
					if w == nil {
						assert.Nil(t, got[i], "input %d", i)
						continue
					}
					require.NotNil(t, got[i], "input %d", i)
					assert.Equal(t, y.Inputs()[i].Shape(), got[i].Shape(), "input %d", i)
					numtest.Close(t, w, got[i].Value(), numtest.Tol(dt), "input %d", i)
				}
			})
		}
	}
}

// vtTensor returns a float64 tensor of the given shape holding 1, 2, 3, ….
func vtTensor(shape ...int) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return tensor.FromValues(tensor.Float64, v, shape...)
}
