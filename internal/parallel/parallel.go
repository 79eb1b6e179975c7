// Package parallel splits loops over index ranges across goroutines: the
// fork-join helper of the optimisers' updates and the GP preconditioner.
// The tensor package splits its kernels the same way on GEMM's polling
// helpers instead (tensor's parallelRange, the same chunks), which it can
// reach and this package cannot.
package parallel

import (
	"runtime"
	"sync"
)

// Range calls fn over [0, n) in contiguous chunks [lo, hi), on up to
// workers goroutines (GOMAXPROCS when workers ≤ 0) with each chunk at
// least minChunk long, and returns when every call has returned. With
// fewer than two chunks it calls fn(0, n) on the caller. Inner chunk
// bounds are multiples of 16, so that two goroutines writing float32 or
// float64 elements of one slice never share a 64-byte cache line; the
// first chunk runs on the caller.
//
// fn must compute each index alone (the same result whichever chunk it
// falls in), so that results do not depend on the split.
func Range(n, workers, minChunk int, fn func(lo, hi int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	p := min(workers, n/max(minChunk, 1))
	if p < 2 {
		fn(0, n)
		return
	}
	chunk := (n/p + 15) &^ 15
	var wg sync.WaitGroup
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	fn(0, min(chunk, n))
	wg.Wait()
}
