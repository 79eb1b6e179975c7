package tensor

import (
	"runtime"

	"github.com/gradus-ml/gradus/tensor/internal/gemm"
)

// parallelElemMin is the shortest contiguous run an elementwise kernel
// splits across goroutines, per goroutine. Below it, handing half the run
// to another core and waiting for it costs more than the work saved. The
// halves go to GEMM's polling helpers (parallelRange); with a goroutine
// started per call the threshold had to be 1 << 17 (Add on 10⁵ float32
// took 14 µs serial and 20 µs split on the loaded 2-core machine). On the
// helpers, on the two-core Zen 3 (2026-11-29, three alternated rounds),
// 10⁵-element runs took Add 18-20 → 11-21 µs in float32, Mul 35-40 → 20-31
// µs and Exp 129-134 → 69-82 µs in float64 split at 1 << 15, and 10⁶
// Add/Mul in float32 190-325 → 101-128 µs on the helpers; the training
// workloads of examples/bench measured within their noise.
const parallelElemMin = 1 << 15

// heavyElemMin is parallelElemMin for ops of ten nanoseconds or more per
// element (unaryKernel.heavy): math.Sin on 468² float64 takes 2.1-2.4 ms
// on one goroutine and 1.5-1.7 ms split in two on the loaded 2-core
// machine, and 16,384 elements are ≈ 160 µs of work per goroutine against
// a few µs to start and join it.
const heavyElemMin = 1 << 14

// parallelRange calls fn over [0, n) in contiguous chunks, as
// internal/parallel.Range does with its default worker count (the same
// chunks, multiples of 16 elements apart, so results do not depend on the
// path), but on the calling goroutine and GEMM's polling helpers
// (gemm.ParallelFor) rather than on goroutines started per call, which
// the OS had to wake.
func parallelRange(n, minChunk int, fn func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), n/max(minChunk, 1))
	if p < 2 {
		fn(0, n)
		return
	}
	chunk := (n/p + 15) &^ 15
	tasks := (n + chunk - 1) / chunk
	gemm.ParallelFor(tasks, tasks, func(t int) { fn(t*chunk, min((t+1)*chunk, n)) })
}
