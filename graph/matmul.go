package graph

import (
	"slices"

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

// Forward builds the shape the constructor checked (in graph scratch
// memory, which the pool copies where it keeps a shape) and multiplies
// without checking again.
func (o matmulOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.MatMulT(o.alloc(g, in[0], in[1]), in[0], in[1], o.transA, o.transB)
}

// alloc returns the uninitialised buffer of op(a)·op(b).
func (o matmulOp) alloc(g *Graph, a, b *tensor.Tensor) *tensor.Tensor {
	sa, sb := a.Shape(), b.Shape()
	na, nb := len(sa), len(sb)
	nd := max(na, nb)
	shape := g.AllocInts(nd)
	shape[nd-2], shape[nd-1] = sa[na-2], sb[nb-1]
	if o.transA {
		shape[nd-2] = sa[na-1]
	}
	if o.transB {
		shape[nd-1] = sb[nb-2]
	}
	// Batch dimensions: the longer operand's, except where it has a 1.
	long, short := sa, sb
	if na < nb {
		long, short = sb, sa
	}
	copy(shape, long[:nd-2])
	lead := len(long) - len(short)
	for i, d := range short[:len(short)-2] {
		if d != 1 {
			shape[lead+i] = d
		}
	}
	return g.AllocUninit(a.DType(), shape...)
}

// check validates operands of at least two dimensions: one dtype, inner
// dimensions that agree and batch dimensions that broadcast.
func (o matmulOp) check(in []*Node) {
	a, b := in[0], in[1]
	if a.DType() != b.DType() {
		tensor.Fail("matmul", "mixed dtypes: %s", Describe(a, b))
	}
	if a.Dim() < 2 || b.Dim() < 2 {
		tensor.Fail("matmul", "operands %s must have at least 2 dimensions (the constructors reshape vectors)", Describe(a, b))
	}
	if a.Dim() == 2 && b.Dim() == 2 {
		matmulDims(a.Shape(), b.Shape(), o.transA, o.transB)
	} else {
		matmulShape(a.Shape(), b.Shape(), o.transA, o.transB)
	}
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
	if needs[1] && b.Dim() == 2 && a.Dim() > 2 && !o.transA {
		// A batch of a's rows against one matrix b: its gradient sums over
		// the batch, which one GEMM over the flattened rows does directly
		// (a deeper inner dimension and no batch of partial products to add).
		k, n := a.Shape()[a.Dim()-1], ct.Shape()[ct.Dim()-1]
		a2, ct2 := Reshape(a, -1, k), Reshape(ct, -1, n)
		if o.transB {
			db = matmulT(ct2, a2, true, false)
		} else {
			db = matmulT(a2, ct2, true, false)
		}
	} else if needs[1] {
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

// The leading axes of the operands broadcast as batch axes.
func (o matmulOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2, 2})
}

// matmulShape returns the shape of op(a)·op(b) for operands of at least two
// dimensions, panicking when they do not fit.
func matmulShape(a, b []int, transA, transB bool) []int {
	m, n := matmulDims(a, b, transA, transB)
	ba, bb := a[:len(a)-2], b[:len(b)-2]
	if !tensor.Broadcastable(ba, bb) {
		tensor.Fail("matmul", "batch dimensions %s and %s of %s and %s do not broadcast",
			tensor.FormatShape(ba), tensor.FormatShape(bb), tensor.FormatShape(a), tensor.FormatShape(b))
	}
	return append(tensor.BroadcastShapes("matmul", ba, bb), m, n)
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
		tensor.Fail("matmul", "inner dimensions differ: %s%s and %s%s (%d vs %d)",
			tensor.FormatShape(a), transposed(transA), tensor.FormatShape(b), transposed(transB), k, k2)
	}
	return m, n
}

// transposed marks an operand read transposed in messages: (2, 3)ᵀ.
func transposed(t bool) string {
	if t {
		return "ᵀ"
	}
	return ""
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
	out := apply(matmulOp{transA, transB}, a, b)
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

// WeightFactor reports whether n is a product x·wᵀ of two matrices, or of
// two batches of matrices with the same batch shape (a MatMulT with only w
// transposed, or a Linear of a matrix x), and returns x and w. The
// cotangent of w is then ctᵀ·x (batched alike); the reverse sweep sums
// those of many such products of one w (a recurrent weight used at every
// time step, or the two directions' weights stacked) as one matrix
// product of the cotangents and inputs concatenated along their rows
// instead of one product and one addition per use.
func WeightFactor(n *Node) (x, w *Node, ok bool) {
	switch o := n.op.(type) {
	case matmulOp:
		ok = !o.transA && o.transB
	case linearOp:
		ok = true
	}
	if !ok {
		return nil, nil, false
	}
	xs, ws := n.inputs[0].Shape(), n.inputs[1].Shape()
	if len(xs) < 2 || len(xs) != len(ws) || !slices.Equal(xs[:len(xs)-2], ws[:len(ws)-2]) {
		return nil, nil, false
	}
	return n.inputs[0], n.inputs[1], true
}
