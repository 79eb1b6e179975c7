package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// diagVar makes a Var of dt holding vals in the given shape.
func diagVar(g *graph.Graph, dt tensor.DType, vals []float64, shape ...int) *graph.Node {
	if shape == nil {
		shape = []int{}
	}
	return g.Var(tensor.FromValues(dt, vals, shape...))
}

func TestDiagonalNode(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := diagVar(g, dt, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
			y := graph.Diagonal(x)
			assert.Equal(t, []int{3}, y.Shape())
			assert.Equal(t, dt, y.DType())
			assert.Equal(t, []float64{1, 5, 9}, y.Value().Values())
			assert.Equal(t, []float64{1, 5, 9}, graph.Diagonal(graph.Transpose(x)).Value().Values())

			xb := diagVar(g, dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)
			assert.Equal(t, []float64{1, 4, 5, 8}, graph.Diagonal(xb).Value().Values())

			// y = Σ w ⊙ diag(x) with w = (2, 3): ∂y/∂x = [[2, 0], [0, 3]].
			x2 := diagVar(g, dt, []float64{1, 2, 3, 4}, 2, 2)
			w := g.Const(tensor.FromValues(dt, []float64{2, 3}))
			gx := autodiff.Grad(graph.Sum(graph.Mul(graph.Diagonal(x2), w), nil, false), x2)[0]
			assert.Equal(t, []int{2, 2}, gx.Shape())
			assert.Equal(t, []float64{2, 0, 0, 3}, gx.Value().Values())

			// Forward mode: the tangent's diagonal.
			tx := g.Const(tensor.FromValues(dt, []float64{5, 6, 7, 8}, 2, 2))
			jv := autodiff.JVP([]*graph.Node{graph.Diagonal(x2)}, []*graph.Node{x2}, []*graph.Node{tx})[0]
			assert.Equal(t, []float64{5, 8}, jv.Value().Values())
		})
	}
}

func TestAddDiagNodeValues(t *testing.T) {
	m2 := []float64{1, 2, 3, 4}
	cases := []struct {
		name      string
		x, d      []float64
		xs, ds    []int
		wantShape []int
		want      []float64
	}{
		{"2×2 + scalar", m2, []float64{10}, []int{2, 2}, []int{}, []int{2, 2}, []float64{11, 2, 3, 14}},
		{"2×2 + vector", m2, []float64{10, 20}, []int{2, 2}, []int{2}, []int{2, 2}, []float64{11, 2, 3, 24}},
		{"batch (2,2,2) + (2,2)", []float64{1, 2, 3, 4, 5, 6, 7, 8}, []float64{10, 20, 30, 40}, []int{2, 2, 2}, []int{2, 2},
			[]int{2, 2, 2}, []float64{11, 2, 3, 24, 35, 6, 7, 48}},
		{"2×2 + (3,2) broadcasts x", m2, []float64{1, 1, 2, 2, 3, 3}, []int{2, 2}, []int{3, 2},
			[]int{3, 2, 2}, []float64{2, 2, 3, 5, 3, 2, 3, 6, 4, 2, 3, 7}},
	}
	for _, dt := range numtest.DTypes {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				g := graph.New()
				x, d := diagVar(g, dt, tc.x, tc.xs...), diagVar(g, dt, tc.d, tc.ds...)
				y := graph.AddDiag(x, d)
				assert.Equal(t, tc.wantShape, y.Shape())
				assert.Equal(t, dt, y.DType())
				assert.Equal(t, tc.want, y.Value().Values())
				assert.Equal(t, tc.x, x.Value().Values(), "x must not change")
			})
		}
	}
}

func TestAddDiagNodeTransposed(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := diagVar(g, dt, []float64{1, 2, 3, 4}, 2, 2)
		y := graph.AddDiag(graph.Transpose(x), diagVar(g, dt, []float64{10, 20}, 2))
		assert.Equal(t, []float64{11, 3, 2, 24}, y.Value().Values(), "%v", dt)
	}
}

// With y = Σ W ⊙ (x + diag d): x̄ = W summed to x's shape and d̄ = diag W
// summed to d's shape (the trace for a scalar d).
func TestAddDiagNodeGrad(t *testing.T) {
	w2 := []float64{1, 2, 3, 4}
	w222 := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	cases := []struct {
		name           string
		xs, ds, ws     []int
		w              []float64
		wantX, wantD   []float64
		constX, constD bool
	}{
		{name: "scalar d", xs: []int{2, 2}, ds: []int{}, ws: []int{2, 2}, w: w2,
			wantX: w2, wantD: []float64{5}},
		{name: "vector d", xs: []int{2, 2}, ds: []int{2}, ws: []int{2, 2}, w: w2,
			wantX: w2, wantD: []float64{1, 4}},
		{name: "batch x, shared d", xs: []int{2, 2, 2}, ds: []int{2}, ws: []int{2, 2, 2}, w: w222,
			wantX: w222, wantD: []float64{6, 12}},
		{name: "batch x, scalar d", xs: []int{2, 2, 2}, ds: []int{}, ws: []int{2, 2, 2}, w: w222,
			wantX: w222, wantD: []float64{18}},
		{name: "x broadcast along d's batch", xs: []int{2, 2}, ds: []int{2, 2}, ws: []int{2, 2, 2}, w: w222,
			wantX: []float64{6, 8, 10, 12}, wantD: []float64{1, 4, 5, 8}},
		// A constant noise or jitter: the cotangent of d is skipped.
		{name: "constant d", xs: []int{2, 2}, ds: []int{}, ws: []int{2, 2}, w: w2, wantX: w2, constD: true},
		{name: "constant x", xs: []int{2, 2}, ds: []int{2}, ws: []int{2, 2}, w: w2, wantD: []float64{1, 4}, constX: true},
	}
	for _, dt := range numtest.DTypes {
		for _, tc := range cases {
			t.Run(dt.String()+"/"+tc.name, func(t *testing.T) {
				g := graph.New()
				leaf := func(isConst bool, shape []int) *graph.Node {
					v := tensor.Arange(dt, 1, float64(1+tensor.New(dt, shape...).Size()), 1)
					v = tensor.Reshape(v, shape...)
					if isConst {
						return g.Const(v)
					}
					return g.Var(v)
				}
				x, d := leaf(tc.constX, tc.xs), leaf(tc.constD, tc.ds)
				w := g.Const(tensor.FromValues(dt, tc.w, tc.ws...))
				y := graph.Sum(graph.Mul(graph.AddDiag(x, d), w), nil, false)
				var wrt []*graph.Node
				if !tc.constX {
					wrt = append(wrt, x)
				}
				if !tc.constD {
					wrt = append(wrt, d)
				}
				grads := autodiff.Grad(y, wrt...)
				if !tc.constX {
					assert.Equal(t, tc.xs, grads[0].Shape())
					assert.Equal(t, tc.wantX, grads[0].Value().Values(), "x̄")
					grads = grads[1:]
				}
				if !tc.constD {
					assert.Equal(t, tc.ds, grads[0].Shape())
					assert.Equal(t, tc.wantD, grads[0].Value().Values(), "d̄")
				}
			})
		}
	}
}

// Forward mode with one tangent absent: x broadcast along d's batch, so
// ẋ alone is broadcast to the output, and ḋ alone lands on a zero matrix.
func TestAddDiagNodeJVP(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x := diagVar(g, dt, []float64{1, 2, 3, 4}, 2, 2)
			d := diagVar(g, dt, []float64{0, 0, 0, 0, 0, 0}, 3, 2)
			y := graph.AddDiag(x, d)
			tx := g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4}, 2, 2))
			td := g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2))

			jx := autodiff.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{tx})[0]
			assert.Equal(t, []int{3, 2, 2}, jx.Shape())
			assert.Equal(t, []float64{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}, jx.Value().Values())

			jd := autodiff.JVP([]*graph.Node{y}, []*graph.Node{d}, []*graph.Node{td})[0]
			assert.Equal(t, []int{3, 2, 2}, jd.Shape())
			assert.Equal(t, []float64{1, 0, 0, 2, 3, 0, 0, 4, 5, 0, 0, 6}, jd.Value().Values())

			both := autodiff.JVP([]*graph.Node{y}, []*graph.Node{x, d}, []*graph.Node{tx, td})[0]
			assert.Equal(t, []float64{2, 2, 3, 6, 4, 2, 3, 8, 6, 2, 3, 10}, both.Value().Values())
		})
	}
}

// requireGraphDiagFail runs f and requires a *tensor.Error whose message
// contains every one of want.
func requireGraphDiagFail(t *testing.T, f func(), want ...string) {
	t.Helper()
	e := graphError(t, f)
	for _, w := range want {
		assert.Contains(t, e.Error(), w)
	}
}

func TestDiagNodePanics(t *testing.T) {
	for _, dt := range numtest.DTypes {
		other := tensor.Float64
		if dt == tensor.Float64 {
			other = tensor.Float32
		}
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			v := func(dt tensor.DType, shape ...int) *graph.Node { return g.Var(tensor.New(dt, shape...)) }
			requireGraphDiagFail(t, func() { graph.Diagonal(v(dt, 3)) }, "diagonal", "(3,)")
			requireGraphDiagFail(t, func() { graph.Diagonal(v(dt, 2, 3)) }, "diagonal", "(2, 3)")
			requireGraphDiagFail(t, func() { graph.Diagonal(nil) }, "diagonal", "nil")

			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 2, 3), v(dt, 3)) }, "add_diag", "(2, 3)")
			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 3), v(dt)) }, "add_diag", "(3,)")
			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 3, 3), v(dt, 2)) }, "add_diag", "(3, 3)", "(2,)")
			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 2, 3, 3), v(dt, 4, 3)) }, "add_diag", "(2, 3, 3)", "(4, 3)")
			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 3, 3), v(other)) }, "add_diag", "mixed dtypes")
			requireGraphDiagFail(t, func() { graph.AddDiag(v(dt, 3, 3), graph.New().Var(tensor.New(dt))) }, "add_diag", "different graphs")
		})
	}
}
