package tensor

import (
	"runtime"
	"sync"
)

// parallelElemMin is the shortest contiguous run an elementwise kernel
// splits across goroutines, per goroutine. Below it, starting a goroutine
// and waiting for it costs more than the work saved. Measured with
// BenchmarkElementwise (GOMAXPROCS 1 against 2) on the 2-core machine while
// other jobs ran: with the vector kernels, Add on 10⁵ float32 takes 14 µs
// serial and 20 µs split, and even 10⁶-element runs gained nothing when the
// second core was busy; the threshold is set so that only the largest
// activations (the CNN's 0.4M–0.8M-element maps) are split, where an idle
// second core roughly halves the time.
const parallelElemMin = 1 << 17

// heavyElemMin is parallelElemMin for ops of ten nanoseconds or more per
// element (unaryKernel.heavy): math.Sin on 468² float64 takes 2.1-2.4 ms
// on one goroutine and 1.5-1.7 ms split in two on the loaded 2-core
// machine, and 16,384 elements are ≈ 160 µs of work per goroutine against
// a few µs to start and join it.
const heavyElemMin = 1 << 14

// splitRun calls fn over [0, n) in contiguous chunks, on up to GOMAXPROCS
// goroutines when n is large enough, and returns when all are done. Every
// element is computed by the same kernel whichever chunk it falls in, so
// the results are bit-identical to a serial run. Chunk bounds are multiples
// of 16 elements so no two goroutines write the same cache line.
func splitRun(n, minChunk int, fn func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n/minChunk)
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
