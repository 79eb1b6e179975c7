package main

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// gpDim is the number of input features of the GP workload.
const gpDim = 3

// gpWorkloads time one evaluation of an exact Gaussian process's log marginal
// likelihood and its gradient with respect to the three log-hyperparameters
// of an RBF kernel plus Gaussian noise, in float64, for each n in sizes:
//
//	K = σf²·exp(−‖xᵢ − xⱼ‖² / (2ℓ²)) + σn²·I
//	log p(y) = −½ ‖L⁻¹y‖² − Σ log Lᵢᵢ − (n/2) log 2π,  K = LLᵀ
//
// The squared distances do not depend on the hyperparameters and are computed
// once, as the peers do; everything else (kernel, Cholesky, triangular
// solve, log determinant, the reverse sweep) is in the timed evaluation.
func gpWorkloads(sizes []int) []workload {
	var ws []workload
	for _, n := range sizes {
		ws = append(ws, workload{
			name:  fmt.Sprintf("gp_lml_grad_n%d", n),
			steps: max(1, 4000/n),
			setup: func() step { return gpStep(n) },
			report: func(name string, sec float64) []Result {
				return []Result{{name, "ms_per_eval", sec * 1e3, "ms"}}
			},
		})
	}
	return ws
}

// gpProblem is the GP workload's data: squared distances d2 (n, n),
// targets y (n, 1) and the hyperparameters θ = (log ℓ, log σf², log σn²).
type gpProblem struct {
	n     int
	d2, y *tensor.Tensor
	theta [3]float64
}

// newGPProblem draws n inputs x ~ N(0, I₃) and targets y = sin(Σx) + 0.1·ε
// with a fixed seed, at ℓ = 1, σf² = 1, σn² = 0.01.
func newGPProblem(n int) *gpProblem {
	rng := tensor.NewRNG(1)
	x := rng.Normal(tensor.Float64, 0, 1, n, gpDim).Float64s()
	yv := make([]float64, n)
	d2 := tensor.Zeros(tensor.Float64, n, n)
	dv := d2.Float64s()
	for i := range n {
		s := 0.0
		for j := range n {
			acc := 0.0
			for k := range gpDim {
				t := x[i*gpDim+k] - x[j*gpDim+k]
				acc += t * t
			}
			dv[i*n+j] = acc
		}
		for k := range gpDim {
			s += x[i*gpDim+k]
		}
		yv[i] = math.Sin(s) + 0.1*rng.NormFloat64()
	}
	return &gpProblem{n: n, d2: d2, y: tensor.FromFloat64s(yv, n, 1),
		theta: [3]float64{0, 0, math.Log(0.01)}}
}

// lmlGrad builds the log marginal likelihood in g (after resetting it) and
// returns it with its gradient with respect to θ.
func (p *gpProblem) lmlGrad(g *graph.Graph) (lml float64, grad [3]float64) {
	g.Reset()
	var th [3]*graph.Node
	for i, v := range p.theta {
		th[i] = g.Var(tensor.Scalar(tensor.Float64, v))
	}
	// −1/(2ℓ²) = −½·exp(−2 log ℓ)
	scale := graph.MulScalar(graph.Exp(graph.MulScalar(th[0], -2)), -0.5)
	k := graph.Mul(graph.Exp(th[1]), graph.Exp(graph.Mul(g.Const(p.d2), scale)))
	k = graph.AddDiag(k, graph.Exp(th[2]))
	l := graph.Cholesky(k)
	// yᵀK⁻¹y = ‖L⁻¹y‖², as probabilistic/gp computes it: one triangular
	// solve, whose gradient with respect to L is a rank-one outer product.
	v := graph.TriSolve(l, g.Const(p.y), true, false)
	quad := graph.Sum(graph.Square(v), nil, false)
	half := 0.5 * float64(p.n) * math.Log(2*math.Pi)
	out := graph.AddScalar(graph.MulScalar(graph.Add(quad, graph.LogDetChol(l)), -0.5), -half)
	gs := autodiff.Grad(out, th[:]...)
	for i := range grad {
		grad[i] = gs[i].Item()
	}
	return out.Item(), grad
}

// gpStep builds the data for n points and returns one evaluation.
func gpStep(n int) step {
	p := newGPProblem(n)
	g := graph.New()
	return func() {
		lml, grad := p.lmlGrad(g)
		if math.IsNaN(lml + grad[0] + grad[1] + grad[2]) {
			panic("gp_lml_grad: NaN")
		}
	}
}
