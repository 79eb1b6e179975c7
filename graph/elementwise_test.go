package graph_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func un(op func(*graph.Node) *graph.Node) func(xs []*graph.Node) *graph.Node {
	return func(xs []*graph.Node) *graph.Node { return op(xs[0]) }
}

func bin(op func(a, b *graph.Node) *graph.Node) func(xs []*graph.Node) *graph.Node {
	return func(xs []*graph.Node) *graph.Node { return op(xs[0], xs[1]) }
}

func TestElementwiseValues(t *testing.T) {
	ln2, ln3 := math.Ln2, math.Log(3)
	v1 := [][]int{{2}}
	v3 := [][]int{{3}}
	vtRun(t, []vtCase{
		{"add broadcast", [][]float64{{1, 2, 3}, {10}}, [][]int{{3}, {1}}, bin(graph.Add), []float64{11, 12, 13}, []int{3}},
		// [[1],[2]] − [10, 20] broadcasts to 2×2.
		{"sub broadcast", [][]float64{{1, 2}, {10, 20}}, [][]int{{2, 1}, {2}}, bin(graph.Sub), []float64{-9, -19, -8, -18}, []int{2, 2}},
		{"mul", [][]float64{{2, 3}, {4, 5}}, [][]int{{2}, {2}}, bin(graph.Mul), []float64{8, 15}, []int{2}},
		{"div", [][]float64{{1, 3}, {4, 2}}, [][]int{{2}, {2}}, bin(graph.Div), []float64{0.25, 1.5}, []int{2}},
		{"neg", [][]float64{{1, -2}}, v1, un(graph.Neg), []float64{-1, 2}, []int{2}},
		{"pow", [][]float64{{2, 9}, {3, 0.5}}, [][]int{{2}, {2}}, bin(graph.Pow), []float64{8, 3}, []int{2}},
		{"maximum", [][]float64{{1, 5, 3}, {4, 2, 3}}, [][]int{{3}, {3}}, bin(graph.Maximum), []float64{4, 5, 3}, []int{3}},
		{"minimum", [][]float64{{1, 5, 3}, {4, 2, 3}}, [][]int{{3}, {3}}, bin(graph.Minimum), []float64{1, 2, 3}, []int{3}},
		{"add_scalar", [][]float64{{1, 2}}, v1, func(xs []*graph.Node) *graph.Node { return graph.AddScalar(xs[0], 0.5) }, []float64{1.5, 2.5}, []int{2}},
		{"mul_scalar", [][]float64{{1, -2}}, v1, func(xs []*graph.Node) *graph.Node { return graph.MulScalar(xs[0], 3) }, []float64{3, -6}, []int{2}},
		{"pow_scalar", [][]float64{{4, 9}}, v1, func(xs []*graph.Node) *graph.Node { return graph.PowScalar(xs[0], 0.5) }, []float64{2, 3}, []int{2}},
		{"exp", [][]float64{{0, 1}}, v1, un(graph.Exp), []float64{1, math.E}, []int{2}},
		{"log", [][]float64{{1, math.E * math.E}}, v1, un(graph.Log), []float64{0, 2}, []int{2}},
		{"log1p", [][]float64{{0, math.E - 1}}, v1, un(graph.Log1p), []float64{0, 1}, []int{2}},
		{"expm1", [][]float64{{0, ln2}}, v1, un(graph.Expm1), []float64{0, 1}, []int{2}},
		{"sqrt", [][]float64{{4, 0.25}}, v1, un(graph.Sqrt), []float64{2, 0.5}, []int{2}},
		{"square", [][]float64{{-3, 0.5}}, v1, un(graph.Square), []float64{9, 0.25}, []int{2}},
		{"reciprocal", [][]float64{{4, -0.5}}, v1, un(graph.Reciprocal), []float64{0.25, -2}, []int{2}},
		{"abs", [][]float64{{-2, 3}}, v1, un(graph.Abs), []float64{2, 3}, []int{2}},
		{"sign", [][]float64{{-2, 0, 3}}, v3, un(graph.Sign), []float64{-1, 0, 1}, []int{3}},
		{"sin", [][]float64{{0, math.Pi / 2}}, v1, un(graph.Sin), []float64{0, 1}, []int{2}},
		{"cos", [][]float64{{0, math.Pi}}, v1, un(graph.Cos), []float64{1, -1}, []int{2}},
		// tanh(ln 3) = (9 − 1)/(9 + 1).
		{"tanh", [][]float64{{0, ln3}}, v1, un(graph.Tanh), []float64{0, 0.8}, []int{2}},
		// σ(ln 3) = 3/(3 + 1).
		{"sigmoid", [][]float64{{0, ln3}}, v1, un(graph.Sigmoid), []float64{0.5, 0.75}, []int{2}},
		// log(1 + e^{ln 3}) = log 4.
		{"softplus", [][]float64{{0, ln3}}, v1, un(graph.Softplus), []float64{ln2, 2 * ln2}, []int{2}},
		{"relu", [][]float64{{-1, 2}}, v1, un(graph.Relu), []float64{0, 2}, []int{2}},
		{"leaky_relu", [][]float64{{-2, 3}}, v1, func(xs []*graph.Node) *graph.Node { return graph.LeakyRelu(xs[0], 0.1) }, []float64{-0.2, 3}, []int{2}},
		// 2·(e^{−ln 2} − 1) = −1.
		{"elu", [][]float64{{-ln2, 3}}, v1, func(xs []*graph.Node) *graph.Node { return graph.Elu(xs[0], 2) }, []float64{-1, 3}, []int{2}},
		// gelu(1) = Φ(1) = 0.841344746068543 (normal table).
		{"gelu", [][]float64{{0, 1}}, v1, un(graph.Gelu), []float64{0, 0.8413447460685429}, []int{2}},
		{"erf", [][]float64{{0, 1}}, v1, un(graph.Erf), []float64{0, 0.8427007929497149}, []int{2}},
		// Γ(1) = 1, Γ(5) = 24, Γ(½) = √π.
		{"lgamma", [][]float64{{1, 5, 0.5}}, v3, un(graph.Lgamma), []float64{0, math.Log(24), 0.5 * math.Log(math.Pi)}, []int{3}},
		// ψ(1) = −γ, ψ(½) = −γ − 2 ln 2.
		{"digamma", [][]float64{{1, 0.5}}, v1, un(graph.Digamma), []float64{-0.5772156649015329, -0.5772156649015329 - 2*ln2}, []int{2}},
		// ψ′(1) = π²/6, ψ′(½) = π²/2.
		{"trigamma", [][]float64{{1, 0.5}}, v1, func(xs []*graph.Node) *graph.Node { return graph.Polygamma(1, xs[0]) },
			[]float64{math.Pi * math.Pi / 6, math.Pi * math.Pi / 2}, []int{2}},
		// ψ″(1) = −2ζ(3), ψ‴(1) = 6ζ(4) = π⁴/15.
		{"polygamma 2", [][]float64{{1}}, [][]int{{1}}, func(xs []*graph.Node) *graph.Node { return graph.Polygamma(2, xs[0]) },
			[]float64{-2 * 1.2020569031595942}, []int{1}},
		{"polygamma 3", [][]float64{{1}}, [][]int{{1}}, func(xs []*graph.Node) *graph.Node { return graph.Polygamma(3, xs[0]) },
			[]float64{math.Pow(math.Pi, 4) / 15}, []int{1}},
		// Poles: ψ′ has +Inf at 0, −1, −2, …; ψ′(−½) = π²/2 + 4 by the recurrence ψ′(x) = ψ′(x+1) + 1/x².
		{"trigamma poles and negatives", [][]float64{{0, -2, -0.5}}, v3, func(xs []*graph.Node) *graph.Node { return graph.Polygamma(1, xs[0]) },
			[]float64{math.Inf(1), math.Inf(1), math.Pi*math.Pi/2 + 4}, []int{3}},
		{"clamp", [][]float64{{-3, 0.5, 2}}, v3, func(xs []*graph.Node) *graph.Node { return graph.Clamp(xs[0], -1, 1) }, []float64{-1, 0.5, 1}, []int{3}},
		{"where", [][]float64{{1, 0, 1}, {1, 2, 3}, {10, 20, 30}}, [][]int{{3}, {3}, {3}},
			func(xs []*graph.Node) *graph.Node { return graph.Where(xs[0], xs[1], xs[2]) }, []float64{1, 20, 3}, []int{3}},
		{"where broadcast", [][]float64{{1, 0}, {1, 2}, {7}}, [][]int{{2, 1}, {2}, {}},
			func(xs []*graph.Node) *graph.Node { return graph.Where(xs[0], xs[1], xs[2]) }, []float64{1, 2, 7, 7}, []int{2, 2}},
		{"equal", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.Equal), []float64{0, 1, 0}, []int{3}},
		{"not_equal", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.NotEqual), []float64{1, 0, 1}, []int{3}},
		{"less", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.Less), []float64{1, 0, 0}, []int{3}},
		{"less_equal", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.LessEqual), []float64{1, 1, 0}, []int{3}},
		{"greater", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.Greater), []float64{0, 0, 1}, []int{3}},
		{"greater_equal", [][]float64{{1, 2, 3}, {2}}, [][]int{{3}, {1}}, bin(graph.GreaterEqual), []float64{0, 1, 1}, []int{3}},
		{"stop_gradient", [][]float64{{1, 2}}, v1, un(graph.StopGradient), []float64{1, 2}, []int{2}},
	})
}

func TestElementwiseVJP(t *testing.T) {
	gamma := 0.5772156649015329
	vjpRun(t, []vjpCase{
		// d(ab) = b da + a db at a = 2, b = 3.
		{"mul", [][]float64{{2}, {3}}, [][]int{{}, {}}, bin(graph.Mul), []float64{1}, [][]float64{{3}, {2}}},
		// A scale a = 2 times b (2×3): ā = Σ ct·b = 1+2+6+8+15+18 = 50,
		// b̄ = a·ct (ā is one inner product; see TestMulScaleGradient).
		{"mul scale", [][]float64{{2}, {1, 2, 3, 4, 5, 6}}, [][]int{{}, {2, 3}}, bin(graph.Mul), []float64{1, 1, 2, 2, 3, 3},
			[][]float64{{50}, {2, 2, 4, 4, 6, 6}}},
		{"mul scale (1, 1) second", [][]float64{{1, 2, 3, 4}, {-1}}, [][]int{{2, 2}, {1, 1}}, bin(graph.Mul), []float64{1, 0, 0, 1},
			[][]float64{{-1, 0, 0, -1}, {5}}},
		// d(a/b) = da/b − a db/b² at a = 1, b = 2.
		{"div", [][]float64{{1}, {2}}, [][]int{{}, {}}, bin(graph.Div), []float64{1}, [][]float64{{0.5}, {-0.25}}},
		// Broadcasting sums the cotangent back: b was used twice.
		{"add broadcast", [][]float64{{1, 2, 3, 4}, {5, 6}}, [][]int{{2, 2}, {2}}, bin(graph.Add), []float64{1, 2, 3, 4},
			[][]float64{{1, 2, 3, 4}, {4, 6}}},
		// d(aᵇ) = b aᵇ⁻¹ da + aᵇ ln a db at a = 2, b = 3: 12 and 8 ln 2.
		{"pow", [][]float64{{2}, {3}}, [][]int{{}, {}}, bin(graph.Pow), []float64{1}, [][]float64{{12}, {8 * math.Ln2}}},
		// A tie splits the derivative evenly; otherwise the larger operand takes it.
		{"maximum", [][]float64{{2, 1}, {2, 3}}, [][]int{{2}, {2}}, bin(graph.Maximum), []float64{1, 1}, [][]float64{{0.5, 0}, {0.5, 1}}},
		{"minimum", [][]float64{{2, 1}, {2, 3}}, [][]int{{2}, {2}}, bin(graph.Minimum), []float64{1, 1}, [][]float64{{0.5, 1}, {0.5, 0}}},
		{"relu", [][]float64{{-1, 2}}, [][]int{{2}}, un(graph.Relu), []float64{5, 5}, [][]float64{{0, 5}}},
		{"leaky_relu", [][]float64{{-1, 2}}, [][]int{{2}}, func(xs []*graph.Node) *graph.Node { return graph.LeakyRelu(xs[0], 0.2) },
			[]float64{5, 5}, [][]float64{{1, 5}}},
		// σ'(0) = ¼, tanh'(0) = 1.
		{"sigmoid", [][]float64{{0}}, [][]int{{1}}, un(graph.Sigmoid), []float64{2}, [][]float64{{0.5}}},
		{"tanh", [][]float64{{0}}, [][]int{{1}}, un(graph.Tanh), []float64{2}, [][]float64{{2}}},
		// d lgamma = ψ: ψ(1) = −γ.
		{"lgamma", [][]float64{{1}}, [][]int{{1}}, un(graph.Lgamma), []float64{1}, [][]float64{{-gamma}}},
		// d log = 1/x; d sqrt = 1/(2 sqrt x) at x = 4.
		{"log", [][]float64{{4}}, [][]int{{1}}, un(graph.Log), []float64{1}, [][]float64{{0.25}}},
		{"sqrt", [][]float64{{4}}, [][]int{{1}}, un(graph.Sqrt), []float64{1}, [][]float64{{0.25}}},
		{"clamp", [][]float64{{-3, 0.5, 2}}, [][]int{{3}}, func(xs []*graph.Node) *graph.Node { return graph.Clamp(xs[0], -1, 1) },
			[]float64{1, 1, 1}, [][]float64{{0, 1, 0}}},
		{"sign", [][]float64{{-3, 2}}, [][]int{{2}}, un(graph.Sign), []float64{1, 1}, [][]float64{nil}},
		{"less", [][]float64{{1}, {2}}, [][]int{{}, {}}, bin(graph.Less), []float64{1}, [][]float64{nil, nil}},
		{"stop_gradient", [][]float64{{1}}, [][]int{{}}, un(graph.StopGradient), []float64{1}, [][]float64{nil}},
		// cond gets nothing; the cotangent is routed by cond.
		{"where", [][]float64{{1, 0}, {1, 2}, {3, 4}}, [][]int{{2}, {2}, {2}},
			func(xs []*graph.Node) *graph.Node { return graph.Where(xs[0], xs[1], xs[2]) }, []float64{5, 6},
			[][]float64{nil, {5, 0}, {0, 6}}},
	})
}

// TestMulScaleGradient checks the cotangent of a scale (one number times
// a tensor): an inner product of the cotangent and the other factor
// rather than their product summed, unless the cotangent is a broadcast
// view; both agree with finite differences, to first and second order.
func TestMulScaleGradient(t *testing.T) {
	rng := tensor.NewRNG(5)
	for _, c := range []struct {
		name    string
		f       func(xs []*graph.Node) *graph.Node
		product bool // the scale's cotangent is an inner product
	}{
		{"scale·x", func(xs []*graph.Node) *graph.Node { return graph.Mul(xs[0], xs[1]) }, true},
		{"x·scale, summed", func(xs []*graph.Node) *graph.Node {
			return graph.Sum(graph.Mul(xs[1], xs[0]), nil, false)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inputs := []*tensor.Tensor{tensor.Scalar(tensor.Float64, 0.7), rng.Normal(tensor.Float64, 0, 1, 3, 4)}
			_, err := autodiff.GradCheck(c.f, inputs, autodiff.GradCheckOptions{Name: "mul " + c.name, Order: 2})
			require.NoError(t, err)

			g := graph.New()
			s, x := g.Var(inputs[0]), g.Var(inputs[1])
			y := c.f([]*graph.Node{s, x})
			ct := g.Const(rng.Normal(tensor.Float64, 0, 1, y.Shape()...))
			before := g.Len()
			autodiff.VJP(y, ct, s)
			var ops []string
			for _, n := range g.Nodes()[before:] {
				if n.Op() != nil {
					ops = append(ops, n.Op().Name())
				}
			}
			assert.Equal(t, c.product, slices.Contains(ops, "matmul"), "ops of the reverse pass: %v", ops)
		})
	}
}

func TestMulJVPHandlesZeroTangents(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		a, b := g.Var(tensor.Scalar(dt, 2)), g.Var(tensor.Scalar(dt, 3))
		y := graph.Mul(a, b)
		one := g.Const(tensor.Scalar(dt, 1))
		// Only a moves: dy = b·da = 3; only b moves: dy = a·db = 2.
		assert.InDelta(t, 3, y.Op().JVP(y, []*graph.Node{one, nil}).Item(), 0)
		assert.InDelta(t, 2, y.Op().JVP(y, []*graph.Node{nil, one}).Item(), 0)
		assert.InDelta(t, 5, y.Op().JVP(y, []*graph.Node{one, one}).Item(), 0)
		s := graph.Sign(a)
		assert.Nil(t, s.Op().JVP(s, []*graph.Node{one}))
	}
}

func TestElementwiseMisuse(t *testing.T) {
	g := graph.New()
	a := g.Var(tensor.New(tensor.Float32, 2, 3))
	b := g.Var(tensor.New(tensor.Float32, 4))
	c := g.Var(tensor.New(tensor.Float64, 2, 3))
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"shapes", "sub", func() { graph.Sub(a, b) }},
		{"dtypes", "mixed dtypes", func() { graph.Mul(a, c) }},
		{"graphs", "different graphs", func() { graph.Div(a, graph.New().Var(tensor.New(tensor.Float32, 2, 3))) }},
		{"where", "where", func() { graph.Where(a, a, c) }},
		{"clamp", "clamp", func() { graph.Clamp(a, 1, 0) }},
		{"polygamma", "polygamma", func() { graph.Polygamma(-1, a) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := vtCatch(tc.f)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := vtCatch(func() { graph.Sub(a, b) })
	assert.Contains(t, err.Error(), "(2, 3)")
	assert.Contains(t, err.Error(), "(4,)")
}

// vtCatch runs f and returns the *tensor.Error it panicked with, if any.
func vtCatch(f func()) (err error) {
	defer tensor.Recover(&err)
	f()
	return nil
}

// Xlogy's value and derivatives by hand at x = (2, 0), y = (e, 1):
// values 2·1 = 2 and 0; ∂/∂x = log y where x ≠ 0 and 0 where x = 0, so
// (1, 0); ∂/∂y = x/y, so (2/e, 0).
func TestXlogyByHand(t *testing.T) {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{2, 0}, 2))
	y := g.Var(tensor.FromFloat64s([]float64{math.E, 1}, 2))
	z := graph.Xlogy(x, y)
	numtest.Close(t, []float64{2, 0}, z.Value(), 1e-15)
	grads := autodiff.Grad(graph.Sum(z, nil, false), x, y)
	numtest.Close(t, []float64{1, 0}, grads[0].Value(), 1e-15, "d/dx")
	numtest.Close(t, []float64{2 / math.E, 0}, grads[1].Value(), 1e-15, "d/dy")
}
