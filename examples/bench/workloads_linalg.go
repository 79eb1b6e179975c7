package main

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// linalgWorkloads time the float64 dense factorisations of one random n×n
// matrix (uniform entries in [−1, 1), fixed seed) for each n in sizes: the
// thin SVD (U, s, V), the thin QR (Q, R) and the symmetric
// eigendecomposition (w, V) of (A + Aᵀ)/2. peers/linalg_numpy.py runs NumPy's
// LAPACK (gesdd, geqrf + orgqr, syevd) on the same shapes.
func linalgWorkloads(sizes []int) []workload {
	ops := []struct {
		name string
		run  func(a *tensor.Tensor) error
	}{
		{"svd", func(a *tensor.Tensor) error { _, _, _, err := tensor.SVD(a); return err }},
		{"qr", func(a *tensor.Tensor) error { _, _, err := tensor.QR(a); return err }},
		{"eigh", func(a *tensor.Tensor) error { _, _, err := tensor.Eigh(a); return err }},
	}
	var ws []workload
	for _, n := range sizes {
		for _, op := range ops {
			ws = append(ws, workload{
				name: fmt.Sprintf("%s_f64_n%d", op.name, n),
				setup: func() step {
					a := tensor.NewRNG(3).Uniform(tensor.Float64, -1, 1, n, n)
					if op.name == "eigh" {
						a = tensor.MulScalar(tensor.Add(a, tensor.Transpose(a)), 0.5)
					}
					return func() {
						if err := op.run(a); err != nil {
							panic(err)
						}
					}
				},
				report: func(name string, sec float64) []Result {
					return []Result{{name, "ms_per_op", sec * 1e3, "ms"}}
				},
			})
		}
	}
	return ws
}
