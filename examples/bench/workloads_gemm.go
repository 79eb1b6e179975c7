package main

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// gemmWorkloads times square matrix products C = A·B through tensor.MatMulTo
// (the destination is reused, as PyTorch's out= and NumPy's out= peers do) at
// n = 256 and 1024 in float32 and float64, reporting 2n³/t in GFLOP/s.
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
					return []Result{{name, "gflops", flops / sec / 1e9, "GFLOP/s"}}
				},
			})
		}
	}
	return ws
}
