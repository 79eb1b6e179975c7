package tensor

import "sort"

// Divide and conquer for the singular value decomposition of an upper
// bidiagonal matrix (LAPACK's dbdsdc through dlasd0–dlasd4, Gu and
// Eisenstat 1995). Removing row r splits B into an upper bidiagonal block
// above it with one extra column and a block below it:
//
//	B = [B₁ 0; αe_lastᵀ βe₁ᵀ; 0 B₂].
//
// With the SVDs of the two blocks solved recursively, B = U·M·Vᵀ where U
// and V are block diagonal and M = diag(d) + e_r·zᵀ is diagonal but for
// its row r (whose diagonal entry, belonging to B₁'s null vector, is 0).
// The singular values of M are the square roots of the eigenvalues of
// MᵀM = diag(d²) + z·zᵀ, the roots of a secular equation, and its singular
// vectors have closed forms; computed from the recomputed ẑ of Gu and
// Eisenstat they stay orthogonal. The products U·U_M and V·V_M are GEMMs.
//
// A block of rows lo..lo+k−1 owns the columns lo..lo+k−1+sqre (sqre = 1
// when it has the extra column): its singular vectors are the k×k and
// (k+sqre)×(k+sqre) diagonal blocks of the column-major u and v, column j
// belonging to d[j]; with sqre = 1 column lo+k of v is its null vector.

// bdLeaf is the order at and below which a block is solved by QR sweeps.
const bdLeaf = 24

// bdsdc computes the SVD of the n×n upper bidiagonal matrix with diagonal
// d and superdiagonal e[0:n−1]: on return d holds the singular values
// (non-negative, unsorted) and column j of the column-major u and v (n×n,
// leading dimension n) the left and right singular vectors of d[j]. e is
// destroyed. It reports false if a QR iteration fails.
func bdsdc[T Float](n int, d, e, u, v []T) bool {
	clear(u[:n*n])
	clear(v[:n*n])
	return bdSolve(n, 0, n, 0, d, e, u, v)
}

func bdSolve[T Float](ld, lo, k, sqre int, d, e, u, v []T) bool {
	if k <= bdLeaf {
		return bdLeafSolve(ld, lo, k, sqre, d, e, u, v)
	}
	nl := k / 2
	r := lo + nl
	alpha, beta := d[r], e[r]
	if !bothHalves(k >= dcParallelMin,
		func() bool { return bdSolve(ld, lo, nl, 1, d, e, u, v) },
		func() bool { return bdSolve(ld, r+1, k-nl-1, sqre, d, e, u, v) }) {
		return false
	}
	bdMerge(ld, lo, k, nl, sqre, alpha, beta, d, u, v)
	return true
}

// bdLeafSolve solves a block by implicitly shifted QR sweeps; a block with
// the extra column is padded with a zero row to a square matrix, whose
// singular value of that row is the block's null vector.
func bdLeafSolve[T Float](ld, lo, k, sqre int, d, e, u, v []T) bool {
	s := k + sqre
	dd, ee := make([]T, s), make([]T, max(s-1, 0))
	copy(dd, d[lo:lo+k])
	copy(ee, e[lo:lo+s-1])
	ut, vt := make([]T, s*s), make([]T, s*s)
	for i := 0; i < s; i++ {
		ut[i*s+i], vt[i*s+i] = 1, 1
	}
	if !bidiagSVD(s, dd, ee, ut, vt) {
		return false
	}
	null := -1
	if sqre == 1 {
		// The padding row's left singular vector is e_k (the rotations
		// that reach row k only swap it): the largest component on it.
		null = 0
		for p := 1; p < s; p++ {
			if absT(ut[p*s+k]) > absT(ut[null*s+k]) {
				null = p
			}
		}
		copy(v[lo+(lo+k)*ld:lo+s+(lo+k)*ld], vt[null*s:(null+1)*s])
	}
	q := 0
	for p := 0; p < s; p++ {
		if p == null {
			continue
		}
		sg := T(1)
		if dd[p] < 0 {
			sg = -1
		}
		d[lo+q] = sg * dd[p]
		copy(u[lo+(lo+q)*ld:lo+k+(lo+q)*ld], ut[p*s:p*s+k])
		vc := v[lo+(lo+q)*ld : lo+s+(lo+q)*ld]
		for i := range vc {
			vc[i] = sg * vt[p*s+i]
		}
		q++
	}
	return true
}

// bdMerge combines the solved blocks above and below row r = lo+nl; alpha
// and beta are B's entries in that row (at columns r and r+1).
func bdMerge[T Float](ld, lo, k, nl, sqre int, alpha, beta T, d, u, v []T) {
	eps := epsT[T]()
	r := lo + nl
	nv := k + sqre
	// z: row r of B in the coordinates of the blocks' right singular
	// vectors; dl: the diagonal of M (0 at B₁'s null vector, column r).
	z, dl := make([]T, k), make([]T, k)
	for j := 0; j < k; j++ {
		c := lo + j
		switch {
		case j < nl:
			z[j], dl[j] = alpha*v[r+c*ld], d[c]
		case j == nl:
			z[j] = alpha * v[r+c*ld]
		default:
			z[j], dl[j] = beta*v[r+1+c*ld], d[c]
		}
	}
	u[r+r*ld] = 1
	// Which rows a column of the U and V blocks can be nonzero in: 1 the
	// upper block's, 2 the lower block's, 4 row r (U only).
	uKind, vKind := make([]int, k), make([]int, k)
	for j := range k {
		uKind[j], vKind[j] = 1, 1
		if j == nl {
			uKind[j] = 4
		} else if j > nl {
			uKind[j], vKind[j] = 2, 2
		}
	}
	rotV := func(i, j int, c, s T) { // col i ← c·col i + s·col j, col j ← −s·col i + c·col j
		vi, vj := v[lo+(lo+i)*ld:lo+nv+(lo+i)*ld], v[lo+(lo+j)*ld:lo+nv+(lo+j)*ld]
		for x := range vi {
			a, b := vi[x], vj[x]
			vi[x], vj[x] = c*a+s*b, -s*a+c*b
		}
	}
	if sqre == 1 {
		// The lower block's null vector also meets row r only: rotate it
		// into column r, and what is left is the merged block's null vector.
		zx := beta * v[r+1+(lo+k)*ld]
		if h := hypotT(z[nl], zx); h != 0 {
			c, s := z[nl]/h, zx/h
			vr, vx := v[lo+r*ld:lo+nv+r*ld], v[lo+(lo+k)*ld:lo+nv+(lo+k)*ld]
			for x := range vr {
				a, b := vr[x], vx[x]
				vr[x], vx[x] = c*a+s*b, -s*a+c*b
			}
			z[nl] = h
		}
		vKind[nl] = 3
	}
	var dmax T
	for _, x := range dl {
		dmax = max(dmax, x)
	}
	tol := 64 * eps * max(dmax, absT(alpha), absT(beta))
	order := make([]int, 0, k)
	for j := range k {
		if j != nl {
			order = append(order, j)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return dl[order[a]] < dl[order[b]] })
	if absT(z[nl]) <= tol {
		z[nl] = tol
	}
	deflated := make([]bool, k)
	prev := nl
	for _, j := range order {
		switch {
		case absT(z[j]) <= tol:
			deflated[j] = true
		case dl[j] <= tol:
			// A singular value that is zero to working accuracy: row j of M
			// is negligible, and its column joins column r's.
			h := hypotT(z[nl], z[j])
			rotV(nl, j, z[nl]/h, z[j]/h)
			z[nl], z[j], dl[j] = h, 0, 0
			vKind[nl] |= vKind[j]
			vKind[j] = vKind[nl]
			deflated[j] = true
		case prev != nl && dl[j]-dl[prev] <= tol:
			// Two equal singular values: rotate both sides so that z[prev]
			// vanishes, which deflates prev.
			h := hypotT(z[prev], z[j])
			c, s := z[j]/h, z[prev]/h
			rotV(prev, j, c, -s)
			ui, uj := u[lo+(lo+prev)*ld:lo+k+(lo+prev)*ld], u[lo+(lo+j)*ld:lo+k+(lo+j)*ld]
			for x := range ui {
				a, b := ui[x], uj[x]
				ui[x], uj[x] = c*a-s*b, s*a+c*b
			}
			z[prev], z[j] = 0, h
			uKind[prev] |= uKind[j]
			uKind[j] = uKind[prev]
			vKind[prev] |= vKind[j]
			vKind[j] = vKind[prev]
			deflated[prev] = true
			prev = j
		default:
			prev = j
		}
	}
	nd := []int{nl}
	var df []int
	for _, j := range order {
		if deflated[j] {
			df = append(df, j)
		} else {
			nd = append(nd, j)
		}
	}
	kk := len(nd)
	dk, zk := make([]T, kk), make([]T, kk)
	var rho T
	for i, j := range nd {
		dk[i], zk[i] = dl[j], z[j]
		rho += z[j] * z[j]
	}
	zn := sqrtT(rho)
	for i := range zk {
		zk[i] /= zn
	}
	orig, mu := secularRoots(dk, zk, rho, true)
	// diff(i, j) = σ_j² − dk_i², accurate through the root's origin.
	diff := func(i, j int) T {
		o := dk[orig[j]]
		return (o-dk[i])*(o+dk[i]) + mu[j]
	}
	gap := func(i, j int) T { return (dk[j] - dk[i]) * (dk[j] + dk[i]) }
	zh := make([]T, kk)
	for i := 0; i < kk; i++ {
		p := diff(i, kk-1) / rho
		for j := 0; j < i; j++ {
			p *= diff(i, j) / gap(i, j)
		}
		for j := i; j < kk-1; j++ {
			p *= diff(i, j) / gap(i, j+1)
		}
		zh[i] = sqrtT(absT(p))
		if zk[i] < 0 {
			zh[i] = -zh[i]
		}
	}
	// Singular vectors of M, column j for σ_j: v_i ∝ ẑ_i/(dk_i² − σ_j²),
	// u_i ∝ dk_i·v_i except at the pole 0 (index 0, row r), u_0 ∝ −1/√rho.
	um, vm := workGet[T](kk*kk), workGet[T](kk*kk)
	defer workPut(um)
	defer workPut(vm)
	linalgParallel(kk, max(1, 4096/kk), func(j0, j1 int) {
		for j := j0; j < j1; j++ {
			uc, vc := um[j*kk:(j+1)*kk], vm[j*kk:(j+1)*kk]
			var nu, nv T
			for i := 0; i < kk; i++ {
				t := zh[i] / -diff(i, j)
				vc[i] = t
				nv += t * t
				if i > 0 {
					uc[i] = dk[i] * t
					nu += uc[i] * uc[i]
				}
			}
			uc[0] = -1 / zn
			nu += uc[0] * uc[0]
			nu, nv = sqrtT(nu), sqrtT(nv)
			for i := range uc {
				uc[i] /= nu
				vc[i] /= nv
			}
		}
	})
	// The old blocks, saved before the merged vectors overwrite them.
	su, sv := workGet[T](k*k), workGet[T](nv*k)
	defer workPut(su)
	defer workPut(sv)
	for j := 0; j < k; j++ {
		copy(su[j*k:(j+1)*k], u[lo+(lo+j)*ld:lo+k+(lo+j)*ld])
		copy(sv[j*nv:(j+1)*nv], v[lo+(lo+j)*ld:lo+nv+(lo+j)*ld])
	}
	bdMergeGemm(ld, lo, k, kk, []int{0, nl, nl + 1, k}, []int{1, 4, 2}, nd, uKind, su, um, u)
	bdMergeGemm(ld, lo, nv, kk, []int{0, nl + 1, nv}, []int{1, 2}, nd, vKind, sv, vm, v)
	for i, sg := range mu {
		o := dk[orig[i]]
		d[lo+i] = sqrtT(o*o + sg)
	}
	for i, j := range df {
		c := lo + kk + i
		copy(u[lo+c*ld:lo+k+c*ld], su[j*k:(j+1)*k])
		copy(v[lo+c*ld:lo+nv+c*ld], sv[j*nv:(j+1)*nv])
		d[c] = dl[j]
	}
}

// bdMergeGemm sets columns lo..lo+kk−1 of the block of dst (rows lo..lo+h−1)
// to old·coef, old being the saved block's columns nd and coef the kk×kk
// singular vectors of M. Rows bounds[g]..bounds[g+1]−1 (block-relative)
// only meet the old columns whose kind has bit want[g], so each group of
// rows is one GEMM over just those columns.
func bdMergeGemm[T Float](ld, lo, h, kk int, bounds, want, nd, kind []int, old, coef, dst []T) {
	for g, w := range want {
		r0, r1 := bounds[g], bounds[g+1]
		hr := r1 - r0
		if hr == 0 {
			continue
		}
		var sel []int
		for i, j := range nd {
			if kind[j]&w != 0 {
				sel = append(sel, i)
			}
		}
		out := dst[lo+r0+lo*ld:]
		if len(sel) == 0 {
			for c := 0; c < kk; c++ {
				clear(out[c*ld : c*ld+hr])
			}
			continue
		}
		ks := len(sel)
		qn, cs := workGet[T](hr*ks), workGet[T](ks*kk)
		for c, i := range sel {
			copy(qn[c*hr:(c+1)*hr], old[nd[i]*h+r0:nd[i]*h+r1])
		}
		// The rows sel of coef, column by column: both sides contiguous.
		for col := 0; col < kk; col++ {
			src, dst := coef[col*kk:(col+1)*kk], cs[col*ks:(col+1)*ks]
			for c, i := range sel {
				dst[c] = src[i]
			}
		}
		colGemm(false, false, hr, kk, ks, 1, qn, hr, cs, ks, 0, out, ld)
		workPut(qn)
		workPut(cs)
	}
}
