package onnx

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// unary maps an operator with one float input onto a graph op.
func unary(f func(x *graph.Node) *graph.Node) *opSpec {
	return &opSpec{minIn: 1, maxIn: 1, run: func(c *call, n *node, in []value) []value {
		return []value{{n: f(c.node(in[0]))}}
	}}
}

// withAlpha is unary for activations with an alpha attribute.
func withAlpha(def float64, f func(x *graph.Node, alpha float64) *graph.Node) *opSpec {
	return &opSpec{minIn: 1, maxIn: 1, attrs: "alpha", run: func(c *call, n *node, in []value) []value {
		return []value{{n: f(c.node(in[0]), n.float("alpha", def))}}
	}}
}

// arith maps a broadcasting binary operator: float inputs through the
// graph op, integer inputs on the host (integer division truncates).
func arith(f func(a, b *graph.Node) *graph.Node, h func(a, b *tensor.Tensor) *tensor.Tensor, trunc bool) *opSpec {
	return &opSpec{minIn: 2, maxIn: 2, run: func(c *call, n *node, in []value) []value {
		if in[0].h != nil && in[1].h != nil {
			r := h(in[0].h, in[1].h)
			if trunc {
				r = tensor.FromFloat64s(mapValues(r, math.Trunc), r.Shape()...)
			}
			return []value{hostValue(r, false)}
		}
		return []value{{n: f(c.node(in[0]), c.node(in[1]))}}
	}}
}

// compare maps a comparison: its boolean result is computed on the host
// from the inputs' values (comparisons have no gradient).
func compare(h func(a, b *tensor.Tensor) *tensor.Tensor) *opSpec {
	return &opSpec{minIn: 2, maxIn: 2, run: func(c *call, n *node, in []value) []value {
		return []value{hostValue(h(host(in[0]), host(in[1])), true)}
	}}
}

// logic maps And, Or and Xor on booleans.
func logic(f func(a, b bool) bool) *opSpec {
	return &opSpec{minIn: 2, maxIn: 2, run: func(c *call, n *node, in []value) []value {
		a, b := host(in[0]), host(in[1])
		shape := tensor.BroadcastShapes(n.op, a.Shape(), b.Shape())
		av, bv := tensor.Expand(a, shape...).Values(), tensor.Expand(b, shape...).Values()
		out := make([]float64, len(av))
		for i := range av {
			if f(av[i] != 0, bv[i] != 0) {
				out[i] = 1
			}
		}
		return []value{hostValue(tensor.FromFloat64s(out, shape...), true)}
	}}
}

// mapValues applies f to every value of t.
func mapValues(t *tensor.Tensor, f func(float64) float64) []float64 {
	v := t.Values()
	for i := range v {
		v[i] = f(v[i])
	}
	return v
}

// variadic maps Max, Min and Sum over any number of broadcasting inputs.
func variadic(f func(a, b *graph.Node) *graph.Node) *opSpec {
	return &opSpec{minIn: 1, maxIn: -1, run: func(c *call, n *node, in []value) []value {
		y := c.node(in[0])
		for _, v := range in[1:] {
			y = f(y, c.node(v))
		}
		return []value{{n: y}}
	}}
}

// runPow maps Pow; a constant scalar exponent becomes PowScalar, whose
// gradient is finite where the base is zero.
func runPow(c *call, n *node, in []value) []value {
	x, e := c.node(in[0]), in[1]
	if e.h != nil && e.h.Size() == 1 {
		return []value{{n: graph.PowScalar(x, e.h.Values()[0])}}
	}
	if e.n.IsConst() && e.n.Size() == 1 {
		return []value{{n: graph.PowScalar(x, e.n.Value().Values()[0])}}
	}
	return []value{{n: graph.Pow(x, c.node(e))}}
}

// runWhere maps Where; the condition is host data, the branches float
// nodes (or host integers, chosen on the host).
func runWhere(c *call, n *node, in []value) []value {
	cond := host(in[0])
	if in[1].h != nil && in[2].h != nil {
		return []value{hostValue(tensor.Where(cond, in[1].h, in[2].h), in[1].boolean)}
	}
	return []value{{n: graph.Where(c.g.Const(cond.Cast(c.dt)), c.node(in[1]), c.node(in[2]))}}
}

// runNot maps Not on booleans.
func runNot(c *call, n *node, in []value) []value {
	t := host(in[0])
	return []value{hostValue(tensor.FromFloat64s(mapValues(t, func(v float64) float64 {
		if v == 0 {
			return 1
		}
		return 0
	}), t.Shape()...), true)}
}

// checkCast accepts casts to the element types Gradus reads.
func checkCast(n *node) error {
	if _, ok := elemTypes[int32(n.int("to", 0))]; !ok {
		return fmt.Errorf("attribute to = %s is not imported", ElemTypeName(int32(n.int("to", 0))))
	}
	return nil
}

// runCast maps Cast: between floats through graph.Cast, to integers and
// booleans on the host (truncating, as C casts do), and from them to a
// float constant.
func runCast(c *call, n *node, in []value) []value {
	to := int32(n.int("to", 0))
	x := in[0]
	if isFloat(to) {
		dt := floatDType(to)
		if x.n == nil {
			return []value{{n: c.g.Const(x.h.Cast(dt))}}
		}
		if x.n.DType() == dt {
			return []value{x}
		}
		return []value{{n: graph.Cast(x.n, dt)}}
	}
	t := host(x)
	if to == tBool {
		return []value{hostValue(tensor.FromFloat64s(mapValues(t, func(v float64) float64 {
			if v != 0 {
				return 1
			}
			return 0
		}), t.Shape()...), true)}
	}
	return []value{hostValue(tensor.FromFloat64s(mapValues(t, math.Trunc), t.Shape()...), false)}
}

// runClip maps Clip with optional min and max inputs.
func runClip(c *call, n *node, in []value) []value {
	lo, hi := math.Inf(-1), math.Inf(1)
	if len(in) > 1 && (in[1].n != nil || in[1].h != nil) {
		lo = host(in[1]).Values()[0]
	}
	if len(in) > 2 && (in[2].n != nil || in[2].h != nil) {
		hi = host(in[2]).Values()[0]
	}
	if in[0].h != nil {
		return []value{hostValue(tensor.Clamp(in[0].h, lo, hi), false)}
	}
	return []value{{n: graph.Clamp(in[0].n, lo, hi)}}
}

// runHardSigmoid maps HardSigmoid: max(0, min(1, αx + β)).
func runHardSigmoid(c *call, n *node, in []value) []value {
	x := graph.AddScalar(graph.MulScalar(c.node(in[0]), n.float("alpha", 0.2)), n.float("beta", 0.5))
	return []value{{n: graph.Clamp(x, 0, 1)}}
}

// runHardSwish maps HardSwish: x·HardSigmoid(x) with α = 1/6, β = ½.
func runHardSwish(c *call, n *node, in []value) []value {
	x := c.node(in[0])
	return []value{{n: graph.Mul(x, graph.Clamp(graph.AddScalar(graph.MulScalar(x, 1.0/6), 0.5), 0, 1))}}
}

// runPRelu maps PRelu: x where x ≥ 0, slope·x elsewhere, with a
// broadcasting slope tensor.
func runPRelu(c *call, n *node, in []value) []value {
	x, s := c.node(in[0]), c.node(in[1])
	return []value{{n: graph.Sub(graph.Relu(x), graph.Mul(s, graph.Relu(graph.Neg(x))))}}
}

// identity maps Identity.
func identity(c *call, n *node, in []value) []value { return []value{in[0]} }

// runDropout maps Dropout in inference form: the identity, with an
// all-true mask as its optional second output.
func runDropout(c *call, n *node, in []value) []value {
	if len(in) > 2 && in[2].h != nil && in[2].h.Values()[0] != 0 {
		fail("training_mode true is not imported: an imported model runs dropout as the identity")
	}
	return []value{in[0], hostValue(tensor.Ones(tensor.Float64, in[0].shape()...), true)}
}
