package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// Build applies the program's ops to nodes of g, in, one per input given
// to Capture, with the shapes and dtypes captured, and returns the nodes
// of its outputs: the captured step as a StepFunc again, after the
// optimisations (dead code removed, constants folded, duplicates merged).
// A fused step becomes its ops again, and a merged sum of scattered
// windows (scatter_sum) the sum of its parts, each padded with zeros to
// its window (the same bits), a concat found inside an earlier one the
// view of it, and a matmul on a packed operand a matmul.
// Constants enter g as Consts of copies.
// Build serves exporters (onnx.ExportProgram), which translate graph ops
// one by one.
//
// Build panics with a *tensor.Error if in does not have the captured
// count, shapes and dtypes, or a node is nil or of another graph.
func (p *Program) Build(g *Graph, in []*Node) []*Node {
	const op = "graph.Program.Build"
	if g == nil {
		tensor.Fail(op, "nil graph")
	}
	if len(in) != len(p.inShapes) {
		tensor.Fail(op, "%d inputs for a program captured with %d", len(in), len(p.inShapes))
	}
	for i, x := range in {
		if x == nil || x.Graph() != g {
			tensor.Fail(op, "input %d is nil or belongs to another graph", i)
		}
		if x.DType() != p.inTypes[i] || !slices.Equal(x.Shape(), p.inShapes[i]) {
			tensor.Fail(op, "input %d is %s %v, the program was captured with %s %v", i,
				tensor.FormatShape(x.Shape()), x.DType(), tensor.FormatShape(p.inShapes[i]), p.inTypes[i])
		}
	}
	nodes := make([]*Node, len(p.slots))
	for i, s := range p.slots {
		switch s.kind {
		case slotInput:
			nodes[i] = in[s.input]
		case slotConst:
			nodes[i] = g.Const(s.value.Clone())
		}
	}
	for _, s := range p.steps {
		args := make([]*Node, len(s.in))
		for j, k := range s.in {
			args[j] = nodes[k]
		}
		switch k := s.op.(type) {
		case *fused[float32]:
			nodes[s.out] = expandFused(k.ops, k.code, args)
		case *fused[float64]:
			nodes[s.out] = expandFused(k.ops, k.code, args)
		case *scatterSum:
			var sum *Node
			for j, x := range args {
				pads := make([][2]int, x.Dim())
				pads[k.axis] = [2]int{k.starts[j], k.shape[k.axis] - k.starts[j] - x.Shape()[k.axis]}
				part := Pad(x, pads, 0)
				if sum == nil {
					sum = part
				} else {
					sum = Add(sum, part)
				}
			}
			nodes[s.out] = sum
		case *concatView:
			nodes[s.out] = k.build(args[0])
		case *packedMatmul:
			nodes[s.out] = Apply(k.matmulOp, args...)
		case *packedLinear:
			nodes[s.out] = Apply(k.linearOp, args...)
		case Op:
			nodes[s.out] = Apply(k, args...)
		default:
			tensor.Fail(op, "step %s has no op form", s.op.Name())
		}
	}
	outs := make([]*Node, len(p.outs))
	for i, k := range p.outs {
		outs[i] = nodes[k]
	}
	return outs
}

// expandFused applies a fused step's ops to its inputs in, following its
// code: each instruction reads registers or inputs and writes a register,
// the last one the step's output.
func expandFused[T float32 | float64](ops []Op, code []finstr[T], in []*Node) *Node {
	regs := map[int]*Node{}
	read := func(o operand) *Node {
		if o.reg >= 0 {
			return regs[o.reg]
		}
		return in[o.in]
	}
	var out *Node
	for c, ins := range code {
		args := []*Node{read(ins.x)}
		if ops[c].Arity() == 2 {
			args = append(args, read(ins.y))
		}
		out = Apply(ops[c], args...)
		if ins.dst >= 0 {
			regs[ins.dst] = out
		}
	}
	return out
}
