package graph

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// The program's optimisations, applied while the traced graph is turned
// into slots: dead-code removal (nodes no output depends on), constant
// folding (an op whose inputs are all constants becomes a constant
// holding the value the trace computed, so folding is exact), and
// common-subexpression merging (a node equal to an earlier one, same op
// value and same input slots, or a constant with the same bits, becomes
// that one). Merging is exact too: the program would compute the same
// bits twice.

// irNode is a traced node on its way to becoming a slot.
type irNode struct {
	kind  slotKind
	input int
	op    Op
	in    []int // irNode indices
	node  *Node // the traced node (its value is the trace's)
	value *tensor.Tensor
}

// compile turns the traced graph g into p's slots and steps. It returns,
// per slot, the value the trace computed, which the planning run checks
// the replay against.
func (p *Program) compile(g *Graph, in []*tensor.Tensor, outs []*Node) ([]*tensor.Tensor, error) {
	p.stats.Traced = g.Len()
	live := reach(g, outs)
	rep := make([]int, g.Len()) // traced node id -> irNode
	var ir []irNode
	inputAt := map[*tensor.Tensor]int{}
	for i, t := range in {
		inputAt[t] = i
	}
	consts := map[string][]int{} // dtype and shape -> constant irNodes
	opsBy := map[string][]int{}  // op name and input irNodes -> op irNodes
	addConst := func(n *Node, v *tensor.Tensor) int {
		key := fmt.Sprint(v.DType(), v.Shape())
		for _, k := range consts[key] {
			if bitsEqual(ir[k].value, v) {
				p.stats.Merged++
				return k
			}
		}
		ir = append(ir, irNode{kind: slotConst, node: n, value: v.Clone()})
		consts[key] = append(consts[key], len(ir)-1)
		return len(ir) - 1
	}
	inputIR := make([]int, len(in))
	for i := range inputIR {
		inputIR[i] = -1
	}
	for _, n := range g.nodes {
		if !live[n.id] {
			p.stats.Dead++
			continue
		}
		switch {
		case n.leaf == variable:
			k, ok := inputAt[n.value]
			if !ok || g.bindings[n.value] != n {
				return nil, fmt.Errorf("graph.Capture: %w: leaf %v is a Var that is not a declared input; pass its tensor to Capture, or make it a Const to freeze it", ErrNotCapturable, n)
			}
			if inputIR[k] < 0 {
				ir = append(ir, irNode{kind: slotInput, input: k, node: n})
				inputIR[k] = len(ir) - 1
			}
			rep[n.id] = inputIR[k]
		case n.leaf == constant:
			if k, ok := inputAt[n.value]; ok {
				return nil, fmt.Errorf("graph.Capture: %w: leaf %v is a Const of input %d, which the program would freeze; use the input's node", ErrNotCapturable, n, k)
			}
			rep[n.id] = addConst(n, n.value)
		default:
			if why := refusedOp(n.op); why != "" {
				return nil, fmt.Errorf("graph.Capture: %w: op %s %s", ErrNotCapturable, n.op.Name(), why)
			}
			args := make([]int, len(n.inputs))
			folded := true
			for j, x := range n.inputs {
				args[j] = rep[x.id]
				folded = folded && ir[args[j]].kind == slotConst
			}
			if folded {
				p.stats.Folded++
				rep[n.id] = addConst(n, n.value)
				continue
			}
			key := fmt.Sprint(n.op.Name(), args)
			rep[n.id] = -1
			for _, k := range opsBy[key] {
				if reflect.DeepEqual(ir[k].op, n.op) {
					p.stats.Merged++
					rep[n.id] = k
					break
				}
			}
			if rep[n.id] < 0 {
				ir = append(ir, irNode{kind: slotOp, op: n.op, in: args, node: n})
				rep[n.id] = len(ir) - 1
				opsBy[key] = append(opsBy[key], len(ir)-1)
			}
		}
	}
	return p.keepLive(ir, rep, in, outs), nil
}

// reach marks the nodes of g that some output depends on.
func reach(g *Graph, outs []*Node) []bool {
	live := make([]bool, g.Len())
	for _, o := range outs {
		live[o.id] = true
	}
	for i := g.Len() - 1; i >= 0; i-- {
		if live[i] {
			for _, x := range g.nodes[i].inputs {
				live[x.id] = true
			}
		}
	}
	return live
}

// keepLive drops the irNodes that folding and merging left without users
// and numbers the rest as slots. It returns the trace's value of each
// slot.
func (p *Program) keepLive(ir []irNode, rep []int, in []*tensor.Tensor, outs []*Node) []*tensor.Tensor {
	live := make([]bool, len(ir))
	for _, o := range outs {
		live[rep[o.id]] = true
	}
	for i := len(ir) - 1; i >= 0; i-- {
		if live[i] {
			for _, k := range ir[i].in {
				live[k] = true
			}
		}
	}
	slotOf := make([]int, len(ir))
	var traced []*tensor.Tensor
	for i := range ir {
		n := &ir[i]
		if !live[i] {
			if n.kind != slotInput {
				p.stats.Dead++
			}
			continue
		}
		slotOf[i] = len(p.slots)
		s := slot{kind: n.kind, input: n.input, dt: n.node.DType(), shape: slices.Clone(n.node.Shape())}
		if n.kind == slotConst {
			s.value = n.value
		}
		if n.kind == slotOp {
			args := make([]int, len(n.in))
			for j, k := range n.in {
				args[j] = slotOf[k]
			}
			p.steps = append(p.steps, step{op: n.op, in: args, out: len(p.slots),
				args: make([]*tensor.Tensor, len(args)), own: -1})
		}
		p.slots = append(p.slots, s)
		traced = append(traced, n.node.value)
	}
	for _, o := range outs {
		p.outs = append(p.outs, slotOf[rep[o.id]])
	}
	p.stats.Ops = len(p.steps)
	p.vals = make([]*tensor.Tensor, len(p.slots))
	for i, s := range p.slots {
		if s.kind == slotConst {
			p.vals[i] = s.value
		}
	}
	p.outVals = make([]*tensor.Tensor, len(p.outs))
	// Each output gets memory of its own, as in the eager step, so a
	// caller that changes one in place (clipping gradients) changes
	// neither a constant the next Run reads nor another output that
	// merging made the same slot.
	p.outCopy = make([]*tensor.Tensor, len(p.outs))
	for i, k := range p.outs {
		if p.slots[k].kind == slotConst || slices.Contains(p.outs[:i], k) {
			p.outCopy[i] = tensor.New(p.slots[k].dt, p.slots[k].shape...)
		}
	}
	return traced
}

// Unreplayable is implemented by ops that Capture must refuse: ops whose
// value holds data from Go (indices, levels) that a captured program would
// freeze, or that Forward changes for later ops to read. Unreplayable says
// why, for the error. User-written ops of that kind should implement it.
type Unreplayable interface {
	Unreplayable() string
}

// refusedOp says why op cannot be replayed, or returns "".
func refusedOp(op Op) string {
	if u, ok := op.(Unreplayable); ok {
		return u.Unreplayable()
	}
	return ""
}

const (
	heldIndices = "holds its indices (labels, token ids) in the op, where a captured program would freeze them; pass them as a tensor input (one-hot targets, say)"
	heldArgmax  = "records its argmax in Go for the backward ops, which a replay would not update"
)

func (indexSelectOp) Unreplayable() string   { return heldIndices }
func (scatterAddOp) Unreplayable() string    { return heldIndices }
func (*maxPool2DOp) Unreplayable() string    { return heldArgmax }
func (maxPoolGradOp) Unreplayable() string   { return heldArgmax }
func (maxPoolGatherOp) Unreplayable() string { return heldArgmax }
