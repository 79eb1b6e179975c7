package data

import (
	"slices"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// batchBuf is the memory of one full batch: the stacked features, the
// labels and the dataset indices.
type batchBuf struct {
	x      *tensor.Tensor
	labels []float64
	index  []int
	seq    uint64 // when it was last handed out
}

// batchPool keeps a Loader's full-size batch buffers, handed out to
// batches and given back by Loader.Release. It keeps track of at most
// limit buffers that are out: when one more is needed it forgets the one
// handed out longest ago (whose Release then does nothing and which the
// garbage collector takes when the consumer drops it). So a consumer that
// never releases pins at most limit buffers and simply gets a fresh one
// per batch, and one that holds a few batches (gradient accumulation)
// still has the others reused.
type batchPool struct {
	mu    sync.Mutex
	limit int
	seq   uint64
	free  []*batchBuf
	out   map[*tensor.Tensor]*batchBuf
}

// get returns a buffer for n examples of the given dtype and shape; size
// is the loader's batch size (only buffers of that many rows are pooled).
func (p *batchPool) get(dt tensor.DType, n, size int, example []int) *batchBuf {
	if n != size {
		return newBatchBuf(dt, n, example)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	for len(p.free) > 0 {
		b := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		if b.x.DType() == dt && slices.Equal(b.x.Shape()[1:], example) {
			b.seq = p.seq
			p.out[b.x] = b
			return b
		}
		// A buffer of another shape (a dataset whose examples change
		// shape) is dropped.
	}
	if p.out == nil {
		p.out = map[*tensor.Tensor]*batchBuf{}
	}
	if len(p.out) >= p.limit {
		var oldest *batchBuf
		for _, b := range p.out {
			if oldest == nil || b.seq < oldest.seq {
				oldest = b
			}
		}
		delete(p.out, oldest.x)
	}
	b := newBatchBuf(dt, n, example)
	b.seq = p.seq
	p.out[b.x] = b
	return b
}

// put gives back the buffer whose tensor is x, if it is one of p's.
func (p *batchPool) put(x *tensor.Tensor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.out[x]; ok {
		delete(p.out, x)
		p.free = append(p.free, b)
	}
}

func newBatchBuf(dt tensor.DType, n int, example []int) *batchBuf {
	return &batchBuf{
		x:      tensor.New(dt, append([]int{n}, example...)...),
		labels: make([]float64, n),
		index:  make([]int, n),
	}
}

func (b *batchBuf) batch() Batch { return Batch{X: b.x, Labels: b.labels, Index: b.index} }

// gather builds the batch of rows part of the loader's TensorDataset by
// copying the rows straight into the batch buffer.
func (l *Loader) gather(part []int) Batch {
	shape := l.rows.Shape()
	b := l.pool.get(l.rows.DType(), len(part), l.opts.BatchSize, shape[1:])
	row := l.rows.Size() / shape[0]
	if l.rows.DType() == tensor.Float32 {
		gatherRows(b.x.Float32s(), l.rows.Float32s(), part, row)
	} else {
		gatherRows(b.x.Float64s(), l.rows.Float64s(), part, row)
	}
	for i, k := range part {
		b.labels[i] = l.labels[k]
	}
	copy(b.index, part)
	return b.batch()
}

// stack is Collate into a batch buffer: the examples' features, all of one
// shape and dtype, stacked along a new first axis.
func (l *Loader) stack(ex []Example, part []int) Batch {
	first := ex[0].X
	b := l.pool.get(first.DType(), len(ex), l.opts.BatchSize, first.Shape())
	row := first.Size()
	for i, e := range ex {
		if e.X.DType() != first.DType() || !slices.Equal(e.X.Shape(), first.Shape()) {
			tensor.Fail("data.Collate", "example %d of the batch (dataset index %d) is %v of shape %v, the first is %v of shape %v",
				i, part[i], e.X.DType(), e.X.Shape(), first.DType(), first.Shape())
		}
		x := e.X.Contiguous()
		if x.DType() == tensor.Float32 {
			copy(b.x.Float32s()[i*row:(i+1)*row], x.Float32s())
		} else {
			copy(b.x.Float64s()[i*row:(i+1)*row], x.Float64s())
		}
		b.labels[i] = e.Label
	}
	copy(b.index, part)
	return b.batch()
}
