package cpuinfo

import (
	"runtime"
	"sync"
	"time"
)

// PeakGFLOPS measures this machine's fused multiply-add throughput in
// GFLOP/s: threads goroutines, each locked to an OS thread, run iters
// iterations of 48 independent FMAs on vectors of bits bits (256 for
// AVX2, 512 for AVX-512F) in float32, or float64 when f64 is set. It is
// the "peak" that the GEMM's benchmarks report their fraction of. It
// returns 0 where the CPU has no such FMA (or the architecture has no
// probe), so callers can leave the fraction out.
func PeakGFLOPS(bits int, f64 bool, threads, iters int) float64 {
	loop := fmaLoop(bits, f64)
	if loop == nil || threads < 1 || iters < 1 {
		return 0
	}
	lanes := bits / 32
	if f64 {
		lanes = bits / 64
	}
	var wg sync.WaitGroup
	start := time.Now()
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			loop(iters)
		}()
	}
	wg.Wait()
	return float64(threads) * float64(iters) * 48 * float64(lanes) * 2 / time.Since(start).Seconds() / 1e9
}

// VectorBits is the width of the widest FMA vectors the GEMM kernels use
// on this CPU: 512 with AVX-512F, 256 with AVX2 and FMA, 128 for Arm's
// NEON, 0 otherwise.
func VectorBits() int { return vectorBits }
