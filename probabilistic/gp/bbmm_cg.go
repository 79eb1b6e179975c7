package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// LinearOperator is a symmetric positive-definite n × n matrix known only
// through its products with blocks of vectors.
type LinearOperator interface {
	// Size returns n.
	Size() int
	// MatMul sets dst = A·v for v and dst (n, t), row-major.
	MatMul(dst, v []float64, t int)
}

// Preconditioner approximates a LinearOperator's inverse.
type Preconditioner interface {
	// Solve sets dst = P⁻¹·r for r and dst (n, t), row-major.
	Solve(dst, r []float64, t int)
}

// CGResult is the outcome of MBCG.
type CGResult struct {
	// X holds the solutions, (n, t).
	X *tensor.Tensor
	// Iterations is the number of products with the operator.
	Iterations int
	// ColumnIterations is, per column, the iterations before it converged
	// (the size of its Lanczos tridiagonal).
	ColumnIterations []int
	// Residuals holds, per column, the relative residual ‖b − Ax‖/‖b‖ of
	// the recurrence when it stopped.
	Residuals []float64
	// Diag and Off hold, per column, the Lanczos tridiagonal of the
	// preconditioned operator P^(−½)AP^(−½) started at P^(−½)b/‖·‖,
	// recovered from the CG coefficients: Diag[j] has ColumnIterations[j]
	// entries and Off[j] one fewer.
	Diag, Off [][]float64
	// RZ0 holds, per column, bᵀP⁻¹b: the squared norm of the Lanczos start
	// vector before normalisation.
	RZ0 []float64
}

// CGError reports columns of MBCG that did not reach the tolerance in the
// iteration budget; the result returned with it holds the iterates.
type CGError struct {
	Op         string
	Iterations int
	Residual   float64 // the worst relative residual
	Column     int     // the column that has it
	Tol        float64
}

// Error names the residual reached and the budget.
func (e *CGError) Error() string {
	return fmt.Sprintf("%s: conjugate gradients did not converge in %d iterations: relative residual %.3g of column %d exceeds the tolerance %g",
		e.Op, e.Iterations, e.Residual, e.Column, e.Tol)
}

// MBCG solves A·X = B for the t columns of B (n, t) at once by modified
// batched preconditioned conjugate gradients (Gardner et al. 2018, alg. 2):
// every iteration makes one product of A with an (n, t) block, and the
// coefficients α, β of each column give the Lanczos tridiagonal of the
// preconditioned operator for stochastic Lanczos quadrature. A nil p means
// no preconditioner. A column stops when its relative residual is at most
// tol; after maxIter iterations the result is returned with a *CGError
// naming the worst residual. It returns an error (and no result) if B's
// shape does not match A or the inputs are not positive.
func MBCG(a LinearOperator, p Preconditioner, b *tensor.Tensor, maxIter int, tol float64) (*CGResult, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("gp.MBCG: nil operator or right-hand side")
	}
	if b.Dim() != 2 || b.Shape()[0] != a.Size() {
		return nil, fmt.Errorf("gp.MBCG: right-hand side must be (%d, t), got shape %v", a.Size(), b.Shape())
	}
	if maxIter < 1 || !(tol > 0) {
		return nil, fmt.Errorf("gp.MBCG: maxIter %d must be at least 1 and tol %g positive", maxIter, tol)
	}
	t := b.Shape()[1]
	res, err := mbcg("gp.MBCG", a, p, b.Cast(tensor.Float64).Contiguous().Float64s(), t, maxIter, tol)
	return res, err
}

// mbcg is MBCG on a row-major (n, t) slice.
func mbcg(op string, a LinearOperator, p Preconditioner, b []float64, t, maxIter int, tol float64) (*CGResult, error) {
	n := a.Size()
	x := make([]float64, n*t)
	r := append([]float64(nil), b...)
	z := make([]float64, n*t)
	precond := func() {
		if p == nil {
			copy(z, r)
		} else {
			p.Solve(z, r, t)
		}
	}
	precond()
	d := append([]float64(nil), z...)
	ad := make([]float64, n*t)
	colDot := func(u, v []float64) []float64 {
		s := make([]float64, t)
		for i := 0; i < n; i++ {
			for j := 0; j < t; j++ {
				s[j] += u[i*t+j] * v[i*t+j]
			}
		}
		return s
	}
	bnorm := colDot(b, b)
	for j := range bnorm {
		bnorm[j] = math.Sqrt(bnorm[j])
	}
	rz := colDot(r, z)
	res := &CGResult{ColumnIterations: make([]int, t), Residuals: make([]float64, t),
		Diag: make([][]float64, t), Off: make([][]float64, t), RZ0: append([]float64(nil), rz...)}
	done := make([]bool, t)
	prevAlpha, prevBeta := make([]float64, t), make([]float64, t)
	for j := range done {
		if bnorm[j] == 0 || rz[j] == 0 {
			done[j] = true
		}
	}
	alpha := make([]float64, t)
	for it := 1; it <= maxIter; it++ {
		if allTrue(done) {
			break
		}
		a.MatMul(ad, d, t)
		res.Iterations = it
		dad := colDot(d, ad)
		for j := range alpha {
			alpha[j] = 0
			if !done[j] {
				if !(dad[j] > 0) {
					return nil, fmt.Errorf("%s: the operator is not positive definite (dᵀAd = %g in column %d at iteration %d)", op, dad[j], j, it)
				}
				alpha[j] = rz[j] / dad[j]
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < t; j++ {
				x[i*t+j] += alpha[j] * d[i*t+j]
				r[i*t+j] -= alpha[j] * ad[i*t+j]
			}
		}
		rr := colDot(r, r)
		precond()
		rzNew := colDot(r, z)
		for j := 0; j < t; j++ {
			if done[j] {
				continue
			}
			beta := rzNew[j] / rz[j]
			// Lanczos tridiagonal from the CG coefficients.
			diag := 1 / alpha[j]
			if it > 1 {
				diag += prevBeta[j] / prevAlpha[j]
				res.Off[j] = append(res.Off[j], math.Sqrt(prevBeta[j])/prevAlpha[j])
			}
			res.Diag[j] = append(res.Diag[j], diag)
			res.ColumnIterations[j] = it
			prevAlpha[j], prevBeta[j] = alpha[j], beta
			res.Residuals[j] = math.Sqrt(rr[j]) / bnorm[j]
			if res.Residuals[j] <= tol {
				done[j] = true
			}
			rz[j] = rzNew[j]
			alpha[j] = beta // reused below as β
		}
		for i := 0; i < n; i++ {
			for j := 0; j < t; j++ {
				if !done[j] {
					d[i*t+j] = z[i*t+j] + alpha[j]*d[i*t+j]
				}
			}
		}
	}
	res.X = tensor.FromFloat64s(x, n, t)
	worst, col := 0.0, 0
	for j, rj := range res.Residuals {
		if rj > worst {
			worst, col = rj, j
		}
	}
	if worst > tol {
		return res, &CGError{Op: op, Iterations: res.Iterations, Residual: worst, Column: col, Tol: tol}
	}
	return res, nil
}

func allTrue(v []bool) bool {
	for _, b := range v {
		if !b {
			return false
		}
	}
	return true
}

// lanczosLogQuad returns e₁ᵀ log(T) e₁ for the symmetric tridiagonal T
// with the given diagonal and off-diagonal: Σₖ v₁ₖ² log λₖ over T's
// eigenpairs (Golub–Welsch quadrature).
func lanczosLogQuad(diag, off []float64) (float64, error) {
	m := len(diag)
	if m == 0 {
		return 0, nil
	}
	t := tensor.New(tensor.Float64, m, m)
	tv := t.Float64s()
	for i := 0; i < m; i++ {
		tv[i*m+i] = diag[i]
		if i+1 < m {
			tv[i*m+i+1], tv[(i+1)*m+i] = off[i], off[i]
		}
	}
	w, v, err := tensor.Eigh(t)
	if err != nil {
		return 0, err
	}
	wv, vv := w.Float64s(), v.Float64s()
	s := 0.0
	for k := 0; k < m; k++ {
		if !(wv[k] > 0) {
			return 0, fmt.Errorf("gp: Lanczos tridiagonal has eigenvalue %g ≤ 0", wv[k])
		}
		s += vv[k] * vv[k] * math.Log(wv[k]) // first row of the eigenvectors
	}
	return s, nil
}
