package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradient-check cases for the elementwise ops (graph/arith.go,
// graph/unary.go, graph/special.go, graph/stop.go). Inputs are sampled
// where the op is smooth: positive for log/sqrt/lgamma, away from 0 for
// kinks (abs, relu) and poles, with gaps between operands of max/min and
// the comparisons so finite differences never cross a switch.

const ewF64 = tensor.Float64

// ewUniform samples one tensor per shape from U(lo, hi).
func ewUniform(lo, hi float64, shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			out[i] = rng.Uniform(ewF64, lo, hi, s...)
		}
		return out
	}
}

// ewNormal samples one tensor per shape from N(0, std²).
func ewNormal(std float64, shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			out[i] = rng.Normal(ewF64, 0, std, s...)
		}
		return out
	}
}

// ewAway samples values with lo ≤ |x| ≤ hi and a random sign.
func ewAway(rng *tensor.RNG, lo, hi float64, shape ...int) *tensor.Tensor {
	mag := rng.Uniform(ewF64, lo, hi, shape...)
	sign := tensor.AddScalar(tensor.MulScalar(rng.Bernoulli(ewF64, 0.5, shape...), 2), -1)
	return tensor.Mul(mag, sign)
}

// ewAwayInputs is ewAway for several shapes.
func ewAwayInputs(lo, hi float64, shapes ...[]int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		out := make([]*tensor.Tensor, len(shapes))
		for i, s := range shapes {
			out[i] = ewAway(rng, lo, hi, s...)
		}
		return out
	}
}

// ewGap samples a of shapeA and b of shapeB with |a − b| ≥ 0.2 after
// broadcasting, so comparisons and max/min are locally constant.
func ewGap(shapeA, shapeB []int) func(*tensor.RNG) []*tensor.Tensor {
	return func(rng *tensor.RNG) []*tensor.Tensor {
		b := rng.Uniform(ewF64, -1, 1, shapeB...)
		shape := tensor.BroadcastShapes("ewGap", shapeA, shapeB)
		a := tensor.Add(b, ewAway(rng, 0.2, 1, shape...))
		if len(shapeA) < len(shape) || !ewEqualShape(shapeA, shape) {
			panic("ewGap: a must have the broadcast shape")
		}
		return []*tensor.Tensor{a, b}
	}
}

func ewEqualShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ewUnary(op func(*graph.Node) *graph.Node) func(xs []*graph.Node) *graph.Node {
	return func(xs []*graph.Node) *graph.Node { return op(xs[0]) }
}

func ewBinary(op func(a, b *graph.Node) *graph.Node) func(xs []*graph.Node) *graph.Node {
	return func(xs []*graph.Node) *graph.Node { return op(xs[0], xs[1]) }
}

func ewTernary(op func(a, b, c *graph.Node) *graph.Node) func(xs []*graph.Node) *graph.Node {
	return func(xs []*graph.Node) *graph.Node { return op(xs[0], xs[1], xs[2]) }
}

var (
	ewS34  = []int{3, 4}
	ewS4   = []int{4}
	ewS31  = []int{3, 1}
	ewS234 = []int{2, 3, 4}
	ewS14  = []int{1, 4}
	ewS0   = []int{}
)

func init() {
	// Binary arithmetic, with and without broadcasting.
	for _, b := range []struct {
		name string
		op   func(a, b *graph.Node) *graph.Node
	}{{"add", graph.Add}, {"sub", graph.Sub}, {"mul", graph.Mul}} {
		addCase(b.name, opCase{name: "same shape", inputs: ewNormal(1, ewS34, ewS34), f: ewBinary(b.op)})
		addCase(b.name, opCase{name: "broadcast (2,3,4) and (4,)", inputs: ewNormal(1, ewS234, ewS4), f: ewBinary(b.op)})
		addCase(b.name, opCase{name: "broadcast (3,1) and (1,4)", inputs: ewNormal(1, ewS31, ewS14), f: ewBinary(b.op)})
		addCase(b.name, opCase{name: "scalar operand", inputs: ewNormal(1, ewS0, ewS34), f: ewBinary(b.op)})
	}
	addCase("div", opCase{name: "same shape", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{rng.Normal(ewF64, 0, 1, 3, 4), ewAway(rng, 0.5, 2, 3, 4)}
	}, f: ewBinary(graph.Div)})
	addCase("div", opCase{name: "broadcast (3,1) and (4,)", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{rng.Normal(ewF64, 0, 1, 3, 1), ewAway(rng, 0.5, 2, 4)}
	}, f: ewBinary(graph.Div)})
	addCase("xlogy", opCase{name: "broadcast y", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{ewAway(rng, 0.2, 2, 3, 4), rng.Uniform(ewF64, 0.3, 3, 4)}
	}, f: ewBinary(graph.Xlogy)})
	addCase("pow", opCase{name: "positive base", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{rng.Uniform(ewF64, 0.5, 2, 3, 4), rng.Uniform(ewF64, -1.5, 2.5, 3, 4)}
	}, f: ewBinary(graph.Pow)})
	addCase("pow", opCase{name: "broadcast exponent", inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		return []*tensor.Tensor{rng.Uniform(ewF64, 0.5, 2, 3, 4), rng.Uniform(ewF64, -1.5, 2.5, 4)}
	}, f: ewBinary(graph.Pow)})
	addCase("pow", opCase{name: "constant exponent", inputs: ewUniform(0.5, 2, ewS34), f: func(xs []*graph.Node) *graph.Node {
		return graph.Pow(xs[0], xs[0].Graph().Const(tensor.Scalar(xs[0].DType(), 3)))
	}})
	for _, b := range []struct {
		name string
		op   func(a, b *graph.Node) *graph.Node
	}{{"maximum", graph.Maximum}, {"minimum", graph.Minimum}} {
		addCase(b.name, opCase{name: "same shape", inputs: ewGap(ewS34, ewS34), f: ewBinary(b.op)})
		addCase(b.name, opCase{name: "broadcast", inputs: ewGap(ewS34, ewS4), f: ewBinary(b.op)})
	}
	addCase("neg", opCase{inputs: ewNormal(1, ewS34), f: ewUnary(graph.Neg)})
	addCase("add_scalar", opCase{inputs: ewNormal(1, ewS34), f: func(xs []*graph.Node) *graph.Node { return graph.AddScalar(xs[0], 1.5) }})
	addCase("mul_scalar", opCase{inputs: ewNormal(1, ewS34), f: func(xs []*graph.Node) *graph.Node { return graph.MulScalar(xs[0], -2.5) }})
	for _, p := range []float64{2, 3, -0.5, 2.5} {
		addCase("pow_scalar", opCase{name: fmt.Sprint("p=", p), inputs: ewUniform(0.3, 2, ewS34), f: func(xs []*graph.Node) *graph.Node { return graph.PowScalar(xs[0], p) }})
	}

	// Unary maths.
	for _, u := range []struct {
		name   string
		op     func(*graph.Node) *graph.Node
		inputs func(*tensor.RNG) []*tensor.Tensor
	}{
		{"exp", graph.Exp, ewUniform(-2, 2, ewS34)},
		{"log", graph.Log, ewUniform(0.3, 3, ewS34)},
		{"log1p", graph.Log1p, ewUniform(-0.5, 2, ewS34)},
		{"expm1", graph.Expm1, ewUniform(-2, 2, ewS34)},
		{"sqrt", graph.Sqrt, ewUniform(0.3, 3, ewS34)},
		{"square", graph.Square, ewNormal(1, ewS34)},
		{"reciprocal", graph.Reciprocal, ewAwayInputs(0.4, 2, ewS34)},
		{"abs", graph.Abs, ewAwayInputs(0.1, 2, ewS34)},
		{"sign", graph.Sign, ewAwayInputs(0.1, 2, ewS34)},
		{"sin", graph.Sin, ewNormal(1.5, ewS34)},
		{"cos", graph.Cos, ewNormal(1.5, ewS34)},
		{"tanh", graph.Tanh, ewNormal(1.5, ewS34)},
		{"sigmoid", graph.Sigmoid, ewNormal(2, ewS34)},
		{"softplus", graph.Softplus, ewNormal(2, ewS34)},
		{"relu", graph.Relu, ewAwayInputs(0.1, 2, ewS34)},
		{"gelu", graph.Gelu, ewNormal(1.5, ewS34)},
		{"erf", graph.Erf, ewUniform(-2, 2, ewS34)},
		{"lgamma", graph.Lgamma, ewUniform(0.3, 4, ewS34)},
		{"digamma", graph.Digamma, ewUniform(0.3, 4, ewS34)},
	} {
		addCase(u.name, opCase{inputs: u.inputs, f: ewUnary(u.op)})
	}
	addCase("softplus", opCase{name: "large |x|", inputs: ewAwayInputs(15, 30, ewS34), f: ewUnary(graph.Softplus)})
	addCase("polygamma", opCase{name: "trigamma", inputs: ewUniform(0.5, 4, ewS34),
		f: func(xs []*graph.Node) *graph.Node { return graph.Polygamma(1, xs[0]) }})
	addCase("polygamma", opCase{name: "order 3", inputs: ewUniform(0.8, 5, ewS34),
		f: func(xs []*graph.Node) *graph.Node { return graph.Polygamma(3, xs[0]) }})
	addCase("leaky_relu", opCase{inputs: ewAwayInputs(0.1, 2, ewS34),
		f: func(xs []*graph.Node) *graph.Node { return graph.LeakyRelu(xs[0], 0.1) }})
	addCase("elu", opCase{inputs: ewAwayInputs(0.1, 2, ewS34),
		f: func(xs []*graph.Node) *graph.Node { return graph.Elu(xs[0], 1.3) }})
	addCase("clamp", opCase{inputs: func(rng *tensor.RNG) []*tensor.Tensor {
		// |x| in [0.1, 0.4] (inside) or [0.6, 0.9] (clipped): away from ±0.5.
		mag := tensor.Add(rng.Uniform(ewF64, 0.1, 0.4, 3, 4), tensor.MulScalar(rng.Bernoulli(ewF64, 0.5, 3, 4), 0.5))
		sign := tensor.AddScalar(tensor.MulScalar(rng.Bernoulli(ewF64, 0.5, 3, 4), 2), -1)
		return []*tensor.Tensor{tensor.Mul(mag, sign)}
	}, f: func(xs []*graph.Node) *graph.Node { return graph.Clamp(xs[0], -0.5, 0.5) }})

	// Where: the condition is a constant in f's closure.
	cond := tensor.FromValues(ewF64, []float64{1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1}, 3, 4)
	addCase("where", opCase{name: "same shape", inputs: ewNormal(1, ewS34, ewS34), f: func(xs []*graph.Node) *graph.Node {
		return graph.Where(xs[0].Graph().Const(cond.Cast(xs[0].DType())), xs[0], xs[1])
	}})
	addCase("where", opCase{name: "broadcast", inputs: ewNormal(1, ewS4, ewS31), f: func(xs []*graph.Node) *graph.Node {
		return graph.Where(xs[0].Graph().Const(cond.Cast(xs[0].DType())), xs[0], xs[1])
	}})

	// Comparisons have zero derivative; the inputs keep a gap so finite
	// differences agree.
	for _, c := range []struct {
		name string
		op   func(a, b *graph.Node) *graph.Node
	}{{"equal", graph.Equal}, {"not_equal", graph.NotEqual}, {"less", graph.Less},
		{"less_equal", graph.LessEqual}, {"greater", graph.Greater}, {"greater_equal", graph.GreaterEqual}} {
		addCase(c.name, opCase{inputs: ewGap(ewS34, ewS4), f: ewBinary(c.op)})
	}

	// |x| = x·stop(sign x): the stopped factor has zero derivative anyway,
	// so finite differences see the same function as autodiff.
	addCase("stop_gradient", opCase{inputs: ewAwayInputs(0.1, 2, ewS34), f: func(xs []*graph.Node) *graph.Node {
		return graph.Mul(xs[0], graph.StopGradient(graph.Sign(xs[0])))
	}})

	// relu_grad(v, y) = v·sign(y): linear in v, locally constant in y away
	// from 0. The broadcast cases exercise the sum back to v's shape.
	reluGradInputs := func(sv, sy []int) func(*tensor.RNG) []*tensor.Tensor {
		return func(rng *tensor.RNG) []*tensor.Tensor {
			return []*tensor.Tensor{rng.Normal(ewF64, 0, 1, sv...), ewAway(rng, 0.1, 2, sy...)}
		}
	}
	addCase("relu_grad", opCase{name: "same shape", inputs: reluGradInputs(ewS34, ewS34), f: ewBinary(graph.ReluGrad)})
	addCase("relu_grad", opCase{name: "broadcast v", inputs: reluGradInputs(ewS4, ewS34), f: ewBinary(graph.ReluGrad)})
	addCase("relu_grad", opCase{name: "broadcast y", inputs: reluGradInputs(ewS34, ewS31), f: ewBinary(graph.ReluGrad)})

	// The fused sigmoid and tanh derivative rules are smooth in both
	// operands; tanh_grad's y is a tanh output, so in (−1, 1).
	addCase("sigmoid_grad", opCase{name: "same shape", inputs: ewNormal(1.5, ewS34, ewS34), f: ewBinary(graph.SigmoidGrad)})
	addCase("sigmoid_grad", opCase{name: "broadcast", inputs: ewNormal(1.5, ewS4, ewS31), f: ewBinary(graph.SigmoidGrad)})
	addCase("tanh_grad", opCase{name: "same shape", inputs: ewUniform(-0.9, 0.9, ewS34, ewS34), f: ewBinary(graph.TanhGrad)})
	addCase("tanh_grad", opCase{name: "broadcast", inputs: ewUniform(-0.9, 0.9, ewS31, ewS4), f: ewBinary(graph.TanhGrad)})
	addCase("gelu_grad", opCase{name: "same shape", inputs: ewNormal(1.5, ewS34, ewS34), f: ewBinary(graph.GeluGrad)})
	addCase("gelu_grad", opCase{name: "broadcast", inputs: ewNormal(1.5, ewS4, ewS31), f: ewBinary(graph.GeluGrad)})
	// leaky_relu_grad is linear in v and locally constant in x, kept away
	// from the kink at 0.
	leakyGrad := ewBinary(func(v, x *graph.Node) *graph.Node { return graph.LeakyReluGrad(v, x, 0.2) })
	addCase("leaky_relu_grad", opCase{name: "same shape", inputs: reluGradInputs(ewS34, ewS34), f: leakyGrad})
	addCase("leaky_relu_grad", opCase{name: "broadcast v", inputs: reluGradInputs(ewS4, ewS34), f: leakyGrad})
	addCase("leaky_relu_grad", opCase{name: "broadcast x", inputs: reluGradInputs(ewS34, ewS31), f: leakyGrad})
}
