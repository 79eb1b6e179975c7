package tensor

// The secular equation of the divide-and-conquer merges: the eigenvalues
// of diag(δ) + rho·z·zᵀ (‖z‖ = 1, rho > 0, δ ascending and distinct, no z
// zero) are the roots of f(λ) = 1/rho + Σ z_j²/(δ_j − λ), one between each
// pair of poles and the last below δ_{k−1} + rho. Each root is returned as
// an offset mu from its nearer pole δ_org, which keeps the differences
// λ − δ_j accurate to a few ulps of themselves, as the eigenvectors need.

// secularRootsSplit is the number of roots from which they are shared
// among goroutines (each costs O(k) per iteration).
const secularRootsSplit = 64

// secularRoots returns the origin and offset of every root. With sq set
// the poles are δ_j = d_j² (the singular value merges, d ≥ 0), and the
// pole differences are formed as (d_j − d_org)·(d_j + d_org), which keeps
// them as accurate as d itself.
func secularRoots[T Float](d, z []T, rho T, sq bool) ([]int, []T) {
	k := len(d)
	orig, mu := make([]int, k), make([]T, k)
	linalgParallel(k, secularRootsSplit, func(i0, i1 int) {
		buf := make([]T, 2*k)
		for i := i0; i < i1; i++ {
			orig[i], mu[i] = secularRoot(i, d, z, rho, sq, buf)
		}
	})
	return orig, mu
}

// poleDiffs fills del with δ_j − δ_org.
func poleDiffs[T Float](d []T, org int, sq bool, del []T) {
	o := d[org]
	if sq {
		for j, x := range d {
			del[j] = (x - o) * (x + o)
		}
		return
	}
	for j, x := range d {
		del[j] = x - o
	}
}

// secularRoot finds root i by the "middle way" of LAPACK's dlaed4 (Li
// 1993): f is modelled near the current point by a constant plus one pole
// term for each of the two poles around the root, matching f and the
// derivatives of its two sides, and the model's root is the next point; a
// step that would leave the bracket of the root bisects it instead. It
// converges in a handful of evaluations of f.
func secularRoot[T Float](i int, d, z []T, rho T, sq bool, buf []T) (int, T) {
	k := len(d)
	eps := epsT[T]()
	delA, delB := buf[:k], buf[k:2*k]
	rhoInv := 1 / rho
	// eval returns f at offset tau from the poles del, the derivatives of
	// the sums over j ≤ split and j > split, and a bound on the rounding
	// error of f.
	eval := func(del []T, tau T, split int) (f, dpsi, dphi, errb T) {
		f = rhoInv
		errb = rhoInv
		for j := 0; j <= split; j++ {
			t := z[j] / (del[j] - tau)
			f += z[j] * t
			dpsi += t * t
			errb += absT(z[j] * t)
		}
		for j := split + 1; j < k; j++ {
			t := z[j] / (del[j] - tau)
			f += z[j] * t
			dphi += t * t
			errb += absT(z[j] * t)
		}
		return
	}
	if k == 1 {
		return 0, rho * z[0] * z[0]
	}
	var org, split int
	var lo, hi T
	del := delA
	poleDiffs(d, i, sq, delA)
	if i == k-1 {
		org, split, lo, hi = i, k-2, 0, rho
	} else {
		gap := delA[i+1]
		split = i
		mid := gap / 2
		fm, _, _, _ := eval(delA, mid, split)
		// The first guess (as dlaed4's): f with the poles other than the
		// two around the root frozen at their value at the midpoint, a
		// constant c, whose root solves a quadratic.
		zi2, zj2 := z[i]*z[i], z[i+1]*z[i+1]
		c := fm + zi2/mid - zj2/mid
		var qa, qb, qc T
		if fm > 0 {
			org, lo, hi = i, 0, mid
			qa, qb, qc = c, -(c*gap + zi2 + zj2), zi2*gap
		} else {
			org, lo, hi = i+1, -mid, 0
			poleDiffs(d, i+1, sq, delB)
			del = delB
			qa, qb, qc = c, c*gap-zi2-zj2, -zj2*gap
		}
		tau := quadRootIn(qa, qb, qc, lo, hi)
		return secularIterate(org, split, del, tau, lo, hi, eval, k, eps)
	}
	return secularIterate(org, split, del, (lo+hi)/2, lo, hi, eval, k, eps)
}

// quadRootIn returns the root of a·x² + b·x + c in the open interval
// (lo, hi), or the interval's midpoint when there is none, computed in the
// form that does not cancel.
func quadRootIn[T Float](a, b, c, lo, hi T) T {
	in := func(x T) bool { return x > lo && x < hi }
	if a == 0 {
		if x := -c / b; in(x) {
			return x
		}
		return (lo + hi) / 2
	}
	disc := sqrtT(absT(b*b - 4*a*c))
	q := -(b + disc) / 2
	if b < 0 {
		q = -(b - disc) / 2
	}
	if x := c / q; in(x) {
		return x
	}
	if x := q / a; in(x) {
		return x
	}
	return (lo + hi) / 2
}

// secularIterate refines the root bracketed by (lo, hi), as an offset tau
// from the pole org, from the first guess tau.
func secularIterate[T Float](org, split int, del []T, tau, lo, hi T, eval func(del []T, tau T, split int) (f, dpsi, dphi, errb T), k int, eps T) (int, T) {
	for iter := 0; iter < 100; iter++ {
		f, dpsi, dphi, errb := eval(del, tau, split)
		if absT(f) <= 8*eps*T(k)*errb || f == 0 {
			break
		}
		if f > 0 {
			hi = tau
		} else {
			lo = tau
		}
		if hi-lo <= 2*eps*max(absT(lo), absT(hi)) {
			break
		}
		// The two poles around the root, as offsets from tau.
		di, dj := del[split]-tau, del[split+1]-tau
		c := f - di*dpsi - dj*dphi
		a := (di+dj)*f - di*dj*(dpsi+dphi)
		b := di * dj * f
		var eta T
		switch {
		case c == 0:
			eta = b / a
		case a <= 0:
			eta = (a - sqrtT(absT(a*a-4*b*c))) / (2 * c)
		default:
			eta = 2 * b / (a + sqrtT(absT(a*a-4*b*c)))
		}
		if f*eta >= 0 || eta != eta {
			// The model's step points the wrong way: Newton's instead.
			eta = -f / (dpsi + dphi)
		}
		next := tau + eta
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if absT(next-tau) <= 2*eps*absT(tau) {
			tau = next
			break
		}
		tau = next
	}
	return org, tau
}
