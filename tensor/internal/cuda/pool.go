package cuda

import "fmt"

// A Buffer is a block of device memory: its address and its capacity in
// bytes (what was asked for, rounded up to the pool's size class), or a
// view into one (Slice).
type Buffer struct {
	ptr  uint64
	size int
	view bool
	head int // bytes of the buffer sliced from before ptr (a view's offset)
}

// Slice returns a view of b starting offsetBytes in, of the remaining
// size. It shares b's memory, is valid while b is, and must never be
// Released (Release panics). A kernel given a view whose start is not a
// multiple of its element size returns an error. Slice panics unless
// 0 ≤ offsetBytes ≤ b.Bytes().
func (b *Buffer) Slice(offsetBytes int) *Buffer {
	if offsetBytes < 0 || offsetBytes > b.size {
		panic(fmt.Sprintf("cuda: Buffer.Slice(%d) of a %d-byte buffer", offsetBytes, b.size))
	}
	return &Buffer{ptr: b.ptr + uint64(offsetBytes), size: b.size - offsetBytes, view: true, head: b.head + offsetBytes}
}

// Ptr returns the buffer's device address (a CUdeviceptr).
func (b *Buffer) Ptr() uint64 { return b.ptr }

// Bytes returns the buffer's capacity in bytes.
func (b *Buffer) Bytes() int { return b.size }

// pool recycles device buffers: a free list per size class, so a training
// loop that asks for the same shapes every step allocates from the driver
// only in its first step. Classes are multiples of 512 bytes up to 1 MiB
// and multiples of 1 MiB above, as in the small and large pools of
// PyTorch's caching allocator (without its block splitting). The pool is
// not safe for concurrent use; the Driver holds its lock around it.
type pool struct {
	free    map[int][]uint64
	cached  int // bytes held in free lists
	alloc   func(bytes int) (uint64, error)
	release func(ptr uint64) error
}

func newPool(alloc func(int) (uint64, error), release func(uint64) error) pool {
	return pool{free: map[int][]uint64{}, alloc: alloc, release: release}
}

// sizeClass rounds a request of n > 0 bytes up to its class.
func sizeClass(n int) int {
	const small, large = 512, 1 << 20
	if n <= large {
		return (n + small - 1) / small * small
	}
	return (n + large - 1) / large * large
}

// get returns a buffer of at least n bytes, recycled when one of its
// class is free. When the driver is out of memory it frees every cached
// buffer and tries once more.
func (p *pool) get(n int, outOfMemory func(error) bool) (*Buffer, error) {
	c := sizeClass(n)
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.cached -= c
		return &Buffer{ptr: ptr, size: c}, nil
	}
	ptr, err := p.alloc(c)
	if err != nil && outOfMemory(err) && p.cached > 0 {
		if terr := p.trim(); terr != nil {
			return nil, terr
		}
		ptr, err = p.alloc(c)
	}
	if err != nil {
		return nil, err
	}
	return &Buffer{ptr: ptr, size: c}, nil
}

// put returns b to its free list; b must not be used afterwards.
func (p *pool) put(b *Buffer) {
	p.free[b.size] = append(p.free[b.size], b.ptr)
	p.cached += b.size
	b.ptr, b.size = 0, 0
}

// trim frees every cached buffer, returning the first error.
func (p *pool) trim() error {
	var first error
	for c, l := range p.free {
		for _, ptr := range l {
			if err := p.release(ptr); err != nil && first == nil {
				first = err
			}
		}
		delete(p.free, c)
	}
	p.cached = 0
	return first
}
