package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Parameters (nn.Param, gp hyperparameters) are tensors that live across
// steps. Within one step the graph maps each such tensor to the one node
// that stands for it, so every use of a parameter shares a node and its
// gradient sums them all. Reset forgets the map with the nodes.

// VarOf returns the node that stands for t in this step: the first call
// adds g.Var(t), and later calls until Reset return the same node (or the
// node Bind gave). A parameter used in several places (weight tying, the
// time steps of an RNN) thus has one gradient that sums every use.
func (g *Graph) VarOf(t *tensor.Tensor) *Node {
	if n := g.bindings[t]; n != nil {
		return n
	}
	n := g.leafNode("VarOf", t, variable, "")
	if g.bindings == nil {
		g.bindings = map[*tensor.Tensor]*Node{}
	}
	g.bindings[t] = n
	return n
}

// Bind makes VarOf(t) return n until Reset, so code that reads a parameter
// through VarOf computes with n instead: a value that is itself computed
// (hyperparameters drawn by a variational model) or one that a checker
// perturbs (autodiff.GradCheck). n must be a node of g with t's shape and
// dtype; a nil n removes the binding. Bind panics with a *tensor.Error
// otherwise.
func (g *Graph) Bind(t *tensor.Tensor, n *Node) {
	if t == nil {
		tensor.Fail("Bind", "nil tensor")
	}
	if n == nil {
		delete(g.bindings, t)
		return
	}
	checkNodes("Bind", n)
	if n.g != g {
		tensor.Fail("Bind", "node %v belongs to another graph", n)
	}
	if n.DType() != t.DType() || !slices.Equal(n.Shape(), t.Shape()) {
		tensor.Fail("Bind", "node %s does not match the tensor %s %v", Describe(n), tensor.FormatShape(t.Shape()), t.DType())
	}
	if g.bindings == nil {
		g.bindings = map[*tensor.Tensor]*Node{}
	}
	g.bindings[t] = n
}

// Bound returns the node that stands for t in this step, or nil if VarOf
// has not been called for t since the last Reset (and Bind has not bound
// it).
func (g *Graph) Bound(t *tensor.Tensor) *Node { return g.bindings[t] }
