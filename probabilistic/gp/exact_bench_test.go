package gp

import (
	"fmt"
	"testing"
	"time"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// BenchmarkLMLGrad evaluates the log marginal likelihood of an RBF + noise
// model (d = 3, float64) and its gradient with respect to the three
// log-hyperparameters (lengthscale, variance, noise): one
// objective evaluation of a fit. ms/eval is reported for comparison with
// the peers' GP workload.
func BenchmarkLMLGrad(b *testing.B) {
	for _, n := range []int{500, 1000, 2000} {
		b.Run(fmt.Sprintf("n%d", n), func(b *testing.B) {
			rng := tensor.NewRNG(1)
			x := rng.Normal(tensor.Float64, 0, 1, n, 3)
			y := rng.Normal(tensor.Float64, 0, 1, n)
			m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Noise: 0.1})
			if err != nil {
				b.Fatal(err)
			}
			ps := m.Hyperparams()
			for _, p := range ps {
				p.SetBijector(probabilistic.Exp{}) // log-hyperparameters, as the peers' workload
			}
			g := graph.New()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				g.Reset()
				lml, err := m.LogMarginalLikelihood(g)
				if err != nil {
					b.Fatal(err)
				}
				xs := make([]*graph.Node, len(ps))
				for j, p := range ps {
					xs[j] = p.RawNode(g)
				}
				autodiff.Grad(lml, xs...)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/eval")
		})
	}
}

// BenchmarkLMLGradCG is BenchmarkLMLGrad with CG inference (16 probes, a
// rank-32 preconditioner, tolerance 1e-3), at sizes where the exact GP's
// O(n³) time and O(n²) memory start to dominate; compare ms/eval and B/op
// with BenchmarkLMLGrad/n2000 measured in the same run.
func BenchmarkLMLGradCG(b *testing.B) {
	for _, n := range []int{2000, 5000, 10000} {
		b.Run(fmt.Sprintf("n%d", n), func(b *testing.B) {
			rng := tensor.NewRNG(1)
			x := rng.Normal(tensor.Float64, 0, 1, n, 3)
			y := rng.Normal(tensor.Float64, 0, 1, n)
			m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(1), 1), Noise: 0.1, Inference: CG, CG: CGOptions{Tol: 1e-3}})
			if err != nil {
				b.Fatal(err)
			}
			ps := m.Hyperparams()
			g := graph.New()
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				g.Reset()
				lml, err := m.LogMarginalLikelihood(g)
				if err != nil {
					b.Fatal(err)
				}
				xs := make([]*graph.Node, len(ps))
				for j, p := range ps {
					xs[j] = p.RawNode(g)
				}
				autodiff.Grad(lml, xs...)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/eval")
			b.ReportMetric(float64(m.LastCG().Iterations), "cg-iters")
		})
	}
}

// BenchmarkCGKernelProduct times one matrix-free product K̂·V with 17
// columns (y and 16 probes, one CG iteration of a CG evaluation) of an ARD
// RBF kernel in 3-D, in float64 tiles and in float32 ones
// (CGOptions.Float32), and reports ns per kernel entry and GFLOP/s of the
// product's 2·17 flops per entry; B/op shows that no n × n matrix is
// allocated.
func BenchmarkCGKernelProduct(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		for _, f32 := range []bool{false, true} {
			name := fmt.Sprintf("n%d/f64", n)
			if f32 {
				name = fmt.Sprintf("n%d/f32", n)
			}
			b.Run(name, func(b *testing.B) { benchKernelProduct(b, n, f32) })
		}
	}
}

func benchKernelProduct(b *testing.B, n int, f32 bool) {
	{
		{
			rng := tensor.NewRNG(1)
			x := rng.Uniform(tensor.Float64, -2, 2, n, 3)
			op, err := newKernelOp("bench", kernel.NewScale(kernel.NewRBF(1, 1, 1), 1), x.Values(), n, 3, kernel.NewHyperparam("noise", 0.1), 0)
			if err != nil {
				b.Fatal(err)
			}
			if f32 {
				if err := op.useFloat32("bench"); err != nil {
					b.Fatal(err)
				}
			}
			v := rng.Normal(tensor.Float64, 0, 1, n, 17).Float64s()
			dst := make([]float64, n*17)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				op.MatMul(dst, v, 17)
			}
			el := time.Since(start)
			b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/product")
			b.ReportMetric(float64(el.Nanoseconds())/float64(b.N)/float64(n)/float64(n), "ns/entry")
			b.ReportMetric(2*17*float64(n)*float64(n)*float64(b.N)/el.Seconds()/1e9, "GFLOP/s")
		}
	}
}

// BenchmarkCGGradientPass times the gradient pass of one CG evaluation,
// Σᵢ aᵢᵀ(∂K̂/∂θ)bᵢ for 17 columns and every hyperparameter of an ARD RBF
// kernel in 3-D, in float64 and in float32 tiles, in ns per kernel entry:
// compare with BenchmarkCGKernelProduct, one CG iteration.
func BenchmarkCGGradientPass(b *testing.B) {
	const n, t = 20000, 17
	for _, f32 := range []bool{false, true} {
		name := map[bool]string{false: "f64", true: "f32"}[f32]
		b.Run(name, func(b *testing.B) {
			rng := tensor.NewRNG(1)
			x := rng.Uniform(tensor.Float64, -2, 2, n, 3)
			op, err := newKernelOp("bench", kernel.NewScale(kernel.NewRBF(1, 1, 1), 1), x.Values(), n, 3, kernel.NewHyperparam("noise", 0.1), 0)
			if err != nil {
				b.Fatal(err)
			}
			if f32 {
				if err := op.useFloat32("bench"); err != nil {
					b.Fatal(err)
				}
			}
			a := rng.Normal(tensor.Float64, 0, 1, n, t).Float64s()
			v := rng.Normal(tensor.Float64, 0, 1, n, t).Float64s()
			b.ResetTimer()
			for b.Loop() {
				if _, err := op.gradTerms(a, v, t); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n)/float64(n), "ns/entry")
		})
	}
}
