package graph

import (
	"slices"
	"sort"

	"github.com/gradus-ml/gradus/tensor"
)

// A sum of scatter_slice results whose windows along one axis do not
// overlap is what the reverse sweep makes of a Split (an LSTM's gates):
// each part's cotangent is scattered into zeros of the whole shape and
// the scatters are added, a zeroing and an addition over the whole shape
// per part. Capture replaces such a sum by one scatterSum step, which
// copies each part into its window of one buffer and zeroes only what no
// window covers. The additions give x + 0 for an element of a window,
// which is x except that −0 becomes +0, so scatterSum adds +0 to the
// windows too and the bits stay those of the sum.

// scatterSum writes its inputs into their windows along axis of a buffer
// shaped shape.
type scatterSum struct {
	shape   []int
	axis    int
	starts  []int // each input's first index along axis
	covered bool  // the windows cover the whole axis
	zero32  func(d, x, y []float32)
	zero64  func(d, x, y []float64)
}

func (*scatterSum) Name() string { return "scatter_sum" }

func (o *scatterSum) Forward(g *Graph, in []*tensor.Tensor) *tensor.Tensor {
	dt := in[0].DType()
	var dst *tensor.Tensor
	if o.covered {
		dst = g.AllocUninit(dt, o.shape...)
	} else {
		dst = g.Alloc(dt, o.shape...)
	}
	for i, x := range in {
		s := sliceSpec{o.axis, o.starts[i], o.starts[i] + x.Shape()[o.axis], 1}
		kern.Copy(g.slice(dst, s), x)
	}
	if dt == tensor.Float32 {
		d := kern.Data32(dst)[dst.Offset():][:dst.Size()]
		o.zero32(d, d, nil)
	} else {
		d := kern.Data64(dst)[dst.Offset():][:dst.Size()]
		o.zero64(d, d, nil)
	}
	return dst
}

// mergeScatters replaces each tree of add steps over scatter_slice steps
// with disjoint windows, whose inner values nothing else reads, by one
// scatterSum step where the tree's root ran.
func (p *Program) mergeScatters() {
	n := len(p.steps)
	uses := make([]int, len(p.slots))
	producer := make([]int, len(p.slots))
	for i := range producer {
		producer[i] = -1
	}
	for i, s := range p.steps {
		producer[s.out] = i
		for _, k := range s.in {
			uses[k]++
		}
	}
	for _, k := range p.outs {
		uses[k]++
	}
	gone := make([]bool, n)
	repl := map[int]step{}
	for r := n - 1; r >= 0; r-- {
		if _, ok := p.steps[r].op.(addOp); !ok || gone[r] {
			continue
		}
		shape := p.slots[p.steps[r].out].shape
		var inner, leaves []int // add steps besides r; scatter_slice steps
		ok := true
		queue := slices.Clone(p.steps[r].in)
		for len(queue) > 0 && ok {
			k := queue[0]
			queue = queue[1:]
			j := producer[k]
			ok = j >= 0 && !gone[j] && uses[k] == 1 && slices.Equal(p.slots[k].shape, shape)
			if !ok {
				break
			}
			switch op := p.steps[j].op.(type) {
			case addOp:
				inner = append(inner, j)
				queue = append(queue, p.steps[j].in...)
			case scatterSliceOp:
				ok = op.step == 1 && op.start >= 0 && op.axis >= 0
				leaves = append(leaves, j)
			default:
				ok = false
			}
		}
		if !ok || len(leaves) < 2 {
			continue
		}
		st, ok := p.scatterStep(leaves, shape)
		if !ok {
			continue
		}
		st.out = p.steps[r].out
		repl[r] = st
		for _, j := range append(inner, leaves...) {
			gone[j] = true
			p.slots[p.steps[j].out].kind = slotFused
		}
		p.stats.Fused += len(inner) + len(leaves)
	}
	if len(repl) == 0 {
		return
	}
	steps := p.steps[:0:0]
	for i, s := range p.steps {
		switch {
		case gone[i]:
		case repl[i].op != nil:
			steps = append(steps, repl[i])
		default:
			steps = append(steps, s)
		}
	}
	p.steps = steps
	p.stats.Ops = len(steps)
}

// scatterStep returns the scatterSum step of the scatter_slice steps
// leaves, or false when their axes differ or their windows overlap.
func (p *Program) scatterStep(leaves []int, shape []int) (step, bool) {
	first := p.steps[leaves[0]].op.(scatterSliceOp)
	type win struct{ start, stop, slot int }
	var ws []win
	for _, j := range leaves {
		op := p.steps[j].op.(scatterSliceOp)
		if op.axis != first.axis {
			return step{}, false
		}
		in := p.steps[j].in[0]
		ws = append(ws, win{op.start, op.start + p.slots[in].shape[op.axis], in})
	}
	sort.Slice(ws, func(a, b int) bool { return ws[a].start < ws[b].start })
	end := 0
	covered := ws[0].start == 0
	for i, w := range ws {
		if i > 0 && w.start < ws[i-1].stop {
			return step{}, false
		}
		covered = covered && (i == 0 || w.start == end)
		end = w.stop
	}
	covered = covered && end == shape[first.axis]
	o := &scatterSum{shape: shape, axis: first.axis, covered: covered,
		zero32: kern.Run32("AddScalar", 0), zero64: kern.Run64("AddScalar", 0)}
	var in []int
	for _, w := range ws {
		o.starts = append(o.starts, w.start)
		in = append(in, w.slot)
	}
	return step{op: o, in: in, args: make([]*tensor.Tensor, len(in)), own: -1}, true
}
