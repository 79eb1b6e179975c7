package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/tensor"
)

// LBFGSOptions configures Minimize. Zero-valued fields take the defaults in
// brackets; a negative GradTol or FuncTol switches that test off.
type LBFGSOptions struct {
	History       int     // correction pairs kept [10]
	MaxIter       int     // iterations (line searches) [100]
	GradTol       float64 // stop when max |g| (projected gradient with bounds) <= GradTol [1e-5]
	FuncTol       float64 // stop when |Δf| <= FuncTol·max(|f_old|, |f_new|) [1e-9]
	C1            float64 // sufficient-decrease constant of the Wolfe conditions [1e-4]
	C2            float64 // curvature constant of the strong Wolfe conditions [0.9]
	MaxLineSearch int     // evaluations of f per line search [25]

	// Lower and Upper are optional per-element bounds, one tensor per x
	// with its shape (either may be nil for no bound on that side; use ±Inf
	// elements for partial bounds). The start is clamped into the box,
	// every trial point is clamped (projected), coordinates held at a bound
	// by the gradient do not move, and convergence is judged on the
	// projected gradient P(x − g) − x. This is a simple projected L-BFGS,
	// not L-BFGS-B: it is reliable when few bounds are active.
	Lower, Upper []*tensor.Tensor

	// Callback, if set, is called after every iteration with the iteration
	// number (from 1), the objective and the gradient's max-norm
	// (projected, with bounds).
	Callback func(iter int, f, gnorm float64)
}

// LBFGSResult reports how Minimize ended.
type LBFGSResult struct {
	F           float64 // objective at the returned x
	GradNorm    float64 // max |g| (projected) at the returned x
	Iterations  int     // completed iterations
	Evaluations int     // calls of f, including the one at the start
	Converged   bool    // a tolerance was met (GradTol or FuncTol)
	Reason      string  // why it stopped
}

// Objective evaluates a function at x and writes its gradient into grad,
// whose tensors have the shapes and dtypes of x and are zeroed before each
// call. It must not keep x or grad. An error (or a NaN or infinite value)
// marks x as outside the function's domain.
type Objective func(x, grad []*tensor.Tensor) (float64, error)

// Minimize minimises f with L-BFGS (Nocedal & Wright, Algorithm 7.5, with
// the two-loop recursion of Algorithm 7.4) and a line search satisfying the strong Wolfe
// conditions (Algorithms 3.5 and 3.6, cubic interpolation). x holds the
// starting point and is updated in place to the best point found; x may
// mix float32 and float64 tensors (the method's vectors are float64, and f
// always sees and is judged at the point rounded to x's dtypes).
//
// If f fails at the start, Minimize returns its error (or one wrapping
// ErrNonFinite for a NaN or infinite value or gradient) with x unchanged.
// A failure during a line search counts as +Inf, so the step shrinks and
// the search goes on; x is never left at a failed point.
// When a line search finds no acceptable step, the history is dropped and
// a steepest-descent step tried; if that fails too, Minimize stops with
// Converged false and x at the last good point. Misuse (non-contiguous x,
// bounds of the wrong shape, bad constants) is returned as a *tensor.Error.
func Minimize(f Objective, x []*tensor.Tensor, cfg LBFGSOptions) (res LBFGSResult, err error) {
	defer tensor.Recover(&err)
	const op = "Minimize"
	cfg = lbfgsDefaults(cfg)
	n := checkX(op, x)
	lo, hi := bounds(op, x, cfg.Lower, cfg.Upper, n)

	grads := make([]*tensor.Tensor, len(x))
	for i, t := range x {
		grads[i] = tensor.ZerosLike(t)
	}
	// eval writes xs into x (rounding to x's dtypes), reads the rounded
	// point back into xs so the method works with the point f saw, and
	// gathers the gradient.
	var ferr error
	eval := func(xs, g []float64) (float64, bool) {
		scatter(x, xs)
		gather(xs, x)
		for _, t := range grads {
			t.Fill(0)
		}
		res.Evaluations++
		v, e := f(x, grads)
		if e != nil {
			ferr = e
			return math.NaN(), false
		}
		gather(g, grads)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return v, false
		}
		for _, gi := range g {
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				return v, false
			}
		}
		return v, true
	}

	x0 := make([]float64, n)
	gather(x0, x)
	xk := make([]float64, n)
	gk := make([]float64, n)
	for i, v := range x0 {
		xk[i] = project(v, lo, hi, i)
	}
	// Until the start is known to be good, any exit (also a panic from f)
	// restores the caller's x; afterwards it leaves x at xk.
	good := x0
	defer func() { scatter(x, good) }()

	fk, ok := eval(xk, gk)
	if !ok {
		if ferr != nil {
			return res, fmt.Errorf("optim.Minimize: objective failed at the starting point: %w", ferr)
		}
		return res, fmt.Errorf("optim.Minimize: objective or gradient is %w at the starting point (f = %g)", ErrNonFinite, fk)
	}
	good = xk
	res.F = fk
	res.GradNorm = projGradNorm(xk, gk, lo, hi)
	if res.GradNorm <= cfg.GradTol {
		res.Converged, res.Reason = true, "gradient norm below GradTol"
		return res, nil
	}

	m := cfg.History
	s := make([][]float64, m)
	y := make([][]float64, m)
	for i := range s {
		s[i] = make([]float64, n)
		y[i] = make([]float64, n)
	}
	rho := make([]float64, m)
	alpha := make([]float64, m)
	stored, head := 0, 0 // pairs held; index of the next slot to write

	d := make([]float64, n)
	free := make([]bool, n)
	w := &wolfeSearch{
		xk: xk, d: d, lo: lo, hi: hi, c1: cfg.C1, c2: cfg.C2,
		xt: make([]float64, n), gt: make([]float64, n),
		xb: make([]float64, n), gb: make([]float64, n),
		eval: eval,
	}

	for res.Iterations < cfg.MaxIter {
		// Coordinates at a bound that the gradient pushes outward stay put.
		for i := range free {
			free[i] = lo == nil || !((xk[i] <= lo[i] && gk[i] > 0) || (xk[i] >= hi[i] && gk[i] < 0))
		}
		twoLoop(d, gk, free, s, y, rho, alpha, stored, head)
		dg := dot(d, gk)
		if !(dg < 0) {
			// Not a descent direction (possible once bounds cut it): restart
			// from steepest descent.
			stored = 0
			twoLoop(d, gk, free, s, y, rho, alpha, 0, head)
			if dg = dot(d, gk); !(dg < 0) {
				res.Reason = "no descent direction"
				return res, nil
			}
		}
		a1 := 1.0
		if stored == 0 {
			// No curvature information yet: a first step of at most one
			// unit per coordinate.
			a1 = min(1, 1/maxAbs(d))
		}
		w.f0, w.dphi0, w.budget = fk, dg, cfg.MaxLineSearch
		ferr = nil
		if !w.search(a1) {
			if stored > 0 {
				stored = 0 // the curvature pairs misled us; retry without them
				continue
			}
			res.Reason = "line search found no acceptable step"
			if ferr != nil {
				res.Reason += fmt.Sprintf(" (last objective error: %v)", ferr)
			}
			return res, nil
		}
		// Store the pair (s, y) and move to the accepted point.
		sk, yk := s[head], y[head]
		var sy, yy, smax float64
		for i := range xk {
			sk[i] = w.xb[i] - xk[i]
			yk[i] = w.gb[i] - gk[i]
			sy += sk[i] * yk[i]
			yy += yk[i] * yk[i]
			smax = max(smax, math.Abs(sk[i]))
		}
		// Keep only pairs with positive curvature, so H stays positive
		// definite (always true under the Wolfe conditions without bounds).
		if sy > 1e-10*yy {
			rho[head] = 1 / sy
			head = (head + 1) % m
			stored = min(stored+1, m)
		}
		fOld := fk
		copy(xk, w.xb)
		copy(gk, w.gb)
		fk = w.fb
		res.Iterations++
		res.F = fk
		res.GradNorm = projGradNorm(xk, gk, lo, hi)
		if cfg.Callback != nil {
			cfg.Callback(res.Iterations, fk, res.GradNorm)
		}
		switch {
		case res.GradNorm <= cfg.GradTol:
			res.Converged, res.Reason = true, "gradient norm below GradTol"
			return res, nil
		case math.Abs(fOld-fk) <= cfg.FuncTol*max(math.Abs(fOld), math.Abs(fk)):
			res.Converged, res.Reason = true, "relative change of f below FuncTol"
			return res, nil
		case smax <= 1e-16*max(1, maxAbs(xk)):
			res.Reason = "step too small to change x"
			return res, nil
		}
	}
	res.Reason = "maximum iterations reached"
	return res, nil
}

func lbfgsDefaults(c LBFGSOptions) LBFGSOptions {
	if c.History == 0 {
		c.History = 10
	}
	if c.MaxIter == 0 {
		c.MaxIter = 100
	}
	if c.MaxLineSearch == 0 {
		c.MaxLineSearch = 25
	}
	def(&c.GradTol, 1e-5)
	def(&c.FuncTol, 1e-9)
	def(&c.C1, 1e-4)
	def(&c.C2, 0.9)
	if c.History < 1 || c.MaxIter < 0 || c.MaxLineSearch < 1 {
		tensor.Fail("Minimize", "History %d, MaxIter %d and MaxLineSearch %d must be positive", c.History, c.MaxIter, c.MaxLineSearch)
	}
	if !(0 < c.C1 && c.C1 < c.C2 && c.C2 < 1) {
		tensor.Fail("Minimize", "Wolfe constants need 0 < C1 < C2 < 1, got C1 %g, C2 %g", c.C1, c.C2)
	}
	return c
}

// checkX validates x and returns its total number of elements.
func checkX(op string, x []*tensor.Tensor) int {
	if len(x) == 0 {
		tensor.Fail(op, "no parameters")
	}
	n := 0
	for i, t := range x {
		if t == nil {
			tensor.Fail(op, "x[%d] is nil", i)
		}
		if t.DType() != tensor.Float32 && t.DType() != tensor.Float64 {
			tensor.Fail(op, "x[%d] has unsupported dtype %v", i, t.DType())
		}
		if !t.IsContiguous() {
			tensor.Fail(op, "x[%d] of shape %s is not contiguous", i, tensor.FormatShape(t.Shape()))
		}
		if d := t.Device(); d != tensor.CPU {
			tensor.Fail(op, "x[%d] of shape %s lives on %v: L-BFGS runs on the CPU; move it with To(tensor.CPU)", i, tensor.FormatShape(t.Shape()), d)
		}
		n += t.Size()
	}
	return n
}

// bounds flattens the optional bounds into float64 vectors (nil when there
// are none); a missing side is ±Inf.
func bounds(op string, x, lower, upper []*tensor.Tensor, n int) (lo, hi []float64) {
	if lower == nil && upper == nil {
		return nil, nil
	}
	lo, hi = make([]float64, n), make([]float64, n)
	for i := range lo {
		lo[i], hi[i] = math.Inf(-1), math.Inf(1)
	}
	for _, side := range []struct {
		name string
		ts   []*tensor.Tensor
		dst  []float64
	}{{"Lower", lower, lo}, {"Upper", upper, hi}} {
		if side.ts == nil {
			continue
		}
		if len(side.ts) != len(x) {
			tensor.Fail(op, "%s has %d tensors for %d parameters", side.name, len(side.ts), len(x))
		}
		off := 0
		for i, t := range side.ts {
			if t == nil || !slices.Equal(t.Shape(), x[i].Shape()) {
				shape := "nil"
				if t != nil {
					shape = tensor.FormatShape(t.Shape())
				}
				tensor.Fail(op, "%s[%d] has shape %s, x[%d] has shape %s", side.name, i, shape, i, tensor.FormatShape(x[i].Shape()))
			}
			copy(side.dst[off:], t.Values())
			off += t.Size()
		}
	}
	for i := range lo {
		if !(lo[i] <= hi[i]) {
			tensor.Fail(op, "element %d: lower bound %g is not <= upper bound %g", i, lo[i], hi[i])
		}
	}
	return lo, hi
}

// twoLoop sets d = −H·g restricted to the free coordinates, with H the
// L-BFGS inverse-Hessian approximation from the stored pairs (Nocedal &
// Wright, Algorithm 7.4) scaled by γ = sᵀy/yᵀy of the newest pair.
func twoLoop(d, g []float64, free []bool, s, y [][]float64, rho, alpha []float64, stored, head int) {
	m := len(s)
	for i := range d {
		if free[i] {
			d[i] = -g[i]
		} else {
			d[i] = 0
		}
	}
	if stored == 0 {
		return
	}
	for k := 1; k <= stored; k++ { // newest to oldest
		j := (head - k + m) % m
		alpha[j] = rho[j] * dot(s[j], d)
		axpy(-alpha[j], y[j], d)
	}
	newest := (head - 1 + m) % m
	gamma := 1 / (rho[newest] * dot(y[newest], y[newest]))
	for i := range d {
		d[i] *= gamma
	}
	for k := stored; k >= 1; k-- { // oldest to newest
		j := (head - k + m) % m
		beta := rho[j] * dot(y[j], d)
		axpy(alpha[j]-beta, s[j], d)
	}
	for i := range d {
		if !free[i] {
			d[i] = 0
		}
	}
}

// projGradNorm is max |P(x − g) − x|, which is max |g| without bounds.
func projGradNorm(x, g, lo, hi []float64) float64 {
	var m float64
	for i := range x {
		v := g[i]
		if lo != nil {
			v = x[i] - project(x[i]-g[i], lo, hi, i)
		}
		m = max(m, math.Abs(v))
	}
	return m
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// axpy sets y += a·x.
func axpy(a float64, x, y []float64) {
	for i := range y {
		y[i] += a * x[i]
	}
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// gather copies the tensors' elements, in order, into dst as float64.
func gather(dst []float64, ts []*tensor.Tensor) {
	off := 0
	for _, t := range ts {
		if t.DType() == tensor.Float32 {
			for i, v := range t.Float32s() {
				dst[off+i] = float64(v)
			}
		} else {
			copy(dst[off:], t.Float64s())
		}
		off += t.Size()
	}
}

// scatter writes src, in order, into the tensors, rounding to their dtype.
func scatter(ts []*tensor.Tensor, src []float64) {
	off := 0
	for _, t := range ts {
		if t.DType() == tensor.Float32 {
			d := t.Float32s()
			for i := range d {
				d[i] = float32(src[off+i])
			}
		} else {
			copy(t.Float64s(), src[off:off+t.Size()])
		}
		off += t.Size()
	}
}
