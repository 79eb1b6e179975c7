package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// A stack found inside an earlier one. The reverse sweep of a recurrence
// stacks its steps' gate cotangents twice: once whole, for the gradient
// of the input projection all steps share, and once without the first
// step, for the recurrent weight's (autodiff's outerSum, in the same
// order): an LSTM of 50 steps copies the same 3 MiB twice. Where a concat
// along its outermost non-unit axis reads, piece by piece, the same values
// as a run of consecutive pieces of an earlier such concat (the same
// slots, up to reshapes, which keep the row-major order), its result is
// that run of the earlier one's memory: capture replaces it by a view.
// The values are the same, so the bits are.

// concatView is a concat replaced by a view of an earlier concat's
// result: the elements [off, off+size(shape)) of it, as shape.
type concatView struct {
	off   int
	shape []int
}

func (*concatView) Name() string { return "concat_view" }

func (o *concatView) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	src := in[0]
	n := shapeSize(o.shape)
	flat := g.view(src, viewReshape, [4]int{}, []int{src.Size()}, func() *tensor.Tensor { return kern.Reshape(src, []int{src.Size()}) })
	part := g.slice(flat, sliceSpec{0, o.off, o.off + n, 1})
	return g.view(part, viewReshape, [4]int{}, o.shape, func() *tensor.Tensor { return kern.Reshape(part, o.shape) })
}

// build is the view in graph ops, for Program.Build.
func (o *concatView) build(x *Node) *Node {
	flat := Reshape(x, x.Size())
	return Reshape(Slice(flat, 0, o.off, o.off+shapeSize(o.shape), 1), o.shape...)
}

// flatConcat reports whether concat step s lays its inputs out one after
// the other in memory: every axis before its concat axis has size 1.
func (p *Program) flatConcat(s *step) bool {
	o, ok := s.op.(concatOp)
	if !ok {
		return false
	}
	shape := p.slots[s.out].shape
	return shapeSize(shape[:o.axis]) == 1
}

// dropUnread removes the steps whose output no later step and no output
// reads: the pieces of a concat that became a view (a reshape that
// copied a strided piece its strides could not express, say), once
// nothing else reads them.
func (p *Program) dropUnread() {
	read := make([]bool, len(p.slots))
	for _, k := range p.outs {
		read[k] = true
	}
	keep := make([]bool, len(p.steps))
	for i := len(p.steps) - 1; i >= 0; i-- {
		s := &p.steps[i]
		if !read[s.out] {
			continue
		}
		keep[i] = true
		for _, k := range s.in {
			read[k] = true
		}
	}
	steps := p.steps[:0]
	for i, s := range p.steps {
		if keep[i] {
			steps = append(steps, s)
			continue
		}
		p.slots[s.out].kind = slotDead
		p.stats.Dead++
	}
	p.steps = steps
	p.stats.Ops = len(p.steps)
}

// concatStack is a flat concat step and, per input, the slot whose
// values it copies (reshapes followed back) and where they land.
type concatStack struct {
	step  int
	bases []int
	offs  []int
}

// concatViews replaces each concat found inside an earlier one by a view
// of it.
func (p *Program) concatViews() {
	producer := make(map[int]int, len(p.steps)) // slot -> step
	for i := range p.steps {
		producer[p.steps[i].out] = i
	}
	// base follows reshapes back to the slot whose values, in row-major
	// order, a slot holds.
	base := func(k int) int {
		for {
			i, ok := producer[k]
			if !ok {
				return k
			}
			if _, isReshape := p.steps[i].op.(reshapeOp); !isReshape {
				return k
			}
			k = p.steps[i].in[0]
		}
	}
	var stacks []concatStack
	for i := range p.steps {
		s := &p.steps[i]
		if !p.flatConcat(s) {
			continue
		}
		st := concatStack{step: i}
		off := 0
		for _, k := range s.in {
			st.bases = append(st.bases, base(k))
			st.offs = append(st.offs, off)
			off += shapeSize(p.slots[k].shape)
		}
		if in, at := findRun(stacks, st.bases); in != nil && !p.reachesOutput(i) {
			s.op = &concatView{off: in.offs[at], shape: slices.Clone(p.slots[s.out].shape)}
			s.in = []int{p.steps[in.step].out}
			s.args = make([]*tensor.Tensor, 1)
			p.stats.Views++
			continue
		}
		stacks = append(stacks, st)
	}
}

// reachesOutput reports whether step i's result, or a view of it, is an
// output of the program. Such a concat keeps its own buffer: as a view of
// an earlier concat, it would share memory with that one's result, which
// may be an output too, and a caller changing one output in place would
// change the other, as no eager step does.
func (p *Program) reachesOutput(i int) bool {
	views := map[int]bool{p.steps[i].out: true}
	for j := i + 1; j < len(p.steps); j++ {
		s := &p.steps[j]
		if len(s.in) > 0 && views[s.in[0]] && returnsView(s.op) {
			views[s.out] = true
		}
	}
	for _, k := range p.outs {
		if views[k] {
			return true
		}
	}
	return false
}

// returnsView reports whether op's Forward may return a view of its first
// input rather than a buffer of its own.
func returnsView(op stepKernel) bool {
	switch op.(type) {
	case reshapeOp, sliceOp, permuteOp, broadcastToOp, stopGradientOp, *concatView:
		return true
	}
	return false
}

// findRun returns the stack holding bases as a run of consecutive pieces,
// and the run's first piece; nil when none does.
func findRun(stacks []concatStack, bases []int) (*concatStack, int) {
	for i := range stacks {
		sb := stacks[i].bases
		for at := 0; at+len(bases) <= len(sb); at++ {
			if slices.Equal(sb[at:at+len(bases)], bases) {
				return &stacks[i], at
			}
		}
	}
	return nil, 0
}
