package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// This file shows the pattern every op follows: an unexported op type with
// Forward, VJP and JVP side by side, registered at init, and an exported
// constructor that checks its operands and calls Apply; or, as here, where
// Forward calls kern (tensor's unchecked kernels), calls apply and keeps
// its checks in a check method too (see the package doc, "Validation").

func init() {
	Register(addOp{})
	Register(expOp{})
}

type addOp struct{}

func (addOp) Name() string { return "add" }

func (addOp) Arity() int { return 2 }

func (addOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Add(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (addOp) check(in []*Node) { checkBroadcast("add", in[0], in[1]) }

func (addOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	return cotangents(out, SumTo(ct, a.Shape()...), SumTo(ct, b.Shape()...))
}

func (addOp) JVP(out *Node, t []*Node) *Node {
	return addTangents(out, t[0], t[1])
}

// Elementwise ops batch by broadcasting (BatchElementwise).
func (o addOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Add returns a + b with NumPy broadcasting.
func Add(a, b *Node) *Node {
	checkBinary("add", a, b)
	return apply(addOp{}, a, b)
}

type expOp struct{}

func (expOp) Name() string { return "exp" }

func (expOp) Arity() int { return 1 }

func (expOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Exp(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
}

// d exp(x) = exp(x) dx: both rules reuse the output node.
func (expOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{Mul(ct, out)} }

func (expOp) JVP(out *Node, t []*Node) *Node { return Mul(t[0], out) }

func (o expOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Exp returns eˣ elementwise.
func Exp(x *Node) *Node { return Apply(expOp{}, x) }

// addTangents returns ta + tb broadcast to out's shape, treating nil as a
// symbolic zero.
func addTangents(out, ta, tb *Node) *Node {
	switch {
	case ta == nil && tb == nil:
		return nil
	case tb == nil:
		return BroadcastTo(ta, out.Shape()...)
	case ta == nil:
		return BroadcastTo(tb, out.Shape()...)
	}
	return Add(ta, tb)
}

// bilinearJVP is the JVP of out = f(a, b) for f bilinear in its two inputs:
// d f(a, b) = f(da, b) + f(a, db), skipping an absent tangent.
func bilinearJVP(out *Node, t []*Node, f func(a, b *Node) *Node) *Node {
	a, b := out.inputs[0], out.inputs[1]
	var ta, tb *Node
	if t[0] != nil {
		ta = f(t[0], b)
	}
	if t[1] != nil {
		tb = f(a, t[1])
	}
	return addTangents(out, ta, tb)
}

// checkBinary panics with a *tensor.Error naming op and both operands when
// either is not a valid node, their dtypes differ or their shapes do not
// broadcast.
func checkBinary(op string, a, b *Node) {
	checkNodes(op, a, b)
	checkBroadcast(op, a, b)
}

// checkBroadcast is checkBinary for nodes that checkNodes accepted.
func checkBroadcast(op string, a, b *Node) {
	if a.DType() != b.DType() {
		tensor.Fail(op, "mixed dtypes: %s", Describe(a, b))
	}
	if sa, sb := a.Shape(), b.Shape(); !broadcastsTo(sa, sb) && !broadcastsTo(sb, sa) {
		tensor.BroadcastShapes(op, sa, sb) // panics naming both shapes, or finds a joint shape
	}
}

func init() {
	for _, op := range []Op{subOp{}, mulOp{}, divOp{}, negOp{}, powOp{}, extremumOp{max: true}, extremumOp{},
		addScalarOp{}, mulScalarOp{}, powScalarOp{}} {
		Register(op)
	}
}

type subOp struct{}

func (subOp) Name() string { return "sub" }

func (subOp) Arity() int { return 2 }

func (subOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Sub(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (subOp) check(in []*Node) { checkBroadcast("sub", in[0], in[1]) }

func (subOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	return cotangents(out, SumTo(ct, a.Shape()...), SumTo(Neg(ct), b.Shape()...))
}

func (subOp) JVP(out *Node, t []*Node) *Node {
	switch {
	case t[1] == nil:
		return BroadcastTo(t[0], out.Shape()...)
	case t[0] == nil:
		return BroadcastTo(Neg(t[1]), out.Shape()...)
	}
	return Sub(t[0], t[1])
}

func (o subOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Sub returns a − b with NumPy broadcasting.
func Sub(a, b *Node) *Node {
	checkBinary("sub", a, b)
	return apply(subOp{}, a, b)
}

type mulOp struct{}

func (mulOp) Name() string { return "mul" }

func (mulOp) Arity() int { return 2 }

func (mulOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Mul(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (mulOp) check(in []*Node) { checkBroadcast("mul", in[0], in[1]) }

func (mulOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	var da, db *Node
	if needs[0] {
		da = productSumTo(ct, b, a)
	}
	if needs[1] {
		db = productSumTo(ct, a, b)
	}
	return cotangents(out, da, db)
}

// productSumTo returns SumTo(Mul(ct, x), factor's shape): the cotangent of
// a factor of a product whose other factor is x. A factor that is one
// number broadcast against an x of the product's shape (a scale, such as
// a kernel's variance) gets the inner product of ct and x, which reads the
// two once and writes nothing their size, where the product and its sum
// would write and read one more array of it.
func productSumTo(ct, x, factor *Node) *Node {
	if factor.Size() == 1 && ct.Size() > 1 && slices.Equal(ct.Shape(), x.Shape()) {
		if _, view := ct.op.(broadcastToOp); !view {
			n := ct.Size()
			return Reshape(MatMul(Reshape(ct, 1, n), Reshape(x, n, 1)), factor.Shape()...)
		}
	}
	return SumTo(Mul(ct, x), factor.Shape()...)
}

func (mulOp) JVP(out *Node, t []*Node) *Node { return bilinearJVP(out, t, Mul) }

func (o mulOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Mul returns the elementwise product a·b with NumPy broadcasting.
func Mul(a, b *Node) *Node {
	checkBinary("mul", a, b)
	return apply(mulOp{}, a, b)
}

type divOp struct{}

func (divOp) Name() string { return "div" }

func (divOp) Arity() int { return 2 }

func (divOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Div(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (divOp) check(in []*Node) { checkBroadcast("div", in[0], in[1]) }

// With q = a/b: dq = da/b − q·db/b, so both rules reuse the output.
func (divOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	cb := Div(ct, b)
	return cotangents(out, SumTo(cb, a.Shape()...), SumTo(Neg(Mul(cb, out)), b.Shape()...))
}

func (divOp) JVP(out *Node, t []*Node) *Node {
	b := out.inputs[1]
	switch {
	case t[1] == nil:
		return BroadcastTo(Div(t[0], b), out.Shape()...)
	case t[0] == nil:
		return Neg(Div(Mul(t[1], out), b))
	}
	return Div(Sub(t[0], Mul(t[1], out)), b)
}

func (o divOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Div returns a / b with NumPy broadcasting (IEEE semantics for b = 0).
func Div(a, b *Node) *Node {
	checkBinary("div", a, b)
	return apply(divOp{}, a, b)
}

type negOp struct{}

func (negOp) Name() string { return "neg" }

func (negOp) Arity() int { return 1 }

func (negOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Neg(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
}

func (negOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{Neg(ct)} }

func (negOp) JVP(out *Node, t []*Node) *Node { return Neg(t[0]) }

func (o negOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Neg returns −x elementwise.
func Neg(x *Node) *Node { return Apply(negOp{}, x) }

type powOp struct{}

func (powOp) Name() string { return "pow" }

func (powOp) Arity() int { return 2 }

func (powOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.Pow(g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...), in[0], in[1])
}

func (powOp) check(in []*Node) { checkBroadcast("pow", in[0], in[1]) }

// powPartials returns ∂(aᵇ)/∂a = b·aᵇ⁻¹ and ∂(aᵇ)/∂b = aᵇ·log a, each only
// when wanted, with the conventions of PyTorch and JAX where these formulas
// give 0·∞ or log 0 at a = 0:
//   - ∂a is 0 where b = 0 (0⁰ = 1 is constant in a);
//   - ∂b is 0 where a = 0 and b ≥ 0 (0ᵇ is 0, or 1 at b = 0, for all such b).
//
// The masked entries are evaluated at a safe base of 1 instead of being
// selected away afterwards (the "double where" idiom), so derivatives of
// these partials stay finite there as well. Elsewhere the plain formulas
// apply: ∂b is NaN for a < 0, and both are infinite at a = 0 with b < 0.
func powPartials(out *Node, wantA, wantB bool) (da, db *Node) {
	a, b := out.inputs[0], out.inputs[1]
	zero, one := constLike(a, 0), constLike(a, 1)
	aZero := Equal(a, zero)
	if wantA {
		// b·aᵇ⁻¹ is already 0 where b = 0 and a ≠ 0, with the right mixed
		// derivative 1/a; only a = b = 0 (0·∞) is masked, so that second
		// derivatives stay exact (and symmetric) for a ≠ 0.
		m := Mul(aZero, Equal(b, zero))
		da = Where(m, zero, Mul(b, Pow(Where(m, one, a), AddScalar(b, -1))))
	}
	if wantB {
		// log 1 = 0 where a = 0 and b ≥ 0, and aᵇ is finite there.
		db = Mul(out, Log(Where(Mul(aZero, GreaterEqual(b, zero)), one, a)))
	}
	return da, db
}

// For a constant exponent prefer PowScalar: Pow's cotangent for b involves
// log a, which is NaN for a < 0 (harmless when b's cotangent is unused).
func (powOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	da, db := powPartials(out, true, true)
	return cotangents(out, SumTo(Mul(ct, da), a.Shape()...), SumTo(Mul(ct, db), b.Shape()...))
}

func (powOp) JVP(out *Node, t []*Node) *Node {
	da, db := powPartials(out, t[0] != nil, t[1] != nil)
	var ta, tb *Node
	if da != nil {
		ta = Mul(t[0], da)
	}
	if db != nil {
		tb = Mul(t[1], db)
	}
	return addTangents(out, ta, tb)
}

func (o powOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Pow returns aᵇ elementwise with NumPy broadcasting. Its derivative with
// respect to b involves log a, so differentiate through b only for a ≥ 0.
// At a = 0 the derivatives follow PyTorch and JAX: ∂/∂a is 0 where b = 0,
// and ∂/∂b is 0 where b ≥ 0 (see powPartials).
func Pow(a, b *Node) *Node {
	checkBinary("pow", a, b)
	return apply(powOp{}, a, b)
}

// extremumOp is Maximum (max true) or Minimum. Where a = b the derivative
// is split evenly between the operands, as for Max and Min reductions.
type extremumOp struct{ max bool }

func (o extremumOp) Name() string {
	if o.max {
		return "maximum"
	}
	return "minimum"
}

func (extremumOp) Arity() int { return 2 }

func (o extremumOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	dst := g.AllocUninit(in[0].DType(), broadcastShape(g, in[0], in[1])...)
	if o.max {
		return kern.Maximum(dst, in[0], in[1])
	}
	return kern.Minimum(dst, in[0], in[1])
}

func (o extremumOp) check(in []*Node) { checkBroadcast(o.Name(), in[0], in[1]) }

// weights returns the share of the derivative that goes to a and to b:
// 1 to the selected operand, ½ each on ties (comparisons are constants to
// autodiff, so these weights have zero derivative).
func (o extremumOp) weights(out *Node) (wa, wb *Node) {
	a, b := out.inputs[0], out.inputs[1]
	if o.max {
		wa = MulScalar(Add(Greater(a, b), GreaterEqual(a, b)), 0.5)
		wb = MulScalar(Add(Less(a, b), LessEqual(a, b)), 0.5)
	} else {
		wa = MulScalar(Add(Less(a, b), LessEqual(a, b)), 0.5)
		wb = MulScalar(Add(Greater(a, b), GreaterEqual(a, b)), 0.5)
	}
	return wa, wb
}

func (o extremumOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	wa, wb := o.weights(out)
	return cotangents(out, SumTo(Mul(ct, wa), a.Shape()...), SumTo(Mul(ct, wb), b.Shape()...))
}

func (o extremumOp) JVP(out *Node, t []*Node) *Node {
	wa, wb := o.weights(out)
	var ta, tb *Node
	if t[0] != nil {
		ta = Mul(t[0], wa)
	}
	if t[1] != nil {
		tb = Mul(t[1], wb)
	}
	return addTangents(out, ta, tb)
}

func (o extremumOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// Maximum returns the elementwise maximum of a and b with broadcasting.
// Where a = b each operand receives half of the derivative.
func Maximum(a, b *Node) *Node {
	checkBinary("maximum", a, b)
	return apply(extremumOp{max: true}, a, b)
}

// Minimum returns the elementwise minimum of a and b with broadcasting.
// Where a = b each operand receives half of the derivative.
func Minimum(a, b *Node) *Node {
	checkBinary("minimum", a, b)
	return apply(extremumOp{max: false}, a, b)
}

type addScalarOp struct{ s float64 }

func (addScalarOp) Name() string { return "add_scalar" }

func (addScalarOp) Arity() int { return 1 }

func (o addScalarOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.AddScalar(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], o.s)
}

func (addScalarOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{ct} }

func (addScalarOp) JVP(out *Node, t []*Node) *Node { return t[0] }

func (o addScalarOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// AddScalar returns x + s elementwise.
func AddScalar(x *Node, s float64) *Node { return Apply(addScalarOp{s}, x) }

type mulScalarOp struct{ s float64 }

func (mulScalarOp) Name() string { return "mul_scalar" }

func (mulScalarOp) Arity() int { return 1 }

func (o mulScalarOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.MulScalar(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], o.s)
}

func (o mulScalarOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{MulScalar(ct, o.s)} }

func (o mulScalarOp) JVP(out *Node, t []*Node) *Node { return MulScalar(t[0], o.s) }

func (o mulScalarOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// MulScalar returns s·x elementwise.
func MulScalar(x *Node, s float64) *Node { return Apply(mulScalarOp{s}, x) }

type powScalarOp struct{ p float64 }

func (powScalarOp) Name() string { return "pow_scalar" }

func (powScalarOp) Arity() int { return 1 }

func (o powScalarOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.PowScalar(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0], o.p)
}

// deriv returns v·p·x^(p−1), or nil (zero) for p = 0.
func (o powScalarOp) deriv(out, v *Node) *Node {
	x := out.inputs[0]
	switch o.p {
	case 0:
		return nil
	case 1:
		return v
	case 2:
		return Mul(v, MulScalar(x, 2))
	}
	return Mul(v, MulScalar(PowScalar(x, o.p-1), o.p))
}

func (o powScalarOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{o.deriv(out, ct)} }

func (o powScalarOp) JVP(out *Node, t []*Node) *Node { return o.deriv(out, t[0]) }

func (o powScalarOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// PowScalar returns xᵖ elementwise.
func PowScalar(x *Node, p float64) *Node { return Apply(powScalarOp{p}, x) }

// broadcastShape returns the broadcast shape of two operand values that
// the op's constructor checked: one of theirs when it is the result (a
// bias added to a batch; tensor shapes never change, so sharing is safe),
// else one built in g's scratch memory.
func broadcastShape(g *Graph, a, b *tensor.Tensor) []int {
	return joinShapes(g, a.Shape(), b.Shape())
}

// joinShapes is the broadcast of shapes sa and sb, which the caller has
// checked broadcast together: one of them when it is the result, else a
// slice from g's arena.
func joinShapes(g *Graph, sa, sb []int) []int {
	switch {
	case broadcastsTo(sb, sa):
		return sa
	case broadcastsTo(sa, sb):
		return sb
	}
	if len(sa) < len(sb) {
		sa, sb = sb, sa
	}
	out := g.AllocInts(len(sa))
	copy(out, sa)
	lead := len(sa) - len(sb)
	for i, d := range sb {
		if d != 1 {
			out[lead+i] = d
		}
	}
	return out
}

// broadcastsTo reports whether shape s broadcasts to target exactly, that
// is, the broadcast of s and target is target.
func broadcastsTo(s, target []int) bool {
	if len(s) > len(target) {
		return false
	}
	lead := len(target) - len(s)
	for i, d := range s {
		if d != 1 && d != target[lead+i] {
			return false
		}
	}
	return true
}

// constLike returns a constant 0-d node holding v in x's graph and dtype,
// for use as a broadcasting operand.
func constLike(x *Node, v float64) *Node {
	t := x.g.AllocUninit(x.DType())
	t.Fill(v)
	return x.g.Const(t)
}
