package main

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/gradus-ml/gradus/internal/cpuinfo"

	"github.com/gradus-ml/gradus/tensor"
)

// gemmWorkloads times square matrix products C = A·B through tensor.MatMulTo
// (the destination is reused, as PyTorch's out= and NumPy's out= peers do) at
// n = 256 and 1024 in float32 and float64, reporting 2n³/t in GFLOP/s and
// its fraction of the FMA peak measured right after the timed repetitions
// (peakGFLOPS), so that a loaded machine lowers both alike.
func gemmWorkloads() []workload {
	var ws []workload
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, n := range []int{1024, 256} {
			suffix := "f32"
			if dt == tensor.Float64 {
				suffix = "f64"
			}
			flops := 2 * float64(n) * float64(n) * float64(n)
			ws = append(ws, workload{
				name: fmt.Sprintf("gemm_%s_n%d", suffix, n),
				setup: func() step {
					rng := tensor.NewRNG(1)
					a := rng.Normal(dt, 0, 1, n, n)
					b := rng.Normal(dt, 0, 1, n, n)
					c := tensor.Zeros(dt, n, n)
					return func() { tensor.MatMulTo(c, a, b) }
				},
				report: func(name string, sec float64) []Result {
					g := flops / sec / 1e9
					rs := []Result{{name, "gflops", g, "GFLOP/s"}}
					if peak := peakGFLOPS(dt == tensor.Float64); peak > 0 {
						rs = append(rs, Result{name, "peak_fraction", g / peak, "1"})
					}
					return rs
				},
			})
		}
	}
	return ws
}

// peakGFLOPS is the median of three probes of the FMA throughput of the
// GEMM kernels' vector width over GOMAXPROCS threads (about 20 ms each at
// 4 GHz); 0 where there is no probe for this CPU.
func peakGFLOPS(f64 bool) float64 {
	bits, threads := cpuinfo.VectorBits(), runtime.GOMAXPROCS(0)
	const iters = 1_000_000 // 48 FMAs each: ~12 ms at 2 FMAs per cycle and 4 GHz
	ps := []float64{cpuinfo.PeakGFLOPS(bits, f64, threads, iters), cpuinfo.PeakGFLOPS(bits, f64, threads, iters), cpuinfo.PeakGFLOPS(bits, f64, threads, iters)}
	slices.Sort(ps)
	return ps[1]
}
