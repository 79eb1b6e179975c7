package distributed

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradients computes the gradients of loss with respect to the parameters
// ps (NewDataParallel's, in order) and averages them over the ranks,
// overlapping communication with the backward pass: as the reverse sweep
// finishes each parameter's gradient (the last layers first) it is copied
// into a bucket, and every full bucket is all-reduced on a separate
// goroutine while the sweep computes the earlier layers. The buckets are
// filled in the sweep's order, which is the same on every rank, so the
// collectives match. The result equals nn.Gradients followed by
// AverageGradients; the returned tensors belong to d, not the graph, and
// are reused by the next call (no allocation per step). On an error no
// gradient is returned and the caller must not step.
func (d *DataParallel) Gradients(loss *graph.Node, ps []nn.NamedParam) ([]*tensor.Tensor, error) {
	if len(ps) != len(d.params) {
		return nil, fmt.Errorf("distributed.Gradients: %d parameters, NewDataParallel had %d", len(ps), len(d.params))
	}
	g := loss.Graph()
	if d.grads == nil {
		d.grads = make([]*tensor.Tensor, len(ps))
		for i, p := range d.params {
			d.grads[i] = tensor.ZerosLike(p)
		}
	}
	out := d.grads
	var nodes []*graph.Node
	var where []int
	for i, p := range ps {
		if p.Value != d.params[i] {
			return nil, fmt.Errorf("distributed.Gradients: parameter %d (%q) is not NewDataParallel's", i, p.Name)
		}
		if n := g.Bound(p.Value); n != nil {
			nodes = append(nodes, n)
			where = append(where, i)
		}
	}
	type bucket struct{ idx []int }
	jobs := make(chan bucket, len(ps)+1)
	errc := make(chan error, 1)
	go func() { // the only goroutine calling the communicator while the sweep runs
		var first error
		for b := range jobs {
			if first == nil {
				first = d.reduce(out, b.idx)
			}
		}
		errc <- first
	}()
	var cur []int
	curN := 0
	flush := func() {
		if len(cur) > 0 {
			jobs <- bucket{idx: cur}
			cur, curN = nil, 0
		}
	}
	add := func(i int) {
		n := out[i].Size()
		if len(cur) > 0 && (out[cur[0]].DType() != out[i].DType() || curN+n > d.bucketElems) {
			flush()
		}
		cur = append(cur, i)
		curN += n
	}
	reported := make([]bool, len(ps))
	func() {
		defer func() {
			if r := recover(); r != nil {
				close(jobs)
				<-errc
				panic(r)
			}
		}()
		if len(nodes) > 0 {
			autodiff.GradEach(loss, nodes, func(k int, gr *graph.Node) {
				i := where[k]
				// A copy: the sweep may still read gr's value, and the
				// all-reduce works in place.
				tensor.CopyInto(out[i], gr.Value())
				reported[i] = true
				add(i)
			})
		}
	}()
	for i := range ps { // parameters the loss does not use: zeros, reduced too
		if !reported[i] {
			out[i].Fill(0)
			add(i)
		}
	}
	flush()
	close(jobs)
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("distributed.Gradients: %w", err)
	}
	return out, nil
}

// reduce averages the gradients out[idx...] over the ranks in one
// all-reduce (they share a dtype).
func (d *DataParallel) reduce(out []*tensor.Tensor, idx []int) error {
	gs := make([]*tensor.Tensor, len(idx))
	n := 0
	for k, i := range idx {
		gs[k] = out[i]
		n += out[i].Size()
	}
	scale := 1 / float64(d.comm.Size())
	if gs[0].DType() == tensor.Float32 {
		return reduceBucket(d, gs, n, &d.ovl32, d.comm.AllReduceFloat32, float32(scale))
	}
	return reduceBucket(d, gs, n, &d.ovl64, d.comm.AllReduceFloat64, scale)
}
