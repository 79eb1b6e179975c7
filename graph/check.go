package graph

import (
	"github.com/gradus-ml/gradus/internal/unchecked"
	"github.com/gradus-ml/gradus/tensor"
)

// kern holds tensor's kernels without their validation. An op's Forward
// may call them only when its constructor and its check method (see
// checker) validate everything the kernel assumes; the others call
// tensor's exported functions.
var kern = unchecked.Get[*tensor.Tensor, tensor.ConvParams, tensor.PoolParams]()

// checkNodes is the first operand check of every constructor: it fails for
// op, naming the argument, when an operand is nil, belongs to a graph that
// was Reset since it was made (or is a zero Node), or comes from a
// different graph than the first operand. Constructors call it before
// touching an operand's shape, so misuse reads as a *tensor.Error rather
// than a nil-pointer panic. Operands are numbered from 0 in the order the
// constructor takes them.
func checkNodes(op string, ns ...*Node) {
	var g *Graph
	for i, n := range ns {
		switch {
		case n == nil:
			tensor.Fail(op, "operand %d of %d is nil", i, len(ns))
		case n.g == nil || n.value == nil:
			tensor.Fail(op, "operand %d: %s", i, staleMsg)
		case g == nil:
			g = n.g
		case n.g != g:
			tensor.Fail(op, "operands %s belong to different graphs (operand %d differs from operand 0)", Describe(ns...), i)
		}
	}
}

// checkGraph fails for op when a constructor that takes a graph rather
// than an operand (OneHot) is given a nil one.
func checkGraph(op string, g *Graph) {
	if g == nil {
		tensor.Fail(op, "nil graph")
	}
}
