package tensor

import (
	"fmt"
	"math"
	"sort"
)

// SVD returns the thin singular value decomposition A = U·diag(s)·Vᵀ of
// each matrix of a (..., m, n), k = min(m, n): u (..., m, k) and v
// (..., n, k) with orthonormal columns, s (..., k) non-negative and
// decreasing. It uses one-sided Jacobi rotations (Hestenes), which give
// singular values to high relative accuracy, in float64 whatever a's dtype.
// Signs follow the convention of package pca: each column of v has its
// entry of largest magnitude positive (u's column flips with it). It
// returns an error wrapping ErrNotFinite for NaN or Inf input, or when the
// rotations do not converge; it panics with a *Error when a has fewer than
// two dimensions.
func SVD(a *Tensor) (u, s, v *Tensor, err error) {
	const op = "SVD"
	if a == nil || len(a.shape) < 2 {
		Fail(op, "operand %v is not a matrix (want rank >= 2)", describe(a))
	}
	nd := len(a.shape)
	m, n := a.shape[nd-2], a.shape[nd-1]
	k := min(m, n)
	batch := a.shape[:nd-2]
	count := shapeSize(batch)
	vals := a.Contiguous().Values()
	us, ss, vs := make([]float64, 0, count*m*k), make([]float64, 0, count*k), make([]float64, 0, count*n*k)
	for b := range count {
		mat := vals[b*m*n : (b+1)*m*n]
		for _, x := range mat {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, nil, nil, fmt.Errorf("tensor.SVD: matrix %d: %w", b, ErrNotFinite)
			}
		}
		bu, bs, bv, err := svdJacobi(mat, m, n)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("tensor.SVD: matrix %d: %w", b, err)
		}
		us, ss, vs = append(us, bu...), append(ss, bs...), append(vs, bv...)
	}
	shp := func(last ...int) []int { return append(cloneInts(batch), last...) }
	return FromValues(a.dtype, us, shp(m, k)...), FromValues(a.dtype, ss, shp(k)...), FromValues(a.dtype, vs, shp(n, k)...), nil
}

// svdJacobi factors the row-major m×n matrix a, returning U (m×k), s (k)
// and V (n×k) row-major.
func svdJacobi(a []float64, m, n int) (u, s, v []float64, err error) {
	if m < n {
		// A = U S Vᵀ  ⇔  Aᵀ = V S Uᵀ.
		at := make([]float64, m*n)
		for i := range m {
			for j := range n {
				at[j*m+i] = a[i*n+j]
			}
		}
		v, s, u, err = svdJacobi(at, n, m)
		if err != nil {
			return nil, nil, nil, err
		}
		flipToV(u, v, m, n, m)
		return u, s, v, nil
	}
	// Columns of A and of V as contiguous slices: the rotations mix columns.
	cols := make([][]float64, n)
	vc := make([][]float64, n)
	for j := range n {
		cols[j] = make([]float64, m)
		for i := range m {
			cols[j][i] = a[i*n+j]
		}
		vc[j] = make([]float64, n)
		vc[j][j] = 1
	}
	const eps = 2.220446049250313e-16
	converged := false
	for sweep := 0; sweep < 60 && !converged; sweep++ {
		converged = true
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				alpha, beta, gamma := dot64(cols[p], cols[p]), dot64(cols[q], cols[q]), dot64(cols[p], cols[q])
				if gamma == 0 || math.Abs(gamma) <= eps*math.Sqrt(alpha*beta) {
					continue
				}
				converged = false
				zeta := (beta - alpha) / (2 * gamma)
				t := math.Copysign(1, zeta) / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				rotate(cols[p], cols[q], c, sn)
				rotate(vc[p], vc[q], c, sn)
			}
		}
	}
	if !converged {
		return nil, nil, nil, fmt.Errorf("one-sided Jacobi did not converge in 60 sweeps")
	}
	order := make([]int, n)
	norms := make([]float64, n)
	for j := range n {
		order[j], norms[j] = j, math.Sqrt(dot64(cols[j], cols[j]))
	}
	sort.SliceStable(order, func(x, y int) bool { return norms[order[x]] > norms[order[y]] })
	u, s, v = make([]float64, m*n), make([]float64, n), make([]float64, n*n)
	for r, j := range order {
		s[r] = norms[j]
		for i := range m {
			if norms[j] > 0 {
				u[i*n+r] = cols[j][i] / norms[j]
			}
		}
		for i := range n {
			v[i*n+r] = vc[j][i]
		}
	}
	flipToV(u, v, m, n, n)
	return u, s, v, nil
}

// flipToV negates column r of u and v (u m×k, v n×k) where v's entry of
// largest magnitude in that column is negative.
func flipToV(u, v []float64, m, n, k int) {
	for r := range k {
		big := 0
		for i := range n {
			if math.Abs(v[i*k+r]) > math.Abs(v[big*k+r]) {
				big = i
			}
		}
		if v[big*k+r] < 0 {
			for i := range n {
				v[i*k+r] = -v[i*k+r]
			}
			for i := range m {
				u[i*k+r] = -u[i*k+r]
			}
		}
	}
}

func dot64(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// rotate applies the plane rotation [x y] ← [c·x − s·y, s·x + c·y].
func rotate(x, y []float64, c, s float64) {
	for i := range x {
		xi, yi := x[i], y[i]
		x[i], y[i] = c*xi-s*yi, s*xi+c*yi
	}
}
