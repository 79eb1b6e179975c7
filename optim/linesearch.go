package optim

import "math"

// wolfeSearch finds a step α along d from xk that satisfies the strong
// Wolfe conditions
//
//	φ(α) ≤ φ(0) + c₁αφ'(0)   and   |φ'(α)| ≤ c₂|φ'(0)|
//
// with φ(α) = f(P(xk + αd)), P the projection onto the bounds (identity
// without bounds). It is Algorithm 3.5 of Nocedal & Wright with the zoom of
// Algorithm 3.6, both choosing trial steps by cubic interpolation.
//
// A trial point where f fails (error, NaN or Inf) counts as φ = +Inf, so
// the search shrinks the step past it. The buffers are allocated once per
// Minimize and reused.
type wolfeSearch struct {
	xk, d  []float64 // start and direction
	lo, hi []float64 // bounds, nil if none
	f0     float64   // φ(0)
	dphi0  float64   // φ'(0) < 0
	c1, c2 float64
	budget int // evaluations left

	xt, gt []float64 // the trial point and its gradient
	xb, gb []float64 // the accepted point, or the best sufficient-decrease point
	fb     float64
	found  bool // xb holds a point with sufficient decrease

	eval func(x, g []float64) (float64, bool) // f at x (may round x); false on failure
}

// phi evaluates the trial step a and returns φ(a), φ'(a) and whether f
// succeeded. Points with sufficient decrease are remembered, the lowest
// first, so an exhausted search can still return progress.
func (w *wolfeSearch) phi(a float64) (float64, float64, bool) {
	for i, x := range w.xk {
		w.xt[i] = project(x+a*w.d[i], w.lo, w.hi, i)
	}
	w.budget--
	f, ok := w.eval(w.xt, w.gt)
	if !ok {
		return math.Inf(1), math.NaN(), false
	}
	// The derivative of the projected path: a clamped coordinate does not
	// move with α.
	var dp float64
	for i, g := range w.gt {
		if w.lo == nil || (w.xt[i] > w.lo[i] && w.xt[i] < w.hi[i]) {
			dp += g * w.d[i]
		}
	}
	if f <= w.f0+w.c1*a*w.dphi0 && (!w.found || f < w.fb) {
		w.keep(f)
	}
	return f, dp, true
}

func (w *wolfeSearch) keep(f float64) {
	copy(w.xb, w.xt)
	copy(w.gb, w.gt)
	w.fb = f
	w.found = true
}

// search runs Algorithm 3.5 from the first trial step a1. It reports
// whether a step was accepted: one that satisfies the strong Wolfe
// conditions or, if the budget runs out first, the lowest point found with
// sufficient decrease. The accepted point is in xb, gb, fb.
func (w *wolfeSearch) search(a1 float64) bool {
	w.found = false
	aPrev, fPrev, dPrev := 0.0, w.f0, w.dphi0
	a := a1
	for i := 0; w.budget > 0; i++ {
		f, dp, ok := w.phi(a)
		if !ok || f > w.f0+w.c1*a*w.dphi0 || (i > 0 && f >= fPrev) {
			return w.zoom(aPrev, fPrev, dPrev, a, f, dp, ok)
		}
		if math.Abs(dp) <= -w.c2*w.dphi0 {
			w.keep(f)
			return true
		}
		if dp >= 0 {
			return w.zoom(a, f, dp, aPrev, fPrev, dPrev, true)
		}
		// Extrapolate: the cubic's minimiser, kept well beyond a and at
		// most ten times it (as PyTorch's strong-Wolfe search does).
		next := cubicMin(aPrev, fPrev, dPrev, a, f, dp, a+0.01*(a-aPrev), 10*a)
		aPrev, fPrev, dPrev = a, f, dp
		a = next
	}
	return w.found
}

// zoom is Algorithm 3.6: lo has sufficient decrease and the lowest φ so
// far, and [lo, hi] (in either order) contains a strong-Wolfe step.
// hiOK is false when f failed at hi, whose φ' is then unknown and the
// interval is bisected instead of interpolated.
func (w *wolfeSearch) zoom(lo, flo, dlo, hi, fhi, dhi float64, hiOK bool) bool {
	for w.budget > 0 {
		left, right := min(lo, hi), max(lo, hi)
		width := right - left
		if width <= 1e-16*max(1, right) {
			break
		}
		var a float64
		if hiOK && !math.IsInf(fhi, 0) {
			// Safeguard: stay 10% of the width away from both ends, so the
			// interval shrinks geometrically even when the cubic stalls.
			a = cubicMin(lo, flo, dlo, hi, fhi, dhi, left+0.1*width, right-0.1*width)
		} else {
			a = left + width/2
		}
		f, dp, ok := w.phi(a)
		if !ok || f > w.f0+w.c1*a*w.dphi0 || f >= flo {
			hi, fhi, dhi, hiOK = a, f, dp, ok
			continue
		}
		if math.Abs(dp) <= -w.c2*w.dphi0 {
			w.keep(f)
			return true
		}
		if dp*(hi-lo) >= 0 {
			hi, fhi, dhi, hiOK = lo, flo, dlo, true
		}
		lo, flo, dlo = a, f, dp
	}
	return w.found
}

// cubicMin returns the minimiser of the cubic that interpolates φ and φ' at
// a and b (Nocedal & Wright eq. 3.59), clamped to [lo, hi]; the midpoint of
// [lo, hi] when the cubic has no minimiser or the numbers are not finite.
func cubicMin(a, fa, da, b, fb, db, lo, hi float64) float64 {
	d1 := da + db - 3*(fa-fb)/(a-b)
	disc := d1*d1 - da*db
	if disc >= 0 {
		d2 := math.Sqrt(disc)
		var m float64
		if a <= b {
			m = b - (b-a)*((db+d2-d1)/(db-da+2*d2))
		} else {
			m = a - (a-b)*((da+d2-d1)/(da-db+2*d2))
		}
		if !math.IsNaN(m) && !math.IsInf(m, 0) {
			return min(max(m, lo), hi)
		}
	}
	return (lo + hi) / 2
}

// project clamps x to the i-th bounds, if any.
func project(x float64, lo, hi []float64, i int) float64 {
	if lo == nil {
		return x
	}
	return min(max(x, lo[i]), hi[i])
}
