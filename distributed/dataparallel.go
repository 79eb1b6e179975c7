package distributed

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// DefaultBucketElems is the number of gradient elements DataParallel packs
// into one all-reduce (1 Mi elements: 4 MiB of float32), large enough that
// per-call latency is small against the transfer and small enough to keep
// the staging buffer modest. Larger gradients are reduced on their own.
const DefaultBucketElems = 1 << 20

// DataParallel keeps a model's parameters identical on every rank of a
// communicator: NewDataParallel broadcasts rank 0's parameters, and
// AverageGradients replaces each rank's gradients by the mean over ranks,
// so that an optimiser step taken with them is the same step on every rank.
// With each rank's loss the mean over an equal share of the global batch,
// the averaged gradient is the gradient of the global batch's mean loss.
type DataParallel struct {
	comm        Comm
	params      []*tensor.Tensor
	bucketElems int
	buf32       []float32
	buf64       []float64
	ovl32       []float32 // Gradients' staging buffers (its communicating goroutine's own)
	ovl64       []float64
	grads       []*tensor.Tensor // Gradients' results, reused across calls
}

// NewDataParallel broadcasts the parameters from rank 0 to every rank, in
// place, and returns the helper that averages their gradients. Every rank
// must pass parameters of the same shapes and dtypes in the same order;
// they must be contiguous float32 or float64 tensors.
func NewDataParallel(c Comm, params []*tensor.Tensor) (*DataParallel, error) {
	if c == nil {
		return nil, fmt.Errorf("distributed.NewDataParallel: nil communicator")
	}
	for i, p := range params {
		if p == nil || !p.IsContiguous() {
			return nil, fmt.Errorf("distributed.NewDataParallel: parameter %d is nil or not contiguous", i)
		}
	}
	d := &DataParallel{comm: c, params: params, bucketElems: DefaultBucketElems}
	for i, p := range params {
		var err error
		if p.DType() == tensor.Float32 {
			err = c.BroadcastFloat32(p.Float32s(), 0)
		} else {
			err = c.BroadcastFloat64(p.Float64s(), 0)
		}
		if err != nil {
			return nil, fmt.Errorf("distributed.NewDataParallel: parameter %d %v: %w", i, tensor.FormatShape(p.Shape()), err)
		}
	}
	return d, nil
}

// SetBucketElems sets how many elements one all-reduce carries (at least
// 1); it returns d.
func (d *DataParallel) SetBucketElems(n int) *DataParallel {
	d.bucketElems = max(1, n)
	return d
}

// AverageGradients replaces grads (one per parameter, in NewDataParallel's
// order) by their mean over the ranks. Consecutive gradients of one dtype
// are packed into buckets of up to the bucket size and reduced together;
// non-contiguous gradients are reduced through the bucket too, and written
// back in place. On an error the gradients may be partly reduced: the
// caller must not step.
func (d *DataParallel) AverageGradients(grads []*tensor.Tensor) error {
	if len(grads) != len(d.params) {
		return fmt.Errorf("distributed.AverageGradients: %d gradients for %d parameters", len(grads), len(d.params))
	}
	for i, g := range grads {
		p := d.params[i]
		if g == nil || g.DType() != p.DType() || g.Size() != p.Size() {
			return fmt.Errorf("distributed.AverageGradients: gradient %d does not match its parameter %v %v", i, tensor.FormatShape(p.Shape()), p.DType())
		}
	}
	scale := 1 / float64(d.comm.Size())
	for start := 0; start < len(grads); {
		// One bucket: consecutive gradients of one dtype up to the size.
		dt, n, end := grads[start].DType(), grads[start].Size(), start+1
		for end < len(grads) && grads[end].DType() == dt && n+grads[end].Size() <= d.bucketElems {
			n += grads[end].Size()
			end++
		}
		var err error
		if dt == tensor.Float32 {
			err = reduceBucket(d, grads[start:end], n, &d.buf32, d.comm.AllReduceFloat32, float32(scale))
		} else {
			err = reduceBucket(d, grads[start:end], n, &d.buf64, d.comm.AllReduceFloat64, scale)
		}
		if err != nil {
			return fmt.Errorf("distributed.AverageGradients: gradients %d…%d: %w", start, end-1, err)
		}
		start = end
	}
	return nil
}

// reduceBucket packs gs (n elements in all) into the staging buffer,
// all-reduces it, and writes the scaled sums back into gs.
func reduceBucket[T float32 | float64](d *DataParallel, gs []*tensor.Tensor, n int, buf *[]T,
	allReduce func([]T) error, scale T) error {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	b := (*buf)[:n]
	off := 0
	for _, g := range gs {
		copy(b[off:], values[T](g))
		off += g.Size()
	}
	if err := allReduce(b); err != nil {
		return err
	}
	for i := range b {
		b[i] *= scale
	}
	off = 0
	for _, g := range gs {
		v := b[off : off+g.Size()]
		if g.IsContiguous() {
			copy(values[T](g), v)
		} else {
			tensor.CopyInto(g, tensor.FromValues(g.DType(), widen(v), g.Shape()...))
		}
		off += g.Size()
	}
	return nil
}

// values returns g's elements in row-major order: its storage when
// contiguous, a copy otherwise.
func values[T float32 | float64](g *tensor.Tensor) []T {
	if !g.IsContiguous() {
		g = g.Contiguous()
	}
	var z T
	if _, ok := any(z).(float32); ok {
		return any(g.Float32s()).([]T)
	}
	return any(g.Float64s()).([]T)
}

func widen[T float32 | float64](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// ShardRange returns the half-open range [lo, hi) of a batch of n examples
// that rank takes out of size ranks: contiguous, in rank order, with sizes
// differing by at most one (the first n mod size ranks take one more). It
// panics with a *tensor.Error unless size ≥ 1, 0 ≤ rank < size and n ≥ 0.
func ShardRange(n, rank, size int) (lo, hi int) {
	switch {
	case size < 1:
		tensor.Fail("distributed.ShardRange", "size %d: there must be at least one rank", size)
	case rank < 0 || rank >= size:
		tensor.Fail("distributed.ShardRange", "rank %d is outside 0 … %d", rank, size-1)
	case n < 0:
		tensor.Fail("distributed.ShardRange", "%d examples: the count must not be negative", n)
	}
	q, r := n/size, n%size
	lo = rank*q + min(rank, r)
	hi = lo + q
	if rank < r {
		hi++
	}
	return lo, hi
}
