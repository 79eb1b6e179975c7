package data

import (
	"slices"
	"sync"

	"github.com/gradus-ml/gradus/tensor"
)

// batchBuf is the memory of one full batch: the stacked features, the
// stacked targets (nil without targets), the labels and the dataset
// indices.
type batchBuf struct {
	x       *tensor.Tensor
	targets *tensor.Tensor
	labels  []int
	index   []int
	seq     uint64 // when it was last handed out
}

// layout is the dtype and shape of one example's features or target; a nil
// *layout is "no target".
type layout struct {
	dt    tensor.DType
	shape []int
}

func (a *layout) equal(t *tensor.Tensor) bool {
	if a == nil || t == nil {
		return a == nil && t == nil
	}
	return t.DType() == a.dt && slices.Equal(t.Shape()[1:], a.shape)
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

// get returns a buffer for n examples of features x and targets t (nil:
// none); size is the loader's batch size (only buffers of that many rows
// are pooled).
func (p *batchPool) get(n, size int, x, t *layout) *batchBuf {
	if n != size {
		return newBatchBuf(n, x, t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	for len(p.free) > 0 {
		b := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		if x.equal(b.x) && t.equal(b.targets) {
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
	b := newBatchBuf(n, x, t)
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

func newBatchBuf(n int, x, t *layout) *batchBuf {
	b := &batchBuf{
		x:      tensor.New(x.dt, append([]int{n}, x.shape...)...),
		labels: make([]int, n),
		index:  make([]int, n),
	}
	if t != nil {
		b.targets = tensor.New(t.dt, append([]int{n}, t.shape...)...)
	}
	return b
}

func (b *batchBuf) batch() Batch {
	return Batch{X: b.x, Targets: b.targets, Labels: b.labels, Index: b.index}
}

// gather builds the batch of rows part of the loader's TensorDataset by
// copying the rows straight into the batch buffer.
func (l *Loader) gather(part []int) Batch {
	var tl *layout
	if l.targets != nil {
		tl = &layout{l.targets.DType(), l.targets.Shape()[1:]}
	}
	b := l.pool.get(len(part), l.opts.BatchSize, &layout{l.rows.DType(), l.rows.Shape()[1:]}, tl)
	copyRows(b.x, l.rows, part)
	if l.targets != nil {
		copyRows(b.targets, l.targets, part)
	}
	for i, k := range part {
		if l.labels != nil {
			b.labels[i] = l.labels[k]
		} else {
			b.labels[i] = 0
		}
	}
	copy(b.index, part)
	return b.batch()
}

// copyRows copies rows part of the contiguous src into dst.
func copyRows(dst, src *tensor.Tensor, part []int) {
	row := src.Size() / src.Shape()[0]
	if src.DType() == tensor.Float32 {
		gatherRows(dst.Float32s(), src.Float32s(), part, row)
	} else {
		gatherRows(dst.Float64s(), src.Float64s(), part, row)
	}
}

// stack is Collate into a batch buffer: the examples' features, all of one
// shape and dtype, stacked along a new first axis, and their targets
// likewise.
func (l *Loader) stack(ex []Example, part []int) Batch {
	first := ex[0]
	var tl *layout
	if first.Target != nil {
		tl = &layout{first.Target.DType(), first.Target.Shape()}
	}
	b := l.pool.get(len(ex), l.opts.BatchSize, &layout{first.X.DType(), first.X.Shape()}, tl)
	for i, e := range ex {
		if e.X.DType() != first.X.DType() || !slices.Equal(e.X.Shape(), first.X.Shape()) {
			tensor.Fail("data.Collate", "example %d of the batch (dataset index %d) is %v of shape %v, the first is %v of shape %v",
				i, part[i], e.X.DType(), e.X.Shape(), first.X.DType(), first.X.Shape())
		}
		setRow(b.x, i, e.X)
		if (e.Target != nil) != (tl != nil) || (tl != nil && (e.Target.DType() != tl.dt || !slices.Equal(e.Target.Shape(), tl.shape))) {
			tensor.Fail("data.Collate", "the target of example %d of the batch (dataset index %d) does not match the first example's", i, part[i])
		}
		if tl != nil {
			setRow(b.targets, i, e.Target)
		}
		b.labels[i] = e.Label
	}
	copy(b.index, part)
	return b.batch()
}

// setRow copies the tensor v into row i of dst.
func setRow(dst *tensor.Tensor, i int, v *tensor.Tensor) {
	v = v.Contiguous()
	row := v.Size()
	if v.DType() == tensor.Float32 {
		copy(dst.Float32s()[i*row:(i+1)*row], v.Float32s())
	} else {
		copy(dst.Float64s()[i*row:(i+1)*row], v.Float64s())
	}
}
