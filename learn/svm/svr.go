package svm

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// SVR is an ε-support-vector regression machine
// f(x) = Σᵢ coefᵢ K(svᵢ, x) + Bias, coefᵢ = αᵢ⁺ − αᵢ⁻ (Smola and
// Schölkopf 2004, A tutorial on support vector regression).
type SVR struct {
	Kernel         kernel.Kernel
	SupportVectors *tensor.Tensor
	Support        []int
	DualCoef       []float64
	Bias           float64
	// Epsilon is the tube's half-width: SVROptions.Epsilon for ε-SVR, the ε
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

// FitSVR trains ε-SVR on the rows of x (n, d) with targets y (n):
// LIBSVM's dual over 2n variables (α⁺ with y = +1, α⁻ with y = −1),
// p = (ε − y, ε + y), solved by the same SMO as FitSVC. Bad data (NaN or
// ±Inf, zero rows or columns) or options (negative C, ε or Tol) return an
// error and no model. If SMO runs out of MaxIter it returns the model with
// a *tensor.NotConvergedError; if ctx is cancelled (checked every 1000
// steps) it returns promptly with the model at the current iterate and the
// error wrapping ctx.Err().
func FitSVR(ctx context.Context, x, y *tensor.Tensor, opts SVROptions) (*SVR, error) {
	return fitSVR(orBackground(ctx), "svm.FitSVR", x, y, opts.Kernel, solverOptions{
		C: opts.C, Epsilon: opts.Epsilon, Tol: opts.Tol, MaxIter: opts.MaxIter,
		CacheBytes: opts.CacheBytes, NoShrinking: opts.NoShrinking, float32Q: opts.float32Q}, false)
}

// checkRegression validates x (validate.Matrix) and its targets y
// (validate.Target), returning x in float64 and y's values.
func checkRegression(op string, x, y *tensor.Tensor) (*tensor.Tensor, []float64, error) {
	v, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, nil, err
	}
	z, err := validate.Target(op, y, n)
	if err != nil {
		return nil, nil, err
	}
	return tensor.FromFloat64s(v, n, d), z, nil
}

func fitSVR(ctx context.Context, op string, x, yt *tensor.Tensor, k kernel.Kernel, opts solverOptions, nu bool) (*SVR, error) {
	x64, z, err := checkRegression(op, x, yt)
	if err != nil {
		return nil, err
	}
	k = defaultKernel(k, x64)
	opts = opts.withDefaults()
	if err := checkOptions(op, opts); err != nil {
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
	sol := solve(q, p, y, c, alpha0, solveOptions{ctx: ctx, eps: opts.Tol, maxIter: opts.MaxIter, nu: nu, shrink: !opts.NoShrinking})
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
	switch {
	case sol.cancelled != nil:
		return m, cancelled(op, sol.iterations, sol.cancelled)
	case !sol.converged:
		return m, notConverged(op, sol.iterations, sol.violation, opts.Tol)
	}
	return m, nil
}

// Predict returns f(x) for the rows of x (m, d), shaped (m). It panics with
// a *tensor.Error unless x is a matrix with the training columns.
func (m *SVR) Predict(x *tensor.Tensor) *tensor.Tensor {
	checkRows("svm.SVR.Predict", x, m.SupportVectors)
	b := &Binary{Kernel: m.Kernel, SupportVectors: m.SupportVectors, Support: m.Support, DualCoef: m.DualCoef, Bias: m.Bias}
	return b.Decision(x)
}
