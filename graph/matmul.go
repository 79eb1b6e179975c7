package graph

import (
	"github.com/gradus-ml/gradus/tensor"
)

// The matmul op multiplies operands of at least two dimensions, either of
// which may be read transposed (op(x) swaps the last two axes without a
// copy). With the flags in the op, every VJP and JVP is again one matmul of
// the stored operands: no transpose is ever materialised. 1-D operands are
// handled by the constructors with reshapes.

func init() { Register(matmulOp{}) }

type matmulOp struct{ transA, transB bool }

func (matmulOp) Name() string { return "matmul" }

func (matmulOp) Arity() int { return 2 }

func (o matmulOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	a, b := in[0], in[1]
	var shape []int
	if a.Dim() == 2 && b.Dim() == 2 {
		// The common case builds its shape in graph scratch memory: the
		// pool copies shapes it keeps, so no slice is allocated per op.
		m, n := matmulDims(a.Shape(), b.Shape(), o.transA, o.transB)
		shape = g.AllocInts(2)
		shape[0], shape[1] = m, n
	} else {
		shape = matmulShape(a.Shape(), b.Shape(), o.transA, o.transB)
	}
	return tensor.MatMulTTo(g.AllocUninit(a.DType(), shape...), a, b, o.transA, o.transB)
}

// For C = op(A)·op(B): dop(A) = dC·op(B)ᵀ and dop(B) = op(A)ᵀ·dC, folded
// back through the transposes. SumTo removes broadcast batch dimensions.
func (o matmulOp) VJP(out, ct *Node, needs []bool) []*Node {
	a, b := out.inputs[0], out.inputs[1]
	var da, db *Node
	if needs[0] {
		if o.transA {
			da = matmulT(b, ct, o.transB, true)
		} else {
			da = matmulT(ct, b, false, !o.transB)
		}
		da = SumTo(da, a.Shape()...)
	}
	if needs[1] {
		if o.transB {
			db = matmulT(ct, a, true, o.transA)
		} else {
			db = matmulT(a, ct, !o.transA, false)
		}
		db = SumTo(db, b.Shape()...)
	}
	return cotangents(out, da, db)
}

func (o matmulOp) JVP(out *Node, t []*Node) *Node {
	return bilinearJVP(out, t, func(a, b *Node) *Node { return matmulT(a, b, o.transA, o.transB) })
}

// matmulShape returns the shape of op(a)·op(b) for operands of at least two
// dimensions, panicking when they do not fit.
func matmulShape(a, b []int, transA, transB bool) []int {
	m, n := matmulDims(a, b, transA, transB)
	batch := tensor.BroadcastShapes("matmul", a[:len(a)-2], b[:len(b)-2])
	return append(batch, m, n)
}

// matmulDims returns the rows of op(a) and the columns of op(b), panicking
// when the inner dimensions differ; it does not look at batch dimensions.
func matmulDims(a, b []int, transA, transB bool) (m, n int) {
	na, nb := len(a), len(b)
	m, k := a[na-2], a[na-1]
	if transA {
		m, k = k, m
	}
	k2, n := b[nb-2], b[nb-1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		tensor.Fail("matmul", "inner dimensions differ: %v (transposed %v) and %v (transposed %v)",
			append([]int(nil), a...), transA, append([]int(nil), b...), transB)
	}
	return m, n
}

func matmulT(a, b *Node, transA, transB bool) *Node {
	return Apply(matmulOp{transA, transB}, a, b)
}

// MatMul returns the matrix product of a and b with NumPy matmul
// semantics: leading (batch) dimensions broadcast, a 1-D a is a row vector
// and a 1-D b a column vector, the added axis being dropped from the
// result. It panics for 0-d operands, mixed dtypes, different inner
// dimensions or batch dimensions that do not broadcast.
func MatMul(a, b *Node) *Node { return MatMulT(a, b, false, false) }

// MatMulT returns op(a)·op(b), where op swaps the last two axes of an
// operand when its flag is set, without copying it; 1-D operands are never
// transposed. Otherwise it behaves as MatMul.
func MatMulT(a, b *Node, transA, transB bool) *Node {
	checkMatMul(a, b)
	vecA, vecB := a.Dim() == 1, b.Dim() == 1
	if vecA {
		a, transA = Reshape(a, 1, a.Shape()[0]), false
	}
	if vecB {
		b, transB = Reshape(b, b.Shape()[0], 1), false
	}
	// Check before computing (the batch dimensions only when there are any).
	if a.Dim() == 2 && b.Dim() == 2 {
		matmulDims(a.Shape(), b.Shape(), transA, transB)
	} else {
		matmulShape(a.Shape(), b.Shape(), transA, transB)
	}
	out := matmulT(a, b, transA, transB)
	if !vecA && !vecB {
		return out
	}
	shape := out.Shape()
	nd := len(shape)
	switch {
	case vecA && vecB:
		shape = shape[:nd-2]
	case vecA:
		shape = append(append([]int(nil), shape[:nd-2]...), shape[nd-1])
	default:
		shape = shape[:nd-1]
	}
	return Reshape(out, shape...)
}

func checkMatMul(a, b *Node) {
	checkNodes("matmul", a, b)
	if a.g != b.g {
		tensor.Fail("matmul", "operands %s belong to different graphs", Describe(a, b))
	}
	if a.DType() != b.DType() {
		tensor.Fail("matmul", "mixed dtypes: %s", Describe(a, b))
	}
	if a.Dim() == 0 || b.Dim() == 0 {
		tensor.Fail("matmul", "scalar operand: %s", Describe(a, b))
	}
}

// Dot returns the inner product of two 1-D nodes of equal length as a 0-d
// node.
func Dot(a, b *Node) *Node {
	checkNodes("dot", a, b)
	if a.Dim() != 1 || b.Dim() != 1 || a.Shape()[0] != b.Shape()[0] {
		tensor.Fail("dot", "operands must be 1-D of equal length: %s", Describe(a, b))
	}
	return MatMul(a, b)
}

// Outer returns the outer product of the 1-D nodes a (m) and b (n), an m×n
// matrix with entries a[i]·b[j].
func Outer(a, b *Node) *Node {
	checkNodes("outer", a, b)
	if a.Dim() != 1 || b.Dim() != 1 {
		tensor.Fail("outer", "operands must be 1-D: %s", Describe(a, b))
	}
	checkMatMul(a, b)
	return matmulT(Reshape(a, a.Shape()[0], 1), Reshape(b, 1, b.Shape()[0]), false, false)
}
