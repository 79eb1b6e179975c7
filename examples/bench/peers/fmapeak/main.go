//go:build amd64

// Command fmapeak measures the FMA throughput (GFLOP/s) of this machine
// with 1 and 2 goroutines, each running a loop of 12 independent
// accumulators of VFMADD231PS / VFMADD231PD: on YMM registers (AVX2), and
// on ZMM registers (lines ending _zmm) where the CPU has AVX-512F. It is the "peak" that the gemm
// package's RESULTS.md compares against.
//
//	go run ./examples/bench/peers/fmapeak
package main

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/cpu"
)

func fmaLoopPS(n int)
func fmaLoopPD(n int)
func fmaLoopPS512(n int)
func fmaLoopPD512(n int)

func measure(f func(int), lanes, threads, iters int) float64 {
	var wg sync.WaitGroup
	start := time.Now()
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			f(iters)
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	return float64(threads) * float64(iters) * 48 * float64(lanes) * 2 / el / 1e9
}

func main() {
	iters := flag.Int("iters", 20_000_000, "loop iterations per goroutine per repeat")
	reps := flag.Int("reps", 7, "repeats (median reported)")
	flag.Parse()
	type loop struct {
		name  string
		f     func(int)
		lanes int
	}
	loops := []loop{{"f32", fmaLoopPS, 8}, {"f64", fmaLoopPD, 4}}
	if cpu.X86.HasAVX512F {
		loops = append(loops, loop{"f32_zmm", fmaLoopPS512, 16}, loop{"f64_zmm", fmaLoopPD512, 8})
	}
	for _, threads := range []int{1, 2} {
		for _, k := range loops {
			measure(k.f, k.lanes, threads, *iters/10) // warm-up / clock ramp
			var r []float64
			for i := 0; i < *reps; i++ {
				r = append(r, measure(k.f, k.lanes, threads, *iters))
			}
			sort.Float64s(r)
			fmt.Printf("fmapeak_%s_t%d gflops %.1f GFLOP/s (max %.1f)\n", k.name, threads, r[len(r)/2], r[len(r)-1])
		}
	}
}
