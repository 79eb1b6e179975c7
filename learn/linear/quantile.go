package linear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// QuantileOptions configures FitQuantile.
type QuantileOptions struct {
	Quantile    float64 // τ ∈ (0, 1), the quantile modelled (default 0.5, the median)
	Alpha       float64 // the L1 penalty α ≥ 0 on w (default 0: none; scikit-learn's default is 1)
	NoIntercept bool    // fit through the origin (default: fit an unpenalised intercept)
	MaxIter     int     // interior-point iterations (default 100)
	Tol         float64 // relative primal, dual and gap residual at which to stop (default 1e-9)
}

// QuantileRegressor is a linear quantile-regression fit.
type QuantileRegressor struct {
	Coef       []float64 // w
	Intercept  float64   // b (0 with NoIntercept)
	Quantile   float64   // τ
	Alpha      float64   // α
	Iterations int       // interior-point iterations run
}

// FitQuantile minimises (1/n)·Σ ρ_τ(yᵢ − xᵢw − b) + α‖w‖₁, the pinball loss
// ρ_τ(r) = max(τr, (τ−1)r) of Koenker & Bassett (1978, "Regression
// quantiles") with scikit-learn's L1 penalty, for x (n, d) and y (n).
//
// Like scikit-learn's QuantileRegressor it solves the problem as a linear
// programme: w = w⁺ − w⁻ and the residual r = u − v with every part
// non-negative, minimise nα·1ᵀ(w⁺ + w⁻) + τ·1ᵀu + (1−τ)·1ᵀv subject to
// Xw + b + u − v = y (the intercept, and w when α = 0, stay free
// variables rather than split pairs). The solver is
// Mehrotra's primal-dual predictor-corrector interior-point method
// (Mehrotra 1992, "On the implementation of a primal-dual interior point
// method"; Nocedal & Wright 2006, "Numerical Optimization", §14.2). With
// α > 0 each iteration factors an n×n matrix (Cholesky), so the fit suits
// up to a few thousand rows; with α = 0 that matrix is diagonal and only a
// (d+1)×(d+1) system is factored. Where the optimum is unique it is
// scikit-learn's to the tolerance; where it is not (ties in the data),
// the interior point lands inside the optimal face and the coefficients
// may differ from a simplex solver's while the objective agrees. Weights
// within Tol·max|w| of zero are set to exactly zero when α > 0, as the
// penalty's zeros are only approached by an interior point.
//
// Bad data and a τ outside (0, 1) or a negative α give an error naming
// the fit. When ctx is cancelled it returns the current iterate and
// ctx.Err() wrapped; after MaxIter iterations it returns it with a
// *tensor.NotConvergedError.
func FitQuantile(ctx context.Context, x, y *tensor.Tensor, opts QuantileOptions) (*QuantileRegressor, error) {
	const op = "linear.FitQuantile"
	tau, alpha, maxIter, tol := opts.Quantile, opts.Alpha, opts.MaxIter, opts.Tol
	if tau == 0 {
		tau = 0.5
	}
	if maxIter == 0 {
		maxIter = 100
	}
	if tol == 0 {
		tol = 1e-9
	}
	switch {
	case !(tau > 0 && tau < 1):
		return nil, fmt.Errorf("%s: quantile %v must lie in (0, 1)", op, tau)
	case !(alpha >= 0) || math.IsInf(alpha, 0):
		return nil, fmt.Errorf("%s: alpha %v must be non-negative and finite", op, alpha)
	case maxIter < 0 || !(tol > 0):
		return nil, fmt.Errorf("%s: need MaxIter ≥ 0 and Tol > 0, got %d and %v", op, maxIter, tol)
	}
	// The LP takes x and y as they are: centring would move the pinball
	// loss's optimum, which is not a least-squares one.
	ds, err := prepare(op, x, y, false)
	if err != nil {
		return nil, err
	}
	lp := newQuantileLP(ds, !opts.NoIntercept, tau, alpha)
	it, err := lp.solve(ctx, op, maxIter, tol)
	m := &QuantileRegressor{Quantile: tau, Alpha: alpha, Iterations: it, Coef: make([]float64, ds.d)}
	beta := lp.beta()
	if opts.NoIntercept {
		copy(m.Coef, beta)
	} else {
		m.Intercept, m.Coef = beta[0], beta[1:]
	}
	if alpha > 0 {
		// An interior point approaches the zeros of the L1 penalty without
		// reaching them: snap what lies within the tolerance.
		top := 0.0
		for _, w := range m.Coef {
			top = max(top, math.Abs(w))
		}
		for j, w := range m.Coef {
			if math.Abs(w) <= tol*top {
				m.Coef[j] = 0
			}
		}
	}
	return m, err
}

// Predict returns Xw + b for the rows of x (m, d), in x's dtype. It
// panics with a *tensor.Error when x does not have d columns.
func (m *QuantileRegressor) Predict(x *tensor.Tensor) *tensor.Tensor {
	return predict("linear.QuantileRegressor.Predict", x, m.Coef, m.Intercept)
}

// quantileLP is the linear programme min cᵀz subject to Xf·f + Az·z = y,
// z ≥ 0, with f the coefficients that carry no cost (the intercept, and
// every weight when α = 0), kept free rather than split (a split pair of
// free variables drifts off to infinity inside an interior-point method),
// and z = (w⁺, w⁻, u, v) for the penalised weights w and the residual
// parts u, v: Az = [Xp, −Xp, I, −I]. Neither matrix is formed.
type quantileLP struct {
	n, q    int
	xa      []float64 // (n, q) row-major: x, after a column of ones for the intercept
	pen     []int     // the columns of xa whose weights are split and penalised
	free    []int     // the columns whose weights are free
	y, c    []float64
	f       []float64 // free weights
	z, s, l []float64 // primal, dual slacks, dual multipliers
}

func newQuantileLP(ds *design, intercept bool, tau, alpha float64) *quantileLP {
	q := ds.d
	if intercept {
		q++
	}
	lp := &quantileLP{n: ds.n, q: q, xa: make([]float64, ds.n*q), y: ds.y}
	off := q - ds.d
	for i := range ds.n {
		if intercept {
			lp.xa[i*q] = 1
		}
		for j, c := range ds.cols {
			lp.xa[i*q+off+j] = c[i]
		}
	}
	for j := range q {
		if j < off || alpha == 0 {
			lp.free = append(lp.free, j)
		} else {
			lp.pen = append(lp.pen, j)
		}
	}
	p := len(lp.pen)
	lp.c = make([]float64, 2*p+2*ds.n)
	for k := range 2 * p {
		lp.c[k] = float64(ds.n) * alpha
	}
	for i := range ds.n {
		lp.c[2*p+i], lp.c[2*p+ds.n+i] = tau, 1-tau
	}
	lp.f = make([]float64, len(lp.free))
	return lp
}

// beta returns the q weights: the free ones and w⁺ − w⁻.
func (lp *quantileLP) beta() []float64 {
	b := make([]float64, lp.q)
	for k, j := range lp.free {
		b[j] = lp.f[k]
	}
	p := len(lp.pen)
	for k, j := range lp.pen {
		b[j] = lp.z[k] - lp.z[p+k]
	}
	return b
}

// mulA returns Xf·f + Az·v (f may be nil for zero).
func (lp *quantileLP) mulA(f, v []float64) []float64 {
	n, q, p := lp.n, lp.q, len(lp.pen)
	out := make([]float64, n)
	for i := range n {
		row := lp.xa[i*q : (i+1)*q]
		s := v[2*p+i] - v[2*p+n+i]
		for k, j := range lp.pen {
			s += row[j] * (v[k] - v[p+k])
		}
		for k, j := range lp.free {
			if f != nil {
				s += row[j] * f[k]
			}
		}
		out[i] = s
	}
	return out
}

// mulAT returns Azᵀ·v and Xfᵀ·v.
func (lp *quantileLP) mulAT(v []float64) (az, xf []float64) {
	n, q, p := lp.n, lp.q, len(lp.pen)
	az, xf = make([]float64, 2*p+2*n), make([]float64, len(lp.free))
	for i, vi := range v {
		row := lp.xa[i*q : (i+1)*q]
		for k, j := range lp.pen {
			az[k] += row[j] * vi
		}
		for k, j := range lp.free {
			xf[k] += row[j] * vi
		}
		az[2*p+i], az[2*p+n+i] = vi, -vi
	}
	for k := range p {
		az[p+k] = -az[k]
	}
	return az, xf
}

// columns returns the given columns of xa as an (n, len(cols)) tensor,
// column k scaled by scale[k] (nil: 1).
func (lp *quantileLP) columns(cols []int, scale []float64) *tensor.Tensor {
	n, q, m := lp.n, lp.q, len(cols)
	b := make([]float64, n*m)
	for k, j := range cols {
		e := 1.0
		if scale != nil {
			e = scale[k]
		}
		for i := range n {
			b[i*m+k] = lp.xa[i*q+j] * e
		}
	}
	return tensor.FromFloat64s(b, n, m)
}

// system is the factored Newton system: M = Az·diag(d)·Azᵀ =
// Xp·diag(d_w⁺ + d_w⁻)·Xpᵀ + diag(d_u + d_v), by its Cholesky factor or,
// with no penalised weights, its diagonal; and, with free weights, M⁻¹Xf
// and the factor of the Schur complement XfᵀM⁻¹Xf.
type system struct {
	m, minvXf, schur *tensor.Tensor
	diag             []float64
}

// solveM returns M⁻¹b for b (n) or (n, k).
func (sys *system) solveM(b *tensor.Tensor) *tensor.Tensor {
	if sys.m != nil {
		return tensor.CholeskySolve(sys.m, b)
	}
	out := b.Clone()
	v, k := out.Float64s(), out.Size()/len(sys.diag)
	for i := range v {
		v[i] /= sys.diag[i/k]
	}
	return out
}

func (lp *quantileLP) factor(d []float64) (*system, error) {
	n, p := lp.n, len(lp.pen)
	g := make([]float64, n)
	for i := range n {
		g[i] = d[2*p+i] + d[2*p+n+i]
	}
	sys := &system{diag: g}
	if p > 0 {
		sc := make([]float64, p)
		for k := range p {
			sc[k] = math.Sqrt(d[k] + d[p+k])
		}
		b := lp.columns(lp.pen, sc)
		m := tensor.MatMulT(b, b, false, true)
		mv := m.Float64s()
		for i := range n {
			mv[i*n+i] += g[i]
		}
		var err error
		if sys.m, err = cholesky(m); err != nil {
			return nil, err
		}
	}
	if len(lp.free) > 0 {
		xf := lp.columns(lp.free, nil)
		sys.minvXf = sys.solveM(xf)
		var err error
		if sys.schur, err = cholesky(tensor.MatMulT(xf, sys.minvXf, true, false)); err != nil {
			return nil, err
		}
	}
	return sys, nil
}

// cholesky factors a, adding a little jitter to the diagonal when
// rounding leaves it indefinite near the optimum.
func cholesky(a *tensor.Tensor) (*tensor.Tensor, error) {
	n := a.Shape()[0]
	av := a.Float64s()
	top := 0.0
	for i := range n {
		top = max(top, av[i*n+i])
	}
	for jitter := 0.0; ; jitter = max(jitter*100, top*1e-14) {
		for i := range n {
			av[i*n+i] += jitter
		}
		l, err := tensor.Cholesky(a)
		if err == nil || jitter > top*1e-6 {
			return l, err
		}
		for i := range n {
			av[i*n+i] -= jitter
		}
	}
}

// direction solves the Newton system for the residuals rb (primal), rf
// and rc (dual) and rxs (complementarity).
func (lp *quantileLP) direction(sys *system, d, rb, rf, rc, rxs []float64) (df, dz, dl, ds []float64) {
	N := len(lp.z)
	t := make([]float64, N)
	for k := range N {
		t[k] = rxs[k]/lp.s[k] + d[k]*rc[k]
	}
	r1 := lp.mulA(nil, t)
	for i := range r1 {
		r1[i] = -rb[i] - r1[i]
	}
	dl = sys.solveM(tensor.FromFloat64s(r1, lp.n)).Values()
	if len(lp.free) > 0 {
		// XfᵀM⁻¹Xf·df = XfᵀM⁻¹r1 + rf, then dλ = M⁻¹r1 − M⁻¹Xf·df.
		_, g := lp.mulAT(dl)
		for k := range g {
			g[k] += rf[k]
		}
		df = tensor.CholeskySolve(sys.schur, tensor.FromFloat64s(g, len(g))).Values()
		corr := tensor.MatMul(sys.minvXf, tensor.FromFloat64s(df, len(df), 1)).Values()
		for i := range dl {
			dl[i] -= corr[i]
		}
	}
	atdl, _ := lp.mulAT(dl)
	dz, ds = make([]float64, N), make([]float64, N)
	for k := range N {
		ds[k] = -rc[k] - atdl[k]
		dz[k] = (rxs[k] - lp.z[k]*ds[k]) / lp.s[k]
	}
	return df, dz, dl, ds
}

// solve runs the predictor-corrector iterations and returns their number.
func (lp *quantileLP) solve(ctx context.Context, op string, maxIter int, tol float64) (int, error) {
	if err := lp.start(); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	N := len(lp.z)
	ny, nc := 1+norm(lp.y), 1+norm(lp.c)
	d := make([]float64, N)
	change := math.Inf(1)
	for it := range maxIter + 1 {
		rb := lp.mulA(lp.f, lp.z)
		for i := range rb {
			rb[i] -= lp.y[i]
		}
		rc, rf := lp.mulAT(lp.l)
		for k := range rc {
			rc[k] += lp.s[k] - lp.c[k]
		}
		pobj, dobj := dot(lp.c, lp.z), dot(lp.y, lp.l)
		change = max(norm(rb)/ny, math.Hypot(norm(rc), norm(rf))/nc, math.Abs(pobj-dobj)/(1+math.Abs(pobj)))
		if change < tol {
			return it, nil
		}
		if it == maxIter {
			break
		}
		if err := ctx.Err(); err != nil {
			return it, fmt.Errorf("%s: %w", op, err)
		}
		mu := dot(lp.z, lp.s) / float64(N)
		for k := range d {
			d[k] = lp.z[k] / lp.s[k]
		}
		sys, err := lp.factor(d)
		if err != nil {
			return it, fmt.Errorf("%s: the interior-point system broke down: %w", op, err)
		}
		rxs := make([]float64, N)
		for k := range rxs {
			rxs[k] = -lp.z[k] * lp.s[k]
		}
		_, az, _, as := lp.direction(sys, d, rb, rf, rc, rxs)
		ap, ad := stepTo(lp.z, az, 1), stepTo(lp.s, as, 1)
		muAff := 0.0
		for k := range N {
			muAff += (lp.z[k] + ap*az[k]) * (lp.s[k] + ad*as[k])
		}
		sigma := math.Pow(muAff/float64(N)/mu, 3)
		for k := range rxs {
			rxs[k] = -lp.z[k]*lp.s[k] - az[k]*as[k] + sigma*mu
		}
		df, dz, dl, ds := lp.direction(sys, d, rb, rf, rc, rxs)
		ap, ad = stepTo(lp.z, dz, 0.995), stepTo(lp.s, ds, 0.995)
		axpy(ap, df, lp.f)
		axpy(ap, dz, lp.z)
		axpy(ad, dl, lp.l)
		axpy(ad, ds, lp.s)
	}
	return maxIter, &tensor.NotConvergedError{Op: op, Iterations: maxIter, Change: change, Tol: tol}
}

// start sets an infeasible interior starting point in the manner of
// Mehrotra: z the least-norm solution of Az·z = y shifted to be positive,
// λ = 0 and s = c shifted alike (c > 0, so s starts interior).
func (lp *quantileLP) start() error {
	p := len(lp.pen)
	N := 2*p + 2*lp.n
	// Az·Azᵀ = 2·Xp·Xpᵀ + 2I: positive definite.
	twos := make([]float64, N)
	for k := range twos {
		twos[k] = 1
	}
	sys, err := lp.factor(twos)
	if err != nil {
		return err
	}
	w := sys.solveM(tensor.FromFloat64s(lp.y, lp.n)).Values()
	z, _ := lp.mulAT(w)
	s := append([]float64(nil), lp.c...)
	dz := 0.0
	for _, v := range z {
		dz = max(dz, -1.5*v)
	}
	zs, sz, ss := 0.0, 0.0, 0.0
	for k := range N {
		zs += (z[k] + dz) * s[k]
		sz += z[k] + dz
		ss += s[k]
	}
	hz, hs := 0.5*zs/ss, 0.5*zs/sz
	if !(zs > 0) {
		hz, hs = 1, 1
	}
	for k := range N {
		z[k] += dz + hz
		s[k] += hs
	}
	lp.z, lp.s, lp.l = z, s, make([]float64, lp.n)
	return nil
}

// stepTo returns the largest step a ≤ 1, scaled by eta, with v + a·dv ≥ 0.
func stepTo(v, dv []float64, eta float64) float64 {
	a := 1.0
	for k, d := range dv {
		if d < 0 {
			a = min(a, -eta*v[k]/d)
		}
	}
	return a
}

func norm(v []float64) float64 { return math.Sqrt(dot(v, v)) }
