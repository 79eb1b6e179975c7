package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Developer tuning helpers, skipped unless their environment variable is
// set. On a shared, noisy machine the fastest of many runs is a far more
// stable estimate than a mean, so both report best-case GFLOP/s.

// minGflops reports GFLOP/s from the fastest of reps wall-clock runs.
func minGflops(f func(), flops float64, reps int) float64 {
	f()
	best := time.Duration(1 << 62)
	for r := 0; r < reps; r++ {
		t0 := time.Now()
		f()
		best = min(best, time.Since(t0))
	}
	return flops / best.Seconds() / 1e9
}

func parseInts(s string) []int {
	var r []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil {
			r = append(r, v)
		}
	}
	return r
}

// TestTuneMin prints best-case square GEMM GFLOP/s.
// GEMM_TUNEMIN="sizes;threads;reps", e.g. "128,256,1024;2;400".
func TestTuneMin(t *testing.T) {
	spec := os.Getenv("GEMM_TUNEMIN")
	if spec == "" {
		t.Skip("set GEMM_TUNEMIN to run")
	}
	parts := strings.Split(spec, ";")
	require3(t, parts)
	th, _ := strconv.Atoi(parts[1])
	reps, _ := strconv.Atoi(parts[2])
	prev := SetThreads(th)
	defer SetThreads(prev)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range parseInts(parts[0]) {
		xd, yd, zd := randSlice[float64](n*n, rng), randSlice[float64](n*n, rng), make([]float64, n*n)
		xs, ys, zs := randSlice[float32](n*n, rng), randSlice[float32](n*n, rng), make([]float32, n*n)
		r := reps
		if n >= 512 {
			r = max(8, reps/50)
		}
		fl := 2 * float64(n) * float64(n) * float64(n)
		gs := minGflops(func() { Sgemm(false, false, n, n, n, 1, xs, n, ys, n, 0, zs, n) }, fl, r)
		gd := minGflops(func() { Dgemm(false, false, n, n, n, 1, xd, n, yd, n, 0, zd, n) }, fl, r)
		fmt.Printf("threads=%d n=%d f32 %.1f f64 %.1f\n", th, n, gs, gd)
	}
}

// TestTuneBlocks sweeps the kc/mc cache blocking of the kernels this CPU
// runs (the widest family), single-threaded. GEMM_TUNE="sizes;kcs;mcs;s|d".
func TestTuneBlocks(t *testing.T) {
	spec := os.Getenv("GEMM_TUNE")
	if spec == "" {
		t.Skip("set GEMM_TUNE to run")
	}
	parts := strings.Split(spec, ";")
	if len(parts) < 4 {
		t.Fatal("GEMM_TUNE needs 4 fields")
	}
	prev := SetThreads(1)
	defer SetThreads(prev)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range parseInts(parts[0]) {
		fl := 2 * float64(n) * float64(n) * float64(n)
		reps := max(8, int(4e9/fl))
		xd, yd, zd := randSlice[float64](n*n, rng), randSlice[float64](n*n, rng), make([]float64, n*n)
		xs, ys, zs := randSlice[float32](n*n, rng), randSlice[float32](n*n, rng), make([]float32, n*n)
		for _, kc := range parseInts(parts[1]) {
			for _, mc := range parseInts(parts[2]) {
				var g float64
				if parts[3] == "d" {
					pd := pick(math.MaxInt, portableParamsD, asmParamsD, wideParamsD)
					old := *pd
					pd.kc, pd.mc = kc, mc
					g = minGflops(func() { Dgemm(false, false, n, n, n, 1, xd, n, yd, n, 0, zd, n) }, fl, reps)
					*pd = old
				} else {
					ps := pick(math.MaxInt, portableParamsS, asmParamsS, wideParamsS)
					old := *ps
					ps.kc, ps.mc = kc, mc
					g = minGflops(func() { Sgemm(false, false, n, n, n, 1, xs, n, ys, n, 0, zs, n) }, fl, reps)
					*ps = old
				}
				fmt.Printf("%s n=%d kc=%d mc=%d: %.1f GFLOP/s\n", parts[3], n, kc, mc, g)
			}
		}
	}
}

func require3(t *testing.T, parts []string) {
	if len(parts) < 3 {
		t.Fatal("GEMM_TUNEMIN needs 3 fields")
	}
}

// TestPeerStyle measures square GEMMs exactly like the NumPy/PyTorch peer
// scripts in examples/bench/peers (C = A·B, inner loop of ~20 ms, 3 warm-up
// loops, median of 15) and prints the same line format, so the numbers can
// be compared directly. GEMM_PEERSTYLE="128,256,1024"; GEMM_PEERTHREADS
// overrides the thread count.
func TestPeerStyle(t *testing.T) {
	spec := os.Getenv("GEMM_PEERSTYLE")
	if spec == "" {
		t.Skip("set GEMM_PEERSTYLE to run")
	}
	if th, err := strconv.Atoi(os.Getenv("GEMM_PEERTHREADS")); err == nil {
		defer SetThreads(SetThreads(th))
	}
	rng := rand.New(rand.NewPCG(0, 0))
	measure := func(f func(), flops float64) float64 {
		t0 := time.Now()
		f()
		one := max(time.Since(t0).Seconds(), 1e-7)
		inner := max(1, int(0.02/one))
		for i := 0; i < 3*inner; i++ {
			f()
		}
		res := make([]float64, 15)
		for r := range res {
			t0 := time.Now()
			for i := 0; i < inner; i++ {
				f()
			}
			res[r] = flops * float64(inner) / time.Since(t0).Seconds() / 1e9
		}
		slices.Sort(res)
		return res[len(res)/2]
	}
	dts := []string{"f32", "f64"}
	if d := os.Getenv("GEMM_PEERDTYPE"); d != "" {
		dts = []string{d}
	}
	for _, dt := range dts {
		for _, n := range parseInts(spec) {
			fl := 2 * float64(n) * float64(n) * float64(n)
			var g float64
			if dt == "f32" {
				x, y, z := randSlice[float32](n*n, rng), randSlice[float32](n*n, rng), make([]float32, n*n)
				g = measure(func() { Sgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n) }, fl)
			} else {
				x, y, z := randSlice[float64](n*n, rng), randSlice[float64](n*n, rng), make([]float64, n*n)
				g = measure(func() { Dgemm(false, false, n, n, n, 1, x, n, y, n, 0, z, n) }, fl)
			}
			fmt.Printf("gemm_%s_n%d gflops %.1f GFLOP/s\n", dt, n, g)
		}
	}
}

// TestTunePortable prints best-case GFLOP/s of the pure-Go kernel.
// GEMM_TUNEPORT="sizes".
func TestTunePortable(t *testing.T) {
	spec := os.Getenv("GEMM_TUNEPORT")
	if spec == "" {
		t.Skip("set GEMM_TUNEPORT to run")
	}
	defer UsePortable(UsePortable(true))
	prev := SetThreads(1)
	defer SetThreads(prev)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range parseInts(spec) {
		xd, yd, zd := randSlice[float64](n*n, rng), randSlice[float64](n*n, rng), make([]float64, n*n)
		xs, ys, zs := randSlice[float32](n*n, rng), randSlice[float32](n*n, rng), make([]float32, n*n)
		fl := 2 * float64(n) * float64(n) * float64(n)
		gs := minGflops(func() { Sgemm(false, false, n, n, n, 1, xs, n, ys, n, 0, zs, n) }, fl, 10)
		gd := minGflops(func() { Dgemm(false, false, n, n, n, 1, xd, n, yd, n, 0, zd, n) }, fl, 10)
		fmt.Printf("portable n=%d f32 %.1f f64 %.1f\n", n, gs, gd)
	}
}
