package tensor

import "sort"

// Divide and conquer for the symmetric tridiagonal eigenproblem (Cuppen's
// method as LAPACK's dstedc): T splits into two halves plus a rank-one
// coupling, the halves are solved recursively and merged by the roots of the
// secular equation; eigenvectors come from the Gu–Eisenstat recomputed ẑ so
// that they stay orthogonal, and the merge product is one GEMM.

// dcLeaf is the order at and below which the QL iteration solves a block.
const dcLeaf = 32

// dcParallelMin is the order from which the two halves of a divide and
// conquer split are solved on goroutines of their own: they write disjoint
// blocks, and their merges' GEMMs are too small to use both cores well.
const dcParallelMin = 200

// bothHalves runs left and right, concurrently when par is set (through
// linalgParallel, so a helper that is not scheduled in time leaves both to
// the caller), and reports whether both succeeded.
func bothHalves(par bool, left, right func() bool) bool {
	if !par {
		return left() && right()
	}
	var ok [2]bool
	linalgParallel(2, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i == 0 {
				ok[0] = left()
			} else {
				ok[1] = right()
			}
		}
	})
	return ok[0] && ok[1]
}

// stedc computes the eigenvalues (into d, unsorted) and eigenvectors of the
// n×n tridiagonal matrix with diagonal d and subdiagonal e[0:n−1]: column j
// of the column-major z (leading dimension n) is the eigenvector of d[j]. e
// is destroyed. It reports false if an iteration fails.
func stedc[T Float](n int, d, e, z []T) bool {
	clear(z)
	return dcSolve(n, 0, n, d, e, z)
}

func dcSolve[T Float](ld, o, s int, d, e, z []T) bool {
	if s <= dcLeaf {
		ee := make([]T, s)
		copy(ee[1:], e[o:o+s-1])
		zt := make([]T, s*s)
		for i := 0; i < s; i++ {
			zt[i*s+i] = 1
		}
		if !tqli(s, d[o:o+s], ee, zt) {
			return false
		}
		for p := 0; p < s; p++ {
			copy(z[o+(o+p)*ld:o+s+(o+p)*ld], zt[p*s:(p+1)*s])
		}
		return true
	}
	m := s / 2
	rho := e[o+m-1]
	d[o+m-1] -= rho
	d[o+m] -= rho
	if !bothHalves(s >= dcParallelMin,
		func() bool { return dcSolve(ld, o, m, d, e, z) },
		func() bool { return dcSolve(ld, o+m, s-m, d, e, z) }) {
		return false
	}
	return dcMerge(ld, o, s, m, rho, d, z)
}

// dcMerge diagonalises diag(D1, D2) + rho·v·vᵀ, v = (Q1ᵀ's last row, Q2ᵀ's
// first row), and replaces the block's eigenvectors by the merged ones.
func dcMerge[T Float](ld, o, s, m int, rho T, d, z []T) bool {
	eps := epsT[T]()
	dv := d[o : o+s]
	zv := make([]T, s)
	for j := 0; j < m; j++ {
		zv[j] = z[o+m-1+(o+j)*ld]
	}
	for j := m; j < s; j++ {
		zv[j] = z[o+m+(o+j)*ld]
	}
	// Work with rho > 0 by negating D; eigenvectors are unchanged.
	neg := rho < 0
	dd := make([]T, s)
	for j := range dd {
		dd[j] = dv[j]
		if neg {
			dd[j] = -dd[j]
		}
	}
	rho = absT(rho)
	var zn T
	for _, x := range zv {
		zn += x * x
	}
	rho *= zn
	zn = sqrtT(zn)
	for j := range zv {
		zv[j] /= zn
	}
	perm := make([]int, s)
	for j := range perm {
		perm[j] = j
	}
	sort.Slice(perm, func(a, b int) bool { return dd[perm[a]] < dd[perm[b]] })
	// The block's columns are taken in sorted order through perm (column
	// o+perm[j] of z); the deflating rotations act on them in place.
	col := func(j int) []T { return z[o+(o+perm[j])*ld : o+s+(o+perm[j])*ld] }
	ds, zs := make([]T, s), make([]T, s)
	kind := make([]int, s) // 1: nonzero in the top m rows only, 2: bottom, 3: both
	for j, p := range perm {
		ds[j], zs[j] = dd[p], zv[p]
		kind[j] = 1
		if p >= m {
			kind[j] = 2
		}
	}
	var dmax T
	for _, x := range ds {
		dmax = max(dmax, absT(x))
	}
	tol := 8 * eps * max(dmax, rho)
	deflated := make([]bool, s)
	prev := -1
	for j := 0; j < s; j++ {
		if rho*absT(zs[j]) <= tol {
			deflated[j] = true
			continue
		}
		if prev >= 0 {
			tau := hypotT(zs[prev], zs[j])
			c, sn := zs[j]/tau, -zs[prev]/tau
			if absT(c*sn*(ds[j]-ds[prev])) <= tol {
				// Rotate columns prev, j so that z[prev] vanishes.
				qa, qb := col(prev), col(j)
				for r := range qa {
					x, y := qa[r], qb[r]
					qa[r] = c*x + sn*y
					qb[r] = -sn*x + c*y
				}
				t := ds[prev]*c*c + ds[j]*sn*sn
				ds[j] = ds[prev]*sn*sn + ds[j]*c*c
				ds[prev] = t
				zs[j], zs[prev] = tau, 0
				kind[j] |= kind[prev]
				kind[prev] = kind[j]
				deflated[prev] = true
			}
		}
		prev = j
	}
	var nd, df []int
	for j := 0; j < s; j++ {
		if deflated[j] {
			df = append(df, j)
		} else {
			nd = append(nd, j)
		}
	}
	sort.SliceStable(nd, func(a, b int) bool { return ds[nd[a]] < ds[nd[b]] })
	k := len(nd)
	dk, zk := make([]T, k), make([]T, k)
	for i, j := range nd {
		dk[i], zk[i] = ds[j], zs[j]
	}
	orig, mu := secularRoots(dk, zk, rho, false)
	zh := make([]T, k)
	for i := 0; i < k; i++ {
		// diff(i, j) = λ_j − d_i, accurate through the root's origin.
		p := ((dk[orig[k-1]] - dk[i]) + mu[k-1]) / rho
		for j := 0; j < i; j++ {
			p *= ((dk[orig[j]] - dk[i]) + mu[j]) / (dk[j] - dk[i])
		}
		for j := i; j < k-1; j++ {
			p *= ((dk[orig[j]] - dk[i]) + mu[j]) / (dk[j+1] - dk[i])
		}
		zh[i] = sqrtT(absT(p))
		if zk[i] < 0 {
			zh[i] = -zh[i]
		}
	}
	// The deflated columns keep their vectors: saved before the merged
	// ones overwrite the block.
	saved := workGet[T](len(df) * s)
	defer workPut(saved)
	for i, j := range df {
		copy(saved[i*s:(i+1)*s], col(j))
	}
	// The merged vectors are Q·U, U's column j the eigenvector of the
	// secular problem. Q is block diagonal but for rotated pairs: the top m
	// rows of the product need only the columns from Q1 (and mixed ones),
	// the bottom rows only those from Q2, which halves the merge's GEMM.
	var sel [2][]int
	for i, j := range nd {
		for half := range 2 {
			if kind[j]&(half+1) != 0 {
				sel[half] = append(sel[half], i)
			}
		}
	}
	us := [2][]T{workGet[T](len(sel[0]) * k), workGet[T](len(sel[1]) * k)}
	defer workPut(us[0])
	defer workPut(us[1])
	qbuf := workGet[T](max(m, s-m) * max(len(sel[0]), len(sel[1])))
	defer workPut(qbuf)
	linalgParallel(k, max(1, 4096/max(k, 1)), func(j0, j1 int) {
		uc := make([]T, k)
		for j := j0; j < j1; j++ {
			base, mj := dk[orig[j]], mu[j]
			var nrm T
			for i := range uc {
				x := zh[i] / -((base - dk[i]) + mj)
				uc[i] = x
				nrm += x * x
			}
			nrm = 1 / sqrtT(nrm)
			for half := range 2 {
				ks := len(sel[half])
				dst := us[half][j*ks : (j+1)*ks]
				for c, i := range sel[half] {
					dst[c] = uc[i] * nrm
				}
			}
		}
	})
	for half := 0; half < 2; half++ {
		r0, r1 := 0, m
		if half == 1 {
			r0, r1 = m, s
		}
		h, ks := r1-r0, len(sel[half])
		if ks == 0 {
			for c := 0; c < k; c++ {
				clear(z[o+r0+(o+c)*ld : o+r1+(o+c)*ld])
			}
			continue
		}
		// Gathered before the product overwrites these rows of the block
		// (the other half's rows are not touched by it).
		qn := qbuf[:h*ks]
		for c, i := range sel[half] {
			copy(qn[c*h:(c+1)*h], col(nd[i])[r0:r1])
		}
		colGemm(false, false, h, k, ks, 1, qn, h, us[half], ks, 0, z[o+r0+o*ld:], ld)
	}
	for i := 0; i < k; i++ {
		lam := dk[orig[i]] + mu[i]
		if neg {
			lam = -lam
		}
		dv[i] = lam
	}
	for i, j := range df {
		c := k + i
		copy(z[o+(o+c)*ld:o+s+(o+c)*ld], saved[i*s:(i+1)*s])
		lam := ds[j]
		if neg {
			lam = -lam
		}
		dv[c] = lam
	}
	return true
}
