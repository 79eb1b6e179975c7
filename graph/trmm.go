package graph

import "github.com/gradus-ml/gradus/tensor"

func init() {
	Register(triMatMulOp{})
	Register(symLowerOp{})
}

// triMatMulOp is Y = op(tril(L))·B, or only the lower triangle of it when
// lowerOut is set (B square). The kernel reads only L's lower triangle and
// does half (a quarter with lowerOut) of a dense product's work.
type triMatMulOp struct{ trans, lowerOut bool }

func (triMatMulOp) Name() string { return "tri_matmul" }

func (triMatMulOp) Arity() int { return 2 }

func (op triMatMulOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	dst := g.AllocUninit(in[0].DType(), solveShape(in[0], in[1])...)
	if op.lowerOut {
		return tensor.TriMatMulLowerTo(dst, in[0], in[1], op.trans)
	}
	return tensor.TriMatMulTo(dst, in[0], in[1], op.trans)
}

// With Ȳ masked to the triangle the output keeps: B̄ = op(L)ᵀ Ȳ, and
// L̄ = tril(Ȳ Bᵀ), or tril(B Ȳᵀ) when L enters transposed.
func (op triMatMulOp) VJP(out, ct *Node, needs []bool) []*Node {
	l, b := out.inputs[0], out.inputs[1]
	if op.lowerOut {
		ct = Tril(ct)
	}
	bbar := Apply(triMatMulOp{trans: !op.trans}, l, ct)
	var lbar *Node
	if op.trans {
		lbar = Tril(MatMulT(b, ct, false, true))
	} else {
		lbar = Tril(MatMulT(ct, b, false, true))
	}
	return cotangents(out, SumTo(lbar, l.Shape()...), SumTo(bbar, b.Shape()...))
}

// Ẏ = mask(op(tril L̇)·B + op(tril L)·Ḃ).
func (op triMatMulOp) JVP(out *Node, t []*Node) *Node {
	l, b := out.inputs[0], out.inputs[1]
	var y *Node
	if t[0] != nil {
		y = MatMulT(Tril(t[0]), b, op.trans, false)
		if op.lowerOut {
			y = Tril(y)
		}
	}
	if t[1] != nil {
		yb := Apply(op, l, t[1])
		if y == nil {
			y = yb
		} else {
			y = Add(y, yb)
		}
	}
	return y
}

// Linear-algebra ops act on the last two axes and broadcast the others.
func (o triMatMulOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// TriMatMul returns op(L)·B, where L is the lower triangle of l (..., n, n)
// (the entries above the diagonal are not read, and get no gradient) and
// op(L) is L, or Lᵀ when transL is set; b is (..., n, k) or a vector (n,),
// and batch axes broadcast. It does half the work of MatMul. It panics with
// a *tensor.Error when the shapes or dtypes do not fit.
func TriMatMul(l, b *Node, transL bool) *Node {
	checkSolve("tri_matmul", l, b)
	if b.Dim() == 1 {
		return Squeeze(Apply(triMatMulOp{trans: transL}, l, Unsqueeze(b, -1)), -1)
	}
	return Apply(triMatMulOp{trans: transL}, l, b)
}

// TriMatMulLower returns the lower triangle (zeros above the diagonal) of
// op(L)·B for square b (..., n, n), with l and op as for TriMatMul; the
// entries above the diagonal are never computed, so it does about a
// quarter of the work of MatMul. It panics with a *tensor.Error when the
// shapes or dtypes do not fit.
func TriMatMulLower(l, b *Node, transL bool) *Node {
	checkSolve("tri_matmul", l, b)
	if b.Dim() < 2 || b.Shape()[b.Dim()-1] != b.Shape()[b.Dim()-2] {
		tensor.Fail("tri_matmul", "need a square right operand: %s", Describe(l, b))
	}
	return Apply(triMatMulOp{trans: transL, lowerOut: true}, l, b)
}

// symLowerOp is the symmetric matrix whose lower triangle is that of x. It
// is linear: the adjoint folds the mirrored cotangent back onto the lower
// triangle, tril(C + Cᵀ) with the diagonal counted once.
type symLowerOp struct{}

func (symLowerOp) Name() string { return "sym_lower" }

func (symLowerOp) Arity() int { return 1 }

func (symLowerOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return tensor.SymmetrizeLowerTo(g.AllocUninit(in[0].DType(), in[0].Shape()...), in[0])
}

func (symLowerOp) VJP(out, ct *Node, needs []bool) []*Node {
	return cotangents(out, Apply(triMaskOp{1, 0.5, 0}, Add(ct, Transpose(ct))))
}

func (op symLowerOp) JVP(out *Node, t []*Node) *Node { return Apply(op, t[0]) }

func (o symLowerOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// SymmetrizeLower returns the symmetric matrices whose lower triangle
// (diagonal included) is that of x (..., n, n); the upper triangle of x is
// not read and gets no gradient. It panics with a *tensor.Error when x is
// not a stack of square matrices.
func SymmetrizeLower(x *Node) *Node {
	checkSquare("sym_lower", x)
	return Apply(symLowerOp{}, x)
}
