//go:build linux && (amd64 || arm64)

package gpucheck_test

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// TestGPMarginalLikelihoodOnGPU writes an exact GP's negative log marginal
// likelihood (Rasmussen and Williams 2006, eq. 2.30) with graph ops, an RBF
// kernel whose log lengthscale, log signal variance and log noise are GPU
// variables, and evaluates it and its gradient on the GPU and the CPU:
//
//	½ yᵀ(K + σ²I)⁻¹y + ½ log|K + σ²I| + n/2 log 2π
//
// through the Cholesky factor, a Cholesky solve and the log-determinant
// of the factor, in float64 to 1e-9 and float32 to 1e-4.
func TestGPMarginalLikelihoodOnGPU(t *testing.T) {
	dev := device(t)
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		const n = 40
		x := tensor.NewRNG(51).Uniform(dt, -3, 3, n, 2)
		xv := x.Values()
		yv := make([]float64, n)
		for i := range yv {
			yv[i] = math.Sin(xv[2*i]) + 0.5*math.Cos(2*xv[2*i+1])
		}
		y := tensor.FromValues(dt, yv, n, 1)
		hyper := tensor.FromValues(dt, []float64{0, 0.2, -2}, 3) // log ℓ, log s², log σ²
		nll := func(d tensor.Device) (*tensor.Tensor, *tensor.Tensor) {
			g := graph.New()
			h := g.Var(hyper.To(d))
			xn, yn := g.Const(x.To(d)), g.Const(y.To(d))
			logl := graph.Slice(h, 0, 0, 1, 1)
			logs := graph.Slice(h, 0, 1, 2, 1)
			logn := graph.Slice(h, 0, 2, 3, 1)
			r2 := graph.SqDist(xn, xn)
			k := graph.Mul(graph.Exp(logs), graph.Exp(graph.Mul(r2, graph.MulScalar(graph.Exp(graph.MulScalar(logl, -2)), -0.5))))
			noise := graph.Mul(graph.Exp(logn), g.Const(tensor.Ones(dt, n).To(d)))
			l := graph.Cholesky(graph.AddDiag(k, noise))
			alpha := graph.CholeskySolve(l, yn)
			fit := graph.MulScalar(graph.Sum(graph.Mul(yn, alpha), nil, false), 0.5)
			v := graph.AddScalar(graph.Add(fit, graph.MulScalar(graph.LogDetChol(l), 0.5)), n/2.0*math.Log(2*math.Pi))
			return v.Value(), autodiff.Grad(v, h)[0].Value()
		}
		gv, gg := nll(dev)
		cv, cg := nll(tensor.CPU)
		tol := 1e-9
		if dt == tensor.Float32 {
			tol = 1e-4
		}
		near(t, dt.String()+" −log p(y)", gv, cv, tol)
		near(t, dt.String()+" gradient", gg, cg, tol)
	}
}
