package graph

import (
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// The graph's memory: output buffers (a pool that replays last step's
// requests) and arenas for nodes and the small slices ops need. Reset in
// graph.go hands all of it back for the next step.

// Alloc returns a zero-filled contiguous tensor owned by the graph; Reset
// recycles it. Ops use it for their outputs.
func (g *Graph) Alloc(dt tensor.DType, shape ...int) *tensor.Tensor {
	if g.replay != nil {
		return g.replay.alloc(dt, shape, true)
	}
	return g.pool.get(g.device, dt, shape, true)
}

// AllocHost returns a zero-filled contiguous tensor on the CPU for a
// constant written element by element on the host (targets, masks,
// weights built from labels): Alloc's recycled memory on a CPU graph, a
// fresh host tensor on a GPU graph, which Const copies to the device
// when an op first reads it.
func (g *Graph) AllocHost(dt tensor.DType, shape ...int) *tensor.Tensor {
	if g.device == tensor.CPU {
		return g.Alloc(dt, shape...)
	}
	return tensor.New(dt, shape...)
}

// AllocUninit is Alloc without zeroing, for ops that overwrite every
// element.
func (g *Graph) AllocUninit(dt tensor.DType, shape ...int) *tensor.Tensor {
	if g.replay != nil {
		return g.replay.alloc(dt, shape, false)
	}
	return g.pool.get(g.device, dt, shape, false)
}

// AllocInts returns an int slice of length n owned by the graph, with
// unspecified contents; Reset recycles it. Ops use it for index buffers
// (such as max pooling's argmax) that their rules need until Reset.
func (g *Graph) AllocInts(n int) []int { return g.intArena.take(n) }

// Scratch returns a graph that g owns and reuses, for work whose nodes
// need not outlive a computation inside one of g's steps:
// autodiff.Checkpoint runs the segments it rematerialises there and
// Resets it after each, so their intermediate values take memory only
// while they are needed. BufferBytes of g counts the most it held.
func (g *Graph) Scratch() *Graph {
	if g.scratch == nil {
		g.scratch = &Graph{owner: g}
	}
	g.scratch.device = g.device
	return g.scratch
}

// BufferBytes returns the bytes of the output buffers g has handed out
// since its last Reset, plus the most its Scratch graph held at once in
// that time (with the same count for the scratch graph's own scratch).
// A graph recycles its buffers only at Reset, so at the end of a step
// this bounds from above the buffer memory the step needed at its peak.
func (g *Graph) BufferBytes() int64 {
	return g.pool.bytes() + g.scratchPeak
}

// noteScratch records, when a scratch graph is Reset, what it held in its
// owner's peak.
func (g *Graph) noteScratch() {
	if o := g.owner; o != nil {
		o.scratchPeak = max(o.scratchPeak, g.BufferBytes())
	}
}

// bufferPool hands out tensors and takes them all back on recycle.
//
// A training loop makes the same requests in the same order every step, so
// the pool first tries to replay the previous step: the i-th request gets
// the buffer that served the i-th request last time, when its dtype and
// shape match, at the cost of one comparison. When the sequence diverges,
// the rest of last step's buffers go to free lists keyed by dtype and size,
// where any request of that size can take one (as a reshaped view if the
// shape differs).
type bufferPool struct {
	prev  []*tensor.Tensor // last step's buffers in request order
	next  int              // the next entry of prev to replay
	inUse []*tensor.Tensor // this step's buffers in request order
	free  map[uint64][]*tensor.Tensor
}

// poolKey packs dtype and size into one integer, which Go maps hash
// faster than a struct.
func poolKey(dt tensor.DType, size int) uint64 { return uint64(size)<<8 | uint64(dt) }

func (p *bufferPool) get(dev tensor.Device, dt tensor.DType, shape []int, zero bool) *tensor.Tensor {
	var t *tensor.Tensor
	if p.next < len(p.prev) {
		if c := p.prev[p.next]; c.DType() == dt && slices.Equal(c.Shape(), shape) && c.Device() == dev {
			t = c
			p.prev[p.next] = nil
			p.next++
		} else {
			p.spill()
		}
	}
	if t == nil {
		t = p.fromFree(dev, dt, shape)
	}
	if t == nil {
		t = tensor.NewOn(dev, dt, shape...)
	} else if zero {
		t.Fill(0)
	}
	p.inUse = append(p.inUse, t)
	return t
}

// fromFree takes a buffer of the right dtype and size from the free lists,
// or returns nil.
func (p *bufferPool) fromFree(dev tensor.Device, dt tensor.DType, shape []int) *tensor.Tensor {
	k := poolKey(dt, shapeSize(shape))
	list := p.free[k]
	if len(list) == 0 || list[len(list)-1].Device() != dev {
		return nil
	}
	t := list[len(list)-1]
	list[len(list)-1] = nil
	p.free[k] = list[:len(list)-1]
	if !slices.Equal(t.Shape(), shape) {
		t = tensor.Reshape(t, shape...)
	}
	return t
}

// spill moves the buffers of last step that were not replayed to the free
// lists.
func (p *bufferPool) spill() {
	if p.next >= len(p.prev) {
		return
	}
	if p.free == nil {
		p.free = map[uint64][]*tensor.Tensor{}
	}
	for i := len(p.prev) - 1; i >= p.next; i-- {
		t := p.prev[i]
		k := poolKey(t.DType(), t.Size())
		p.free[k] = append(p.free[k], t)
		p.prev[i] = nil
	}
	p.next = len(p.prev)
}

// bytes returns the size of this step's buffers.
func (p *bufferPool) bytes() int64 {
	var n int64
	for _, t := range p.inUse {
		n += int64(t.Size() * t.DType().Size())
	}
	return n
}

// recycle makes this step's buffers the next step's replay list.
func (p *bufferPool) recycle() {
	p.spill()
	clear(p.prev)
	p.prev, p.inUse = p.inUse, p.prev[:0]
	p.next = 0
}

// arena hands out slices carved from large chunks and takes them all back
// on reset, keeping the chunks for the next step.
type arena[T any] struct {
	chunks [][]T
	c, off int // current chunk and the next free offset in it
}

const arenaChunk = 256

// take returns a slice of length and capacity n, zeroed unless the arena
// was rewound rather than reset.
func (a *arena[T]) take(n int) []T {
	for {
		if a.c < len(a.chunks) {
			ch := a.chunks[a.c]
			if a.off+n <= len(ch) {
				s := ch[a.off : a.off+n : a.off+n]
				a.off += n
				return s
			}
			a.c++
			a.off = 0
			continue
		}
		a.chunks = append(a.chunks, make([]T, max(arenaChunk, n)))
	}
}

// reset zeroes the used chunks, so they hold no stale pointers, and rewinds.
func (a *arena[T]) reset() {
	for i := 0; i <= a.c && i < len(a.chunks); i++ {
		clear(a.chunks[i])
	}
	a.c, a.off = 0, 0
}

// rewind is reset without zeroing, for arenas of plain values whose users
// overwrite what they take.
func (a *arena[T]) rewind() { a.c, a.off = 0, 0 }

// cotangents returns its arguments as a slice carved from out's graph's
// arena, so VJP rules can return their per-input cotangents without a heap
// allocation per op. The slice is valid until the graph is Reset.
func cotangents(out *Node, cts ...*Node) []*Node {
	s := out.g.inArena.take(len(cts))
	copy(s, cts)
	return s
}
