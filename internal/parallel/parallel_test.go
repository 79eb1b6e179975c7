package parallel

import (
	"runtime"
	"sync"
	"testing"
)

// TestRangeCoversOnce checks that every index is visited exactly once,
// that inner bounds are multiples of 16, and that small ranges stay on one
// call, for several sizes, worker counts and minimum chunks.
func TestRangeCoversOnce(t *testing.T) {
	for _, c := range []struct{ n, workers, minChunk, wantCalls int }{
		{0, 4, 1, 1},
		{10, 4, 16, 1},     // n < 2·minChunk
		{100, 1, 1, 1},     // one worker
		{1000, 2, 100, 2},  // chunk 512: [0,512) [512,1000)
		{1000, 4, 100, 4},  // chunk 256
		{1000, 3, 400, 2},  // 1000/400 = 2 chunks
		{33, 8, 1, 3},      // chunk 16: [0,16) [16,32) [32,33)
		{4096, 0, 4096, 1}, // workers ≤ 0 takes GOMAXPROCS; one chunk fits
	} {
		seen := make([]int, c.n)
		var mu sync.Mutex
		calls := 0
		Range(c.n, c.workers, c.minChunk, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if lo%16 != 0 {
				t.Errorf("n=%d: chunk starts at %d, not a multiple of 16", c.n, lo)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d workers=%d: index %d visited %d times", c.n, c.workers, i, s)
			}
		}
		if calls != c.wantCalls {
			t.Errorf("n=%d workers=%d minChunk=%d: %d calls, want %d", c.n, c.workers, c.minChunk, calls, c.wantCalls)
		}
	}
}

// TestRangeDefaultWorkers checks that workers ≤ 0 means GOMAXPROCS.
func TestRangeDefaultWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var mu sync.Mutex
	calls := 0
	Range(3*1024, 0, 16, func(lo, hi int) {
		mu.Lock()
		calls++
		mu.Unlock()
	})
	if calls != 3 {
		t.Errorf("%d calls with GOMAXPROCS 3, want 3", calls)
	}
}
