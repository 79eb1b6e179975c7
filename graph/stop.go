package graph

import "github.com/gradus-ml/gradus/tensor"

func init() { Register(stopGradientOp{}) }

type stopGradientOp struct{}

func (stopGradientOp) Name() string { return "stop_gradient" }

func (stopGradientOp) Arity() int { return 1 }

// Forward shares the input's value: graph values are never modified.
func (stopGradientOp) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor { return in[0] }

func (stopGradientOp) VJP(out, ct *Node, needs []bool) []*Node { return []*Node{nil} }

func (stopGradientOp) JVP(out *Node, t []*Node) *Node { return nil }

func (o stopGradientOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return BatchElementwise(b, o, in, axes)
}

// StopGradient returns x's value as a node that derivatives do not flow
// through: it is treated as a constant by VJP and JVP (e.g. for targets
// computed from parameters, or the straight-through trick).
func StopGradient(x *Node) *Node { return Apply(stopGradientOp{}, x) }
