package tensor

import (
	"fmt"
	"math"
)

// QR returns the thin QR factorisation A = Q·R of each matrix of a
// (..., m, n) with m ≥ n: q (..., m, n) with orthonormal columns and r
// (..., n, n) upper triangular with a non-negative diagonal (positive for
// full-rank A, which makes the factorisation unique). It uses Householder
// reflections in float64 whatever a's dtype. It returns an error wrapping
// ErrNotFinite for NaN or Inf input and panics with a *Error when a is not
// a matrix or is wider than tall.
func QR(a *Tensor) (q, r *Tensor, err error) {
	const op = "QR"
	if a == nil || len(a.shape) < 2 {
		Fail(op, "operand %v is not a matrix (want rank >= 2)", describe(a))
	}
	nd := len(a.shape)
	m, n := a.shape[nd-2], a.shape[nd-1]
	if m < n {
		Fail(op, "operand %v is wider than tall; the thin QR needs m ≥ n", describe(a))
	}
	batch := a.shape[:nd-2]
	count := shapeSize(batch)
	vals := a.Contiguous().Values()
	qs, rs := make([]float64, 0, count*m*n), make([]float64, 0, count*n*n)
	for b := range count {
		mat := vals[b*m*n : (b+1)*m*n]
		for _, x := range mat {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil, fmt.Errorf("tensor.QR: matrix %d: %w", b, ErrNotFinite)
			}
		}
		bq, br := householderQR(mat, m, n)
		qs, rs = append(qs, bq...), append(rs, br...)
	}
	return FromValues(a.dtype, qs, append(cloneInts(batch), m, n)...), FromValues(a.dtype, rs, append(cloneInts(batch), n, n)...), nil
}

// householderQR factors the row-major m×n matrix a (m ≥ n).
func householderQR(a []float64, m, n int) (q, r []float64) {
	w := append([]float64(nil), a...) // reduced in place to R
	vs := make([][]float64, n)
	for k := range n {
		// v reflects column k below the diagonal onto −sign(x₀)‖x‖e₁.
		norm := 0.0
		for i := k; i < m; i++ {
			norm += w[i*n+k] * w[i*n+k]
		}
		norm = math.Sqrt(norm)
		v := make([]float64, m-k)
		if norm == 0 {
			vs[k] = v
			continue
		}
		alpha := -math.Copysign(norm, w[k*n+k])
		for i := k; i < m; i++ {
			v[i-k] = w[i*n+k]
		}
		v[0] -= alpha
		vn := 0.0
		for _, x := range v {
			vn += x * x
		}
		vn = math.Sqrt(vn)
		for i := range v {
			v[i] /= vn
		}
		vs[k] = v
		for j := k; j < n; j++ {
			d := 0.0
			for i := k; i < m; i++ {
				d += v[i-k] * w[i*n+j]
			}
			for i := k; i < m; i++ {
				w[i*n+j] -= 2 * v[i-k] * d
			}
		}
	}
	// Q's thin columns: the reflections applied, last first, to [I; 0].
	q = make([]float64, m*n)
	for i := range n {
		q[i*n+i] = 1
	}
	for k := n - 1; k >= 0; k-- {
		v := vs[k]
		for j := range n {
			d := 0.0
			for i := k; i < m; i++ {
				d += v[i-k] * q[i*n+j]
			}
			for i := k; i < m; i++ {
				q[i*n+j] -= 2 * v[i-k] * d
			}
		}
	}
	// R is the upper n×n block; flip signs so its diagonal is non-negative.
	r = make([]float64, n*n)
	for i := range n {
		s := 1.0
		if w[i*n+i] < 0 {
			s = -1
		}
		for j := i; j < n; j++ {
			r[i*n+j] = s * w[i*n+j]
		}
		for row := range m {
			q[row*n+i] *= s
		}
	}
	return q, r
}
