// Command fmapeak measures the FMA throughput (GFLOP/s) of this machine
// with 1 and 2 goroutines, each running a loop of 12 independent
// accumulators of VFMADD231PS / VFMADD231PD: on YMM registers (AVX2), and
// on ZMM registers (lines ending _zmm) where the CPU has AVX-512F. It is
// the "peak" that the gemm package's RESULTS.md and examples/bench's
// peak_fraction compare against (internal/cpuinfo.PeakGFLOPS).
//
//	go run ./examples/bench/peers/fmapeak
package main

import (
	"flag"
	"fmt"
	"sort"

	"github.com/gradus-ml/gradus/internal/cpuinfo"
)

func main() {
	iters := flag.Int("iters", 20_000_000, "loop iterations per goroutine per repeat")
	reps := flag.Int("reps", 7, "repeats (median reported)")
	flag.Parse()
	type loop struct {
		name string
		bits int
		f64  bool
	}
	var loops []loop
	if cpuinfo.VectorBits() >= 256 {
		loops = append(loops, loop{"f32", 256, false}, loop{"f64", 256, true})
	}
	if cpuinfo.VectorBits() >= 512 {
		loops = append(loops, loop{"f32_zmm", 512, false}, loop{"f64_zmm", 512, true})
	}
	if len(loops) == 0 {
		fmt.Println("fmapeak: no FMA probe for this CPU")
		return
	}
	fmt.Println("# caches:", cpuinfo.Detect())
	for _, threads := range []int{1, 2} {
		for _, k := range loops {
			cpuinfo.PeakGFLOPS(k.bits, k.f64, threads, *iters/10) // warm-up / clock ramp
			var r []float64
			for i := 0; i < *reps; i++ {
				r = append(r, cpuinfo.PeakGFLOPS(k.bits, k.f64, threads, *iters))
			}
			sort.Float64s(r)
			fmt.Printf("fmapeak_%s_t%d gflops %.1f GFLOP/s (max %.1f)\n", k.name, threads, r[len(r)/2], r[len(r)-1])
		}
	}
}
