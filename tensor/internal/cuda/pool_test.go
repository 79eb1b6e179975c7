package cuda

import (
	"errors"
	"testing"
)

// fakeDevice stands in for the driver's allocator: addresses count up,
// and it runs out of memory beyond limit bytes live.
type fakeDevice struct {
	next, live, limit int
	freed             []uint64
}

var errFakeOOM = errors.New("out of memory")

func (f *fakeDevice) alloc(n int) (uint64, error) {
	if f.live+n > f.limit {
		return 0, errFakeOOM
	}
	f.next += 1 << 30
	f.live += n
	return uint64(f.next), nil
}

func TestPoolRecycles(t *testing.T) {
	f := &fakeDevice{limit: 4<<20 + 2048}
	sizes := map[uint64]int{}
	p := newPool(func(n int) (uint64, error) {
		ptr, err := f.alloc(n)
		sizes[ptr] = n
		return ptr, err
	}, func(ptr uint64) error {
		f.live -= sizes[ptr]
		f.freed = append(f.freed, ptr)
		return nil
	})
	oom := func(err error) bool { return err == errFakeOOM }
	a, err := p.get(1000, oom)
	if err != nil || a.Bytes() != 1024 {
		t.Fatalf("get(1000) = %+v, %v; want a 1024-byte buffer", a, err)
	}
	ptr := a.Ptr()
	p.put(a)
	if p.cached != 1024 || a.Ptr() != 0 {
		t.Errorf("after put: cached %d, released buffer keeps address %#x", p.cached, a.Ptr())
	}
	b, _ := p.get(600, oom) // the same class: recycled
	if b.Ptr() != ptr || p.cached != 0 {
		t.Errorf("get(600) = %#x, want the recycled %#x (cached %d)", b.Ptr(), ptr, p.cached)
	}
	c, _ := p.get(1025, oom) // the next class: new memory
	if c.Ptr() == ptr || c.Bytes() != 1536 {
		t.Errorf("get(1025) = %+v", c)
	}
	// Out of memory with a buffer cached: the cache is freed and the
	// allocation retried.
	p.put(b)
	big, err := p.get(3<<20+1, oom)
	if err != nil || big.Bytes() != 4<<20 {
		t.Fatalf("get(3 MiB + 1) = %+v, %v", big, err)
	}
	if len(f.freed) != 1 || f.freed[0] != ptr || p.cached != 0 {
		t.Errorf("the OOM retry freed %#x (want [%#x]), cached %d", f.freed, ptr, p.cached)
	}
	if _, err := p.get(8<<20, oom); err != errFakeOOM {
		t.Errorf("get beyond the device = %v, want the driver's error", err)
	}
}

func TestSizeClass(t *testing.T) {
	for _, c := range [][2]int{{1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {5<<20 - 3, 5 << 20}} {
		if got := sizeClass(c[0]); got != c[1] {
			t.Errorf("sizeClass(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}
