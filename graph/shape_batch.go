package graph

// Batching rules of the shape ops (shape.go, gather.go), kept apart only
// because shape.go is long. Ops that name an axis keep the batch axis
// where it is and shift their own axis past it, so they stay views;
// those that change the rank move the batch axis to the front first.

func (o reshapeOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return Reshape(b.toFront(in[0], axes[0]), insertAxis(o.shape, 0, b.size)...), 0
}

func (o permuteOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	ax := axes[0]
	perm := make([]int, 0, len(o.perm)+1)
	for _, p := range o.perm {
		perm = append(perm, shiftAxis(p, ax))
	}
	perm = append(perm[:ax], append([]int{ax}, perm[ax:]...)...)
	return Permute(in[0], perm...), ax
}

func (o broadcastToOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	x := b.toFront(in[0], axes[0])
	lead := len(o.shape) - (x.Dim() - 1)
	shape := append(make([]int, 0, len(o.shape)+1), b.size)
	for range lead {
		shape = append(shape, 1)
	}
	x = Reshape(x, append(shape, x.Shape()[1:]...)...)
	return BroadcastTo(x, insertAxis(o.shape, 0, b.size)...), 0
}

// The axes sum_to removes lead the example's shape; the batch axis, at the
// front, must not be among them.
func (o sumToOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	x := b.toFront(in[0], axes[0])
	if lead := x.Dim() - 1 - len(o.shape); lead > 0 {
		sum := make([]int, lead)
		n := 1
		for i := range sum {
			sum[i] = i + 1
			n *= x.Shape()[i+1]
		}
		if n == 1 {
			// Axes of size 1 (a linear layer's bias gradient for one row
			// per example): dropping them is a view, not a reduction.
			x = Reshape(x, append([]int{b.size}, x.Shape()[1+lead:]...)...)
		} else {
			x = Sum(x, sum, false)
		}
	}
	return SumTo(x, insertAxis(o.shape, 0, b.size)...), 0
}

func (o sliceOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	s := o.sliceSpec
	s.axis = shiftAxis(s.axis, axes[0])
	return Apply(sliceOp{s}, in[0]), axes[0]
}

func (o scatterSliceOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	s := o.sliceSpec
	s.axis = shiftAxis(s.axis, axes[0])
	return Apply(scatterSliceOp{s, insertAxis(o.shape, axes[0], b.size)}, in[0]), axes[0]
}

// Unbatched operands of a concatenation are copied for every example.
func (o concatOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	xs := make([]*Node, len(in))
	for i, x := range in {
		xs[i] = b.toFront(x, axes[i])
	}
	return Apply(concatOp{o.axis + 1}, xs...), 0
}

func (o indexSelectOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return Apply(indexSelectOp{shiftAxis(o.axis, axes[0]), o.idx}, in[0]), axes[0]
}

func (o scatterAddOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	return Apply(scatterAddOp{shiftAxis(o.axis, axes[0]), o.idx, o.size}, in[0]), axes[0]
}

func (o padOp) Batch(b *Batching, in []*Node, axes []int) (*Node, int) {
	ax := axes[0]
	pads := append(append(append(make([][2]int, 0, len(o.pads)+1), o.pads[:ax]...), [2]int{}), o.pads[ax:]...)
	return Apply(padOp{pads, o.value}, in[0]), ax
}
