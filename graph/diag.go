package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

func init() {
	Register(diagonalOp{})
	Register(addDiagOp{})
}

// diagonalOp takes the diagonals of a stack of square matrices. It is
// linear; its adjoint puts a vector back on the diagonal of zeros.
type diagonalOp struct{}

func (diagonalOp) Name() string { return "diagonal" }

func (diagonalOp) Arity() int { return 1 }

func (diagonalOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	s := in[0].Shape()
	return kern.Diagonal(g.AllocUninit(in[0].DType(), s[:len(s)-1]...), in[0])
}

func (diagonalOp) check(in []*Node) { checkSquare("diagonal", in[0]) }

func (diagonalOp) VJP(out, ct *Node, needs []bool) []*Node {
	x := out.inputs[0]
	return cotangents(out, AddDiag(zerosOf(x.g, x.DType(), x.Shape()), ct))
}

func (op diagonalOp) JVP(out *Node, t []*Node) *Node { return Apply(op, t[0]) }

// Linear-algebra ops act on the last two axes and broadcast the others.
func (o diagonalOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return b.leading(o, in, axes, []int{2})
}

// Diagonal returns the diagonals of the square matrices x (..., n, n) as
// a (..., n) node. It panics with a *tensor.Error when x has fewer than 2
// dimensions or its last two differ.
func Diagonal(x *Node) *Node {
	checkSquare("diagonal", x)
	return apply(diagonalOp{}, x)
}

// addDiagOp is x + diag(d). Its cotangents are the output's cotangent
// summed to x's shape, and the cotangent's diagonal summed to d's shape:
// no n×n identity is built in either direction.
type addDiagOp struct{}

func (addDiagOp) Name() string { return "add_diag" }

func (addDiagOp) Arity() int { return 2 }

func (addDiagOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	return kern.AddDiag(g.AllocUninit(in[0].DType(), addDiagShape(g, in[0].Shape(), in[1].Shape())...), in[0], in[1])
}

func (addDiagOp) check(in []*Node) { checkAddDiag(in[0], in[1]) }

func (addDiagOp) VJP(out, ct *Node, needs []bool) []*Node {
	x, d := out.inputs[0], out.inputs[1]
	var dbar *Node
	if needs[1] {
		dbar = SumTo(Diagonal(ct), d.Shape()...)
	}
	return cotangents(out, SumTo(ct, x.Shape()...), dbar)
}

// d(x + diag d) = ẋ + diag ḋ, skipping an absent tangent.
func (op addDiagOp) JVP(out *Node, t []*Node) *Node {
	tx, td := t[0], t[1]
	switch {
	case td == nil:
		return BroadcastTo(tx, out.Shape()...)
	case tx == nil:
		tx = zerosOf(out.g, out.DType(), out.Shape())
	}
	return Apply(op, tx, td)
}

func (o addDiagOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	d, ad := in[1], axes[1]
	if ad != NotBatched && d.Dim() == 1 { // one scalar per example
		n := in[0].Shape()[in[0].Dim()-1]
		d, ad = BroadcastTo(Unsqueeze(d, 1), b.size, n), 0
	}
	return b.leading(o, []*Node{in[0], d}, []int{axes[0], ad}, []int{2, min(1, exampleDim(d, ad))})
}

// AddDiag returns x + diag(d): the square matrices x (..., n, n) with d
// added to their diagonals. d is a scalar (0-d), added to every diagonal
// element, or (..., n), whose leading axes broadcast with x's batch axes;
// the result has the broadcast shape (..., n, n). It is the cheap way to
// add noise or jitter to a covariance: Add(x, Mul(d, I)) builds and
// streams through two more n×n matrices forwards and backwards, AddDiag
// touches n extra numbers. It panics with a *tensor.Error when the dtypes
// differ or the shapes do not fit.
func AddDiag(x, d *Node) *Node {
	checkNodes("add_diag", x, d)
	checkAddDiag(x, d)
	return apply(addDiagOp{}, x, d)
}

// checkAddDiag fails unless x is (..., n, n) and d is () or a (..., n) of
// x's dtype whose batch axes broadcast with x's.
func checkAddDiag(x, d *Node) {
	const op = "add_diag"
	if x.DType() != d.DType() {
		tensor.Fail(op, "mixed dtypes: %s", Describe(x, d))
	}
	xs, ds := x.Shape(), d.Shape()
	if len(xs) < 2 || xs[len(xs)-1] != xs[len(xs)-2] {
		tensor.Fail(op, "need square matrices (..., n, n) and a diagonal (), (n,) or (..., n), got %s", Describe(x, d))
	}
	if len(ds) > 0 {
		n := xs[len(xs)-1]
		if ds[len(ds)-1] != n {
			tensor.Fail(op, "diagonal does not fit the %d×%d matrices: %s", n, n, Describe(x, d))
		}
		if !tensor.Broadcastable(xs[:len(xs)-2], ds[:len(ds)-1]) {
			tensor.Fail(op, "batch axes of the matrices and the diagonal do not broadcast: %s", Describe(x, d))
		}
	}
}

// addDiagShape is the shape of x + diag(d) for operands AddDiag checked.
// It is x's own shape slice, not a copy, in the usual case where d's batch
// axes fit in x's.
func addDiagShape(g *Graph, xs, ds []int) []int {
	if len(ds) == 0 {
		return xs
	}
	xb, db := xs[:len(xs)-2], ds[:len(ds)-1]
	if broadcastsTo(db, xb) {
		return xs
	}
	return append(slices.Clone(joinShapes(g, xb, db)), xs[len(xs)-2:]...)
}

// zerosOf returns a constant of zeros held in a buffer g recycles on
// Reset.
func zerosOf(g *Graph, dt tensor.DType, shape []int) *Node {
	return g.Const(g.Alloc(dt, shape...))
}
