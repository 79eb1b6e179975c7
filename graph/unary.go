package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// This file holds the elementwise unary ops, Where and the comparisons.
// Most unary ops are values of unaryOp: a tensor kernel plus a rule lin
// giving v·f'(x) for a tangent or cotangent v. An elementwise derivative
// is diagonal, so the same rule serves as VJP and JVP. The activations
// (tanh, sigmoid, softplus, relu, gelu, leaky relu, elu) and their fused
// derivative ops are in activation.go.

// unaryOp is an elementwise op y = f(x) with derivative rule lin.
type unaryOp struct {
	name string
	fwd  func(dst, a *tensor.Tensor) *tensor.Tensor
	// lin returns v·f'(x) given the input x, the output y and v (x's
	// shape); nil means f' is zero almost everywhere.
	lin func(x, y, v *Node) *Node
}

func (o *unaryOp) Name() string { return o.name }

func (*unaryOp) Arity() int { return 1 }

func (o *unaryOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return o.fwd(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
}

func (o *unaryOp) VJP(out, ct *Node, needs []bool) []*Node {
	if o.lin == nil {
		return cotangents(out, nil)
	}
	return cotangents(out, o.lin(out.inputs[0], out, ct))
}

func (o *unaryOp) JVP(out *Node, t []*Node) *Node {
	if o.lin == nil || t[0] == nil {
		return nil
	}
	return o.lin(out.inputs[0], out, t[0])
}

// Elementwise ops batch by broadcasting (BatchElementwise).
func (o *unaryOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// The ops are assigned in init because several rules refer to each other
// (sin ↔ cos), which package-level initializers may not.
var (
	logOp, log1pOp, expm1Op, sqrtOp, squareOp, reciprocalOp, absOp, signOp *unaryOp
	sinOp, cosOp, erfOp                                                    *unaryOp
	lgammaOp, digammaOp                                                    *unaryOp
)

func init() {
	const twoSqrtPi = 1.1283791670955126 // 2/√π
	logOp = &unaryOp{"log", kern.Log, func(x, y, v *Node) *Node { return Div(v, x) }}
	log1pOp = &unaryOp{"log1p", kern.Log1p, func(x, y, v *Node) *Node { return Div(v, AddScalar(x, 1)) }}
	expm1Op = &unaryOp{"expm1", kern.Expm1, func(x, y, v *Node) *Node { return Mul(v, AddScalar(y, 1)) }}
	sqrtOp = &unaryOp{"sqrt", kern.Sqrt, func(x, y, v *Node) *Node { return Div(MulScalar(v, 0.5), y) }}
	squareOp = &unaryOp{"square", kern.Square, func(x, y, v *Node) *Node { return Mul(v, MulScalar(x, 2)) }}
	reciprocalOp = &unaryOp{"reciprocal", kern.Reciprocal, func(x, y, v *Node) *Node { return Neg(Mul(v, Square(y))) }}
	absOp = &unaryOp{"abs", kern.Abs, func(x, y, v *Node) *Node { return Mul(v, Sign(x)) }}
	signOp = &unaryOp{"sign", kern.Sign, nil}
	sinOp = &unaryOp{"sin", kern.Sin, func(x, y, v *Node) *Node { return Mul(v, Cos(x)) }}
	cosOp = &unaryOp{"cos", kern.Cos, func(x, y, v *Node) *Node { return Neg(Mul(v, Sin(x))) }}
	erfOp = &unaryOp{"erf", kern.Erf, func(x, y, v *Node) *Node {
		return Mul(v, MulScalar(Exp(Neg(Square(x))), twoSqrtPi))
	}}
	lgammaOp = &unaryOp{"lgamma", kern.Lgamma, func(x, y, v *Node) *Node { return Mul(v, Digamma(x)) }}
	digammaOp = &unaryOp{"digamma", kern.Digamma, func(x, y, v *Node) *Node { return Mul(v, Polygamma(1, x)) }}

	for _, op := range []*unaryOp{logOp, log1pOp, expm1Op, sqrtOp, squareOp, reciprocalOp, absOp, signOp,
		sinOp, cosOp, erfOp, lgammaOp, digammaOp} {
		Register(op)
	}
	for _, op := range []Op{clampOp{}, whereOp{}} {
		Register(op)
	}
	for _, op := range compareOps {
		Register(op)
	}
}

// Log returns the natural logarithm elementwise.
func Log(x *Node) *Node { return Apply(logOp, x) }

// Log1p returns log(1 + x), accurate for small x.
func Log1p(x *Node) *Node { return Apply(log1pOp, x) }

// Expm1 returns eˣ − 1, accurate for small x.
func Expm1(x *Node) *Node { return Apply(expm1Op, x) }

// Sqrt returns the square root elementwise.
func Sqrt(x *Node) *Node { return Apply(sqrtOp, x) }

// Square returns x² elementwise.
func Square(x *Node) *Node { return Apply(squareOp, x) }

// Reciprocal returns 1/x elementwise.
func Reciprocal(x *Node) *Node { return Apply(reciprocalOp, x) }

// Abs returns |x|; its derivative at 0 is taken as 0.
func Abs(x *Node) *Node { return Apply(absOp, x) }

// Sign returns −1, 0 or 1 elementwise. Its derivative is zero.
func Sign(x *Node) *Node { return Apply(signOp, x) }

// Sin returns sin x elementwise.
func Sin(x *Node) *Node { return Apply(sinOp, x) }

// Cos returns cos x elementwise.
func Cos(x *Node) *Node { return Apply(cosOp, x) }

// Erf returns the error function elementwise.
func Erf(x *Node) *Node { return Apply(erfOp, x) }

// Lgamma returns log|Γ(x)| elementwise.
func Lgamma(x *Node) *Node { return Apply(lgammaOp, x) }

// Digamma returns ψ(x) = d/dx log Γ(x) elementwise.
func Digamma(x *Node) *Node { return Apply(digammaOp, x) }

type clampOp struct{ lo, hi float64 }

func (clampOp) Name() string { return "clamp" }

func (clampOp) Arity() int { return 1 }

func (o clampOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Clamp(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], o.lo, o.hi)
}

func (o clampOp) check(in []*Node) { checkClamp(in[0], o.lo, o.hi) }

func checkClamp(x *Node, lo, hi float64) {
	if lo > hi {
		tensor.Fail("clamp", "lower bound %g exceeds upper bound %g (operand %s)", lo, hi, Describe(x))
	}
}

// The derivative is 1 where the value passed through unchanged.
func (clampOp) lin(out, v *Node) *Node { return Mul(v, Equal(out, out.inputs[0])) }

func (o clampOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{o.lin(out, ct)} }

func (o clampOp) JVP(out *Node, t []*Node) *Node { return o.lin(out, t[0]) }

func (o clampOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Clamp limits x to [lo, hi] (either may be infinite). The derivative is 1
// inside the interval and 0 where x was clipped. It panics if lo > hi.
func Clamp(x *Node, lo, hi float64) *Node {
	checkNodes("clamp", x)
	checkClamp(x, lo, hi)
	return apply(clampOp{lo, hi}, x)
}

type whereOp struct{}

func (whereOp) Name() string { return "where" }

func (whereOp) Arity() int { return 3 }

func (whereOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	c, a, b := in[0], in[1], in[2]
	shape := c.Shape()
	if !slices.Equal(shape, a.Shape()) || !slices.Equal(shape, b.Shape()) {
		shape = joinShapes(g, joinShapes(g, c.Shape(), a.Shape()), b.Shape())
	}
	return kern.Where(g.AllocUninit(a.DType(), shape...), c, a, b)
}

func (whereOp) check(in []*Node) { checkWhere(in[0], in[1], in[2]) }

func checkWhere(cond, a, b *Node) {
	if cond.DType() != a.DType() || a.DType() != b.DType() {
		tensor.Fail("where", "mixed dtypes: %s", Describe(cond, a, b))
	}
	tensor.BroadcastShapes("where", cond.Shape(), a.Shape(), b.Shape())
}

func (whereOp) VJP(out, ct *Node, needs []bool) []*Node {
	c, a, b := out.inputs[0], out.inputs[1], out.inputs[2]
	zero := constLike(ct, 0)
	return cotangents(out, nil, SumTo(Where(c, ct, zero), a.Shape()...), SumTo(Where(c, zero, ct), b.Shape()...))
}

func (whereOp) JVP(out *Node, t []*Node) *Node {
	ta, tb := t[1], t[2]
	if ta == nil && tb == nil {
		return nil
	}
	if ta == nil {
		ta = constLike(out, 0)
	}
	if tb == nil {
		tb = constLike(out, 0)
	}
	return BroadcastTo(Where(out.inputs[0], ta, tb), out.Shape()...)
}

func (o whereOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Where returns a where cond ≠ 0 and b elsewhere; the three broadcast
// together. cond receives no gradient.
func Where(cond, a, b *Node) *Node {
	checkNodes("where", cond, a, b)
	checkWhere(cond, a, b)
	return apply(whereOp{}, cond, a, b)
}

// compareOp is an elementwise comparison giving 0 or 1 in the operands'
// dtype. It is piecewise constant, so both derivative rules are zero.
type compareOp struct {
	name string
	fwd  func(dst, a, b *tensor.Tensor) *tensor.Tensor
}

var compareOps = []*compareOp{
	{"equal", kern.Equal}, {"not_equal", kern.NotEqual},
	{"less", kern.Less}, {"less_equal", kern.LessEqual},
	{"greater", kern.Greater}, {"greater_equal", kern.GreaterEqual},
}

func (o *compareOp) Name() string { return o.name }

func (*compareOp) Arity() int { return 2 }

func (o *compareOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return o.fwd(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (*compareOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{nil, nil} }

func (*compareOp) JVP(out *Node, t []*Node) *Node { return nil }

func (o *compareOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

func (o *compareOp) check(in []*Node) { checkBroadcast(o.name, in[0], in[1]) }

func compare(op *compareOp, a, b *Node) *Node {
	checkBinary(op.name, a, b)
	return apply(op, a, b)
}

// Equal returns 1 where a = b and 0 elsewhere (broadcasting). It has zero
// derivative, as have the other comparisons.
func Equal(a, b *Node) *Node { return compare(compareOps[0], a, b) }

// NotEqual returns 1 where a ≠ b and 0 elsewhere.
func NotEqual(a, b *Node) *Node { return compare(compareOps[1], a, b) }

// Less returns 1 where a < b and 0 elsewhere.
func Less(a, b *Node) *Node { return compare(compareOps[2], a, b) }

// LessEqual returns 1 where a ≤ b and 0 elsewhere.
func LessEqual(a, b *Node) *Node { return compare(compareOps[3], a, b) }

// Greater returns 1 where a > b and 0 elsewhere.
func Greater(a, b *Node) *Node { return compare(compareOps[4], a, b) }

// GreaterEqual returns 1 where a ≥ b and 0 elsewhere.
func GreaterEqual(a, b *Node) *Node { return compare(compareOps[5], a, b) }
