package svm

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// SVR is an ε-support-vector regression machine
// f(x) = Σᵢ coefᵢ K(svᵢ, x) + Bias, coefᵢ = αᵢ⁺ − αᵢ⁻ (seed 001 §6.1.3).
type SVR struct {
	Kernel         kernel.Kernel
	SupportVectors *tensor.Tensor
	Support        []int
	DualCoef       []float64
	Bias           float64
	// Epsilon is the tube's half-width: Options.Epsilon for ε-SVR, the ε
	// that ν-SVR found (LIBSVM's −r) for ν-SVR.
	Epsilon float64
	// Primal is ½‖w‖² + C·Σᵢ max(0, |zᵢ − f(xᵢ)| − ε), Dual the dual
	// objective (to be maximised), Gap = Primal − Dual ≥ 0. A ν-SVR machine
	// is the optimum of the ε-SVR with its Epsilon, and these are that
	// problem's objectives, whose gap equals the ν problem's.
	Primal, Dual, Gap float64
	Iterations        int
	Converged         bool
}

// FitSVR trains ε-SVR on the rows of x (n, d) with targets z: LIBSVM's
// dual over 2n variables (α⁺ with y = +1, α⁻ with y = −1), p = (ε − z,
// ε + z), solved by the same SMO as FitSVC.
func FitSVR(x *tensor.Tensor, z []float64, k kernel.Kernel, opts Options) (*SVR, error) {
	return fitSVR("svm.FitSVR", x, z, k, opts, false)
}

func fitSVR(op string, x *tensor.Tensor, z []float64, k kernel.Kernel, opts Options, nu bool) (*SVR, error) {
	if k == nil {
		return nil, fmt.Errorf("%s: nil kernel", op)
	}
	x64, err := checkData(op, x, len(z))
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := checkOptions(op, opts.C, opts.Tol); err != nil {
		return nil, err
	}
	if nu {
		if err := checkNu(op, opts.Nu); err != nil {
			return nil, err
		}
	} else if !(opts.Epsilon >= 0) {
		return nil, fmt.Errorf("%s: ε = %v must be non-negative", op, opts.Epsilon)
	}
	n := len(z)
	y, c, p := make([]float64, 2*n), make([]float64, 2*n), make([]float64, 2*n)
	alpha0 := make([]float64, 2*n)
	sum := opts.C * opts.Nu * float64(n) / 2
	for i, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: target %d is %v", op, i, v)
		}
		y[i], y[n+i] = 1, -1
		c[i], c[n+i] = opts.C, opts.C
		if nu {
			// LIBSVM's ν-SVR: Σ(α⁺ + α⁻) = Cνn, started from equal pairs.
			p[i], p[n+i] = -v, v
			alpha0[i] = min(sum, opts.C)
			alpha0[n+i] = alpha0[i]
			sum -= alpha0[i]
		} else {
			p[i], p[n+i] = opts.Epsilon-v, opts.Epsilon+v
		}
	}
	q, err := newSVRQ(k, x64, opts.CacheBytes, opts.float32Q)
	if err != nil {
		return nil, err
	}
	sol := solve(q, p, y, c, alpha0, solveOptions{eps: opts.Tol, maxIter: opts.MaxIter, nu: nu, shrink: !opts.NoShrinking})
	eps := opts.Epsilon
	if nu {
		eps = -sol.r
	}
	m := &SVR{Kernel: k, Bias: -sol.rho, Epsilon: eps, Iterations: sol.iterations, Converged: sol.converged}
	// With β = α⁺ − α⁻: αᵀQα = βᵀKβ, and the ε-SVR dual is
	// −½βᵀKβ + zᵀβ − ε·Σ(α⁺ + α⁻).
	quad, lin, loss := 0.0, 0.0, 0.0
	for t := range 2 * n {
		quad += sol.alpha[t] * (sol.grad[t] - p[t])
		lin += sol.alpha[t] * (eps - y[t]*z[t%n])
	}
	for i := range n {
		f := sol.grad[i] - p[i] - sol.rho // (Kβ)ᵢ − ρ
		loss += opts.C * math.Max(0, math.Abs(z[i]-f)-eps)
		if beta := sol.alpha[i] - sol.alpha[n+i]; beta != 0 {
			m.Support = append(m.Support, i)
			m.DualCoef = append(m.DualCoef, beta)
		}
	}
	m.Primal = quad/2 + loss
	m.Dual = -(quad/2 + lin)
	m.Gap = m.Primal - m.Dual
	m.SupportVectors = supportRows(x64, m.Support)
	return m, nil
}

// Predict returns f(x) for the rows of x (m, d).
func (m *SVR) Predict(x *tensor.Tensor) []float64 {
	checkRows("svm.SVR.Predict", x, m.SupportVectors)
	b := &Binary{Kernel: m.Kernel, SupportVectors: m.SupportVectors, Support: m.Support, DualCoef: m.DualCoef, Bias: m.Bias}
	return b.Decision(x)
}
