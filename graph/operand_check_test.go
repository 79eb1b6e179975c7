package graph_test

// Every exported constructor given a nil operand (or a node from another
// graph, or one made before Reset) must panic with a *tensor.Error naming
// the op and the argument, never with a nil-pointer dereference.

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// graphError runs f and returns the *tensor.Error it panics with.
func graphError(t *testing.T, f func()) (e *tensor.Error) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "expected a panic")
		err, ok := r.(error)
		require.True(t, ok, "panic value %v (%T) is not an error", r, r)
		require.True(t, errors.As(err, &e), "panic %v (%T) is not a *tensor.Error", r, r)
	}()
	f()
	return nil
}

type nodeCtor struct {
	op    string // the op the error must name
	arity int    // number of node operands
	// call runs the constructor with the given operands; the other
	// arguments are valid for operands of shape (1, 2, 4, 4) (NCHW).
	call func(g *graph.Graph, ns []*graph.Node)
}

var ctorPool = tensor.PoolParams{Kernel: [2]int{2, 2}}

func constructors() map[string]nodeCtor {
	u := func(op string, f func(x *graph.Node)) nodeCtor {
		return nodeCtor{op, 1, func(_ *graph.Graph, ns []*graph.Node) { f(ns[0]) }}
	}
	b := func(op string, f func(x, y *graph.Node)) nodeCtor {
		return nodeCtor{op, 2, func(_ *graph.Graph, ns []*graph.Node) { f(ns[0], ns[1]) }}
	}
	xs := []int{1, 2, 4, 4}
	return map[string]nodeCtor{
		"Add":           b("add", func(x, y *graph.Node) { graph.Add(x, y) }),
		"Sub":           b("sub", func(x, y *graph.Node) { graph.Sub(x, y) }),
		"Mul":           b("mul", func(x, y *graph.Node) { graph.Mul(x, y) }),
		"Div":           b("div", func(x, y *graph.Node) { graph.Div(x, y) }),
		"Pow":           b("pow", func(x, y *graph.Node) { graph.Pow(x, y) }),
		"Maximum":       b("maximum", func(x, y *graph.Node) { graph.Maximum(x, y) }),
		"Minimum":       b("minimum", func(x, y *graph.Node) { graph.Minimum(x, y) }),
		"Equal":         b("equal", func(x, y *graph.Node) { graph.Equal(x, y) }),
		"NotEqual":      b("not_equal", func(x, y *graph.Node) { graph.NotEqual(x, y) }),
		"Less":          b("less", func(x, y *graph.Node) { graph.Less(x, y) }),
		"LessEqual":     b("less_equal", func(x, y *graph.Node) { graph.LessEqual(x, y) }),
		"Greater":       b("greater", func(x, y *graph.Node) { graph.Greater(x, y) }),
		"GreaterEqual":  b("greater_equal", func(x, y *graph.Node) { graph.GreaterEqual(x, y) }),
		"ReluGrad":      b("relu_grad", func(x, y *graph.Node) { graph.ReluGrad(x, y) }),
		"SigmoidGrad":   b("sigmoid_grad", func(x, y *graph.Node) { graph.SigmoidGrad(x, y) }),
		"TanhGrad":      b("tanh_grad", func(x, y *graph.Node) { graph.TanhGrad(x, y) }),
		"GeluGrad":      b("gelu_grad", func(x, y *graph.Node) { graph.GeluGrad(x, y) }),
		"LeakyReluGrad": b("leaky_relu_grad", func(x, y *graph.Node) { graph.LeakyReluGrad(x, y, 0.2) }),
		"Where":         {"where", 3, func(_ *graph.Graph, ns []*graph.Node) { graph.Where(ns[0], ns[1], ns[2]) }},
		"Exp":           u("exp", func(x *graph.Node) { graph.Exp(x) }),
		"Neg":           u("neg", func(x *graph.Node) { graph.Neg(x) }),
		"AddScalar":     u("add_scalar", func(x *graph.Node) { graph.AddScalar(x, 1) }),
		"MulScalar":     u("mul_scalar", func(x *graph.Node) { graph.MulScalar(x, 2) }),
		"PowScalar":     u("pow_scalar", func(x *graph.Node) { graph.PowScalar(x, 2) }),
		"Log":           u("log", func(x *graph.Node) { graph.Log(x) }),
		"Log1p":         u("log1p", func(x *graph.Node) { graph.Log1p(x) }),
		"Expm1":         u("expm1", func(x *graph.Node) { graph.Expm1(x) }),
		"Sqrt":          u("sqrt", func(x *graph.Node) { graph.Sqrt(x) }),
		"Square":        u("square", func(x *graph.Node) { graph.Square(x) }),
		"Reciprocal":    u("reciprocal", func(x *graph.Node) { graph.Reciprocal(x) }),
		"Abs":           u("abs", func(x *graph.Node) { graph.Abs(x) }),
		"Sign":          u("sign", func(x *graph.Node) { graph.Sign(x) }),
		"Sin":           u("sin", func(x *graph.Node) { graph.Sin(x) }),
		"Cos":           u("cos", func(x *graph.Node) { graph.Cos(x) }),
		"Tanh":          u("tanh", func(x *graph.Node) { graph.Tanh(x) }),
		"Sigmoid":       u("sigmoid", func(x *graph.Node) { graph.Sigmoid(x) }),
		"Softplus":      u("softplus", func(x *graph.Node) { graph.Softplus(x) }),
		"Relu":          u("relu", func(x *graph.Node) { graph.Relu(x) }),
		"Gelu":          u("gelu", func(x *graph.Node) { graph.Gelu(x) }),
		"Erf":           u("erf", func(x *graph.Node) { graph.Erf(x) }),
		"Lgamma":        u("lgamma", func(x *graph.Node) { graph.Lgamma(x) }),
		"Digamma":       u("digamma", func(x *graph.Node) { graph.Digamma(x) }),
		"Polygamma":     u("polygamma", func(x *graph.Node) { graph.Polygamma(1, x) }),
		"LeakyRelu":     u("leaky_relu", func(x *graph.Node) { graph.LeakyRelu(x, 0.1) }),
		"Elu":           u("elu", func(x *graph.Node) { graph.Elu(x, 1) }),
		"Clamp":         u("clamp", func(x *graph.Node) { graph.Clamp(x, -1, 1) }),
		"StopGradient":  u("stop_gradient", func(x *graph.Node) { graph.StopGradient(x) }),
		"Cast":          u("cast", func(x *graph.Node) { graph.Cast(x, tensor.Float64) }),
		"Reshape":       u("reshape", func(x *graph.Node) { graph.Reshape(x, 2, 16) }),
		"Squeeze":       u("squeeze", func(x *graph.Node) { graph.Squeeze(x) }),
		"Unsqueeze":     u("unsqueeze", func(x *graph.Node) { graph.Unsqueeze(x, 0) }),
		"Permute":       u("permute", func(x *graph.Node) { graph.Permute(x, 3, 2, 1, 0) }),
		"Transpose":     u("transpose", func(x *graph.Node) { graph.Transpose(x) }),
		"BroadcastTo":   u("broadcast_to", func(x *graph.Node) { graph.BroadcastTo(x, 3, 1, 2, 4, 4) }),
		"SumTo":         u("sum_to", func(x *graph.Node) { graph.SumTo(x, 4, 4) }),
		"Slice":         u("slice", func(x *graph.Node) { graph.Slice(x, 2, 0, 2, 1) }),
		"ScatterSlice":  u("scatter_slice", func(x *graph.Node) { graph.ScatterSlice(x, []int{1, 2, 8, 4}, 2, 0, 4, 1) }),
		"Concat":        b("concat", func(x, y *graph.Node) { graph.Concat(0, x, y) }),
		"Stack":         b("stack", func(x, y *graph.Node) { graph.Stack(0, x, y) }),
		"Split":         u("split", func(x *graph.Node) { graph.Split(x, 2, 1, 3) }),
		"IndexSelect":   u("index_select", func(x *graph.Node) { graph.IndexSelect(x, 2, []int{0, 0}) }),
		"ScatterAdd":    u("scatter_add", func(x *graph.Node) { graph.ScatterAdd(x, 2, []int{0, 1, 2, 3}, 5) }),
		"Pad":           u("pad", func(x *graph.Node) { graph.Pad(x, [][2]int{{0, 0}, {0, 0}, {1, 1}, {1, 1}}, 0) }),
		"Sum":           u("sum", func(x *graph.Node) { graph.Sum(x, nil, false) }),
		"Mean":          u("mean", func(x *graph.Node) { graph.Mean(x, nil, false) }),
		"Max":           u("max", func(x *graph.Node) { graph.Max(x, nil, false) }),
		"Min":           u("min", func(x *graph.Node) { graph.Min(x, nil, false) }),
		"Prod":          u("prod", func(x *graph.Node) { graph.Prod(x, nil, false) }),
		"LogSumExp":     u("logsumexp", func(x *graph.Node) { graph.LogSumExp(x, nil, false) }),
		"Variance":      u("variance", func(x *graph.Node) { graph.Variance(x, nil, false, 0) }),
		"Softmax":       u("softmax", func(x *graph.Node) { graph.Softmax(x, -1) }),
		"SoftmaxGrad":   b("softmax_grad", func(x, y *graph.Node) { graph.SoftmaxGrad(x, y, -1) }),
		"LogSoftmax":    u("log_softmax", func(x *graph.Node) { graph.LogSoftmax(x, -1) }),
		"Linear":        {"linear", 3, func(_ *graph.Graph, ns []*graph.Node) { graph.Linear(ns[0], ns[1], ns[2]) }},
		// ChannelAffine's shift may be nil (no shift, op channel_scale).
		"ChannelAffine":  b("channel_scale", func(x, y *graph.Node) { graph.ChannelAffine(x, y, nil) }),
		"ChannelDot":     b("channel_dot", func(x, y *graph.Node) { graph.ChannelDot(x, y) }),
		"ChannelMoments": u("channel_moments", func(x *graph.Node) { graph.ChannelMoments(x) }),
		"MatMul":         b("matmul", func(x, y *graph.Node) { graph.MatMul(x, y) }),
		"MatMulT":        b("matmul", func(x, y *graph.Node) { graph.MatMulT(x, y, true, false) }),
		"Dot":            b("dot", func(x, y *graph.Node) { graph.Dot(x, y) }),
		"Outer":          b("outer", func(x, y *graph.Node) { graph.Outer(x, y) }),
		"Tril":           u("Tril", func(x *graph.Node) { graph.Tril(x) }),
		"Triu":           u("Triu", func(x *graph.Node) { graph.Triu(x) }),
		"PhiLower":       u("PhiLower", func(x *graph.Node) { graph.PhiLower(x) }),
		"Cholesky":       u("cholesky", func(x *graph.Node) { graph.Cholesky(x) }),
		"LogDetChol":     u("LogDetChol", func(x *graph.Node) { graph.LogDetChol(x) }),
		"Inverse":        u("inverse", func(x *graph.Node) { graph.Inverse(x) }),
		"LogAbsDet":      u("log_abs_det", func(x *graph.Node) { graph.LogAbsDet(x) }),
		"Det":            u("det", func(x *graph.Node) { graph.Det(x) }),
		"Eigh":           u("eigh", func(x *graph.Node) { graph.Eigh(x) }),
		"Solve":          b("solve", func(x, y *graph.Node) { graph.Solve(x, y) }),
		"TriSolve":       b("trisolve", func(x, y *graph.Node) { graph.TriSolve(x, y, true, false) }),
		"CholeskySolve":  b("cholesky_solve", func(x, y *graph.Node) { graph.CholeskySolve(x, y) }),
		"CholeskyGrad":   b("cholesky_grad", func(x, y *graph.Node) { graph.CholeskyGrad(x, y) }),
		"SqDist":         b("sq_dist", func(x, y *graph.Node) { graph.SqDist(x, y) }),
		"AddDiag":        b("add_diag", func(x, y *graph.Node) { graph.AddDiag(x, y) }),
		"Diagonal":       u("diagonal", func(x *graph.Node) { graph.Diagonal(x) }),
		"Conv2D":         b("conv2d", func(x, y *graph.Node) { graph.Conv2D(x, y, tensor.ConvParams{}) }),
		"Conv2DInputGrad": b("conv2d_input_grad", func(x, y *graph.Node) {
			graph.Conv2DInputGrad(x, y, xs, tensor.ConvParams{})
		}),
		"Conv2DWeightGrad": b("conv2d_weight_grad", func(x, y *graph.Node) {
			graph.Conv2DWeightGrad(x, y, xs, tensor.ConvParams{})
		}),
		"MaxPool2D":       u("maxpool2d", func(x *graph.Node) { graph.MaxPool2D(x, ctorPool) }),
		"MaxPool2DGrad":   u("maxpool2d_grad", func(x *graph.Node) { graph.MaxPool2DGrad(x, make([]int, 32), xs) }),
		"MaxPool2DGather": u("maxpool2d_gather", func(x *graph.Node) { graph.MaxPool2DGather(x, make([]int, 8), []int{1, 2, 2, 2}) }),
		"AvgPool2D":       u("avgpool2d", func(x *graph.Node) { graph.AvgPool2D(x, ctorPool) }),
		"AvgPool2DGrad":   u("avgpool2d_grad", func(x *graph.Node) { graph.AvgPool2DGrad(x, xs, ctorPool) }),
		"Apply":           u("sin", func(x *graph.Node) { graph.Apply(graph.Sin(graph.New().Var(tensor.Ones(tensor.Float64, 1))).Op(), x) }),
	}
}

func TestConstructorsRejectNil(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for name, c := range constructors() {
			for pos := range c.arity {
				t.Run(fmt.Sprintf("%v/%s/nil%d", dt, name, pos), func(t *testing.T) {
					g := graph.New()
					ns := make([]*graph.Node, c.arity)
					for i := range ns {
						if i != pos {
							ns[i] = g.Var(tensor.Ones(dt, 1, 2, 4, 4))
						}
					}
					e := graphError(t, func() { c.call(g, ns) })
					assert.Equal(t, c.op, e.Op)
					assert.Contains(t, e.Msg, "nil")
					assert.Contains(t, e.Msg, fmt.Sprintf("operand %d", pos))
				})
			}
		}
	}
}

// A node from before Reset and a node from another graph are named too.
func TestConstructorsRejectStaleAndForeign(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for name, c := range constructors() {
			t.Run(fmt.Sprintf("%v/%s/stale", dt, name), func(t *testing.T) {
				g := graph.New()
				ns := make([]*graph.Node, c.arity)
				for i := range ns {
					ns[i] = g.Var(tensor.Ones(dt, 1, 2, 4, 4))
				}
				g.Reset()
				e := graphError(t, func() { c.call(g, ns) })
				assert.Equal(t, c.op, e.Op)
				assert.Contains(t, e.Msg, "Reset")
			})
			if c.arity < 2 {
				continue
			}
			t.Run(fmt.Sprintf("%v/%s/foreign", dt, name), func(t *testing.T) {
				g, h := graph.New(), graph.New()
				ns := make([]*graph.Node, c.arity)
				for i := range ns {
					ns[i] = g.Var(tensor.Ones(dt, 1, 2, 4, 4))
				}
				ns[c.arity-1] = h.Var(tensor.Ones(dt, 1, 2, 4, 4))
				e := graphError(t, func() { c.call(g, ns) })
				assert.Equal(t, c.op, e.Op)
				assert.Contains(t, e.Msg, "different graphs")
				assert.Contains(t, e.Msg, "(1, 2, 4, 4) "+dt.String())
			})
		}
	}
}

func TestOneHotNilGraph(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		e := graphError(t, func() { graph.OneHot(nil, dt, []int{0}, 2) })
		assert.Equal(t, "OneHot", e.Op)
		assert.Contains(t, e.Msg, "nil graph")
	}
}
