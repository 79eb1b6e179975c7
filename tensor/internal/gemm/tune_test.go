package gemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// cpuGflops measures single-threaded GFLOP/s per thread-CPU-second (robust
// against a loaded machine); best of reps.
func cpuGflops(f func(), flops float64, reps int) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
	best := 0.0
	for r := 0; r < reps; r++ {
		n := 0
		t0 := threadCPU()
		for threadCPU()-t0 < 20*time.Millisecond {
			f()
			n++
		}
		g := flops * float64(n) / (threadCPU() - t0).Seconds() / 1e9
		best = max(best, g)
	}
	return best
}

// TestTune prints CPU-time GFLOP/s; GEMM_TUNE="sizes;kcs;mcs;dtype".
func TestTune(t *testing.T) {
	spec := os.Getenv("GEMM_TUNE")
	if spec == "" {
		t.Skip()
	}
	parts := strings.Split(spec, ";")
	ints := func(s string) []int {
		var r []int
		for _, f := range strings.Split(s, ",") {
			v, _ := strconv.Atoi(f)
			r = append(r, v)
		}
		return r
	}
	sizes, kcs, mcs, dt := ints(parts[0]), ints(parts[1]), ints(parts[2]), parts[3]
	tr := len(parts) > 4 && parts[4] == "t"
	prev := SetThreads(1)
	defer SetThreads(prev)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range sizes {
		xd, yd, zd := randSlice[float64](n*n, rng), randSlice[float64](n*n, rng), make([]float64, n*n)
		xs, ys, zs := randSlice[float32](n*n, rng), randSlice[float32](n*n, rng), make([]float32, n*n)
		for _, kc := range kcs {
			for _, mc := range mcs {
				var g float64
				if dt == "d" {
					old := *asmParamsD
					asmParamsD.kc, asmParamsD.mc = kc, mc
					g = cpuGflops(func() { Dgemm(tr, tr, n, n, n, 1, xd, n, yd, n, 0, zd, n) }, 2*float64(n*n*n), 5)
					*asmParamsD = old
				} else {
					old := *asmParamsS
					asmParamsS.kc, asmParamsS.mc = kc, mc
					g = cpuGflops(func() { Sgemm(tr, tr, n, n, n, 1, xs, n, ys, n, 0, zs, n) }, 2*float64(n*n*n), 5)
					*asmParamsS = old
				}
				fmt.Printf("%s n=%d kc=%d mc=%d: %.1f GFLOP/s\n", dt, n, kc, mc, g)
			}
		}
	}
}
