package linear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// ElasticNetOptions configures FitElasticNet.
type ElasticNetOptions struct {
	Alpha       float64 // the penalty's strength α > 0 (default 1, scikit-learn's)
	L1Ratio     float64 // the share ρ ∈ (0, 1] of the L1 term (default 0.5); FitRidge is ρ = 0
	NoIntercept bool    // fit through the origin (default: fit an unpenalised intercept)
	MaxIter     int     // passes over the coordinates (default 1000)
	Tol         float64 // duality-gap tolerance, relative to ‖y − ȳ‖² (default 1e-4)
}

// LassoOptions configures FitLasso: the elastic net's options with ρ = 1.
type LassoOptions struct {
	Alpha       float64 // the L1 penalty α > 0 (default 1, scikit-learn's)
	NoIntercept bool    // fit through the origin (default: fit an unpenalised intercept)
	MaxIter     int     // passes over the coordinates (default 1000)
	Tol         float64 // duality-gap tolerance, relative to ‖y − ȳ‖² (default 1e-4)
}

// ElasticNet is an elastic-net fit.
type ElasticNet struct {
	Coef       []float64 // w, with exact zeros where the L1 term cut a weight
	Intercept  float64   // b (0 with NoIntercept)
	Alpha      float64   // α
	L1Ratio    float64   // ρ
	Iterations int       // passes over the coordinates run
	DualGap    float64   // the duality gap of the 1/(2n)-scaled objective at the end
}

// Lasso is a lasso fit: an ElasticNet with ρ = 1.
type Lasso struct {
	Coef       []float64 // w, with exact zeros where the L1 term cut a weight
	Intercept  float64   // b (0 with NoIntercept)
	Alpha      float64   // α
	Iterations int       // passes over the coordinates run
	DualGap    float64   // the duality gap of the 1/(2n)-scaled objective at the end
}

// FitElasticNet minimises 1/(2n)·‖y − Xw − b‖² + αρ‖w‖₁ + α(1−ρ)/2·‖w‖²
// (Zou & Hastie 2005, "Regularization and variable selection via the
// elastic net") over w and b for x (n, d) and y (n), by cyclic coordinate
// descent with soft thresholding (Friedman, Hastie & Tibshirani 2010,
// "Regularization paths for generalized linear models via coordinate
// descent"). It follows scikit-learn's solver step for step: a pass
// updates each coordinate in order; when the largest change of a pass is
// below Tol times the largest weight, or on the last pass, it computes the
// duality gap and stops once that is below Tol·‖y − ȳ‖².
//
// Bad data, a non-positive Alpha or a ρ outside (0, 1] give an error
// naming the fit. When ctx is cancelled it returns the weights so far and
// ctx.Err() wrapped; after MaxIter passes without meeting the tolerance it
// returns them with a *tensor.NotConvergedError.
func FitElasticNet(ctx context.Context, x, y *tensor.Tensor, opts ElasticNetOptions) (*ElasticNet, error) {
	if opts.L1Ratio == 0 {
		opts.L1Ratio = 0.5
	}
	return fitElasticNet(ctx, "linear.FitElasticNet", x, y, opts)
}

// fitElasticNet is FitElasticNet with opts.L1Ratio already defaulted,
// naming op in its errors.
func fitElasticNet(ctx context.Context, op string, x, y *tensor.Tensor, opts ElasticNetOptions) (*ElasticNet, error) {
	alpha, err := checkAlpha(op, opts.Alpha)
	if err != nil {
		return nil, err
	}
	s, err := newCDSettings(op, opts.L1Ratio, opts.MaxIter, opts.Tol)
	if err != nil {
		return nil, err
	}
	ds, err := prepare(op, x, y, !opts.NoIntercept)
	if err != nil {
		return nil, err
	}
	w := make([]float64, ds.d)
	it, gap, err := coordinateDescent(ctx, op, ds, w, alpha, s)
	return &ElasticNet{Coef: w, Intercept: ds.intercept(w), Alpha: alpha, L1Ratio: s.rho, Iterations: it, DualGap: gap}, err
}

// FitLasso minimises 1/(2n)·‖y − Xw − b‖² + α‖w‖₁ (Tibshirani 1996,
// "Regression shrinkage and selection via the lasso"): FitElasticNet with
// ρ = 1, with the same errors.
// When the passes run out it returns the model with a
// *tensor.NotConvergedError, as FitElasticNet does.
func FitLasso(ctx context.Context, x, y *tensor.Tensor, opts LassoOptions) (*Lasso, error) {
	m, err := fitElasticNet(ctx, "linear.FitLasso", x, y, ElasticNetOptions{Alpha: opts.Alpha, L1Ratio: 1,
		NoIntercept: opts.NoIntercept, MaxIter: opts.MaxIter, Tol: opts.Tol})
	if m == nil {
		return nil, err
	}
	return &Lasso{Coef: m.Coef, Intercept: m.Intercept, Alpha: m.Alpha, Iterations: m.Iterations, DualGap: m.DualGap}, err
}

// Predict returns Xw + b for the rows of x (m, d), in x's dtype. It
// panics with a *tensor.Error when x does not have d columns.
func (m *ElasticNet) Predict(x *tensor.Tensor) *tensor.Tensor {
	return predict("linear.ElasticNet.Predict", x, m.Coef, m.Intercept)
}

// Predict returns Xw + b for the rows of x (m, d), in x's dtype. It
// panics with a *tensor.Error when x does not have d columns.
func (m *Lasso) Predict(x *tensor.Tensor) *tensor.Tensor {
	return predict("linear.Lasso.Predict", x, m.Coef, m.Intercept)
}

// PathOptions configures FitPath.
type PathOptions struct {
	L1Ratio     float64   // ρ ∈ (0, 1] (default 1: the lasso path, scikit-learn's lasso_path)
	NumAlphas   int       // points on the grid (default 100)
	Eps         float64   // the grid's smallest α over its largest (default 1e-3)
	Alphas      []float64 // an explicit grid, fitted in the order given (overrides NumAlphas and Eps)
	NoIntercept bool      // fit through the origin (default: centre x and y, fit intercepts)
	MaxIter     int       // passes per α (default 1000)
	Tol         float64   // duality-gap tolerance per α, relative to ‖y − ȳ‖² (default 1e-4)
}

// Path is an elastic-net regularisation path: one fit per α, from the
// largest α (all weights zero) down.
type Path struct {
	Alphas     []float64   // the grid, decreasing unless given otherwise
	Coefs      [][]float64 // Coefs[k] is w at Alphas[k]
	Intercepts []float64   // b at each α
	DualGaps   []float64   // the duality gap at each α (1/(2n)-scaled objective)
	Iterations []int       // passes run at each α
}

// FitPath fits the elastic net (FitElasticNet's objective) along a grid of
// α, as scikit-learn's enet_path and lasso_path do: NumAlphas values
// spaced evenly in log α from α_max = max|Xᵀy|/(n·ρ), the smallest α at
// which every weight is zero (x and y centred unless NoIntercept), down to
// Eps·α_max. Each fit starts from the previous one's weights (a warm
// start), which makes the whole path cost little more than its last fit
// (Friedman, Hastie & Tibshirani 2010).
//
// Errors are FitElasticNet's. When ctx is cancelled it returns the path
// fitted so far with ctx.Err() wrapped. When some α run out of passes it
// still fits the rest and returns the whole path with a
// *tensor.NotConvergedError for the first such α.
func FitPath(ctx context.Context, x, y *tensor.Tensor, opts PathOptions) (*Path, error) {
	const op = "linear.FitPath"
	rho := opts.L1Ratio
	if rho == 0 {
		rho = 1
	}
	s, err := newCDSettings(op, rho, opts.MaxIter, opts.Tol)
	if err != nil {
		return nil, err
	}
	ds, err := prepare(op, x, y, !opts.NoIntercept)
	if err != nil {
		return nil, err
	}
	alphas := opts.Alphas
	if alphas == nil {
		if alphas, err = alphaGrid(op, ds, rho, opts.NumAlphas, opts.Eps); err != nil {
			return nil, err
		}
	}
	for k, a := range alphas {
		if !(a > 0) || math.IsInf(a, 0) {
			return nil, fmt.Errorf("%s: alpha %d is %v: it must be positive and finite", op, k, a)
		}
	}
	p := &Path{}
	w := make([]float64, ds.d)
	var first error
	for _, a := range alphas {
		it, gap, err := coordinateDescent(ctx, op, ds, w, a, s)
		p.Alphas = append(p.Alphas, a)
		p.Coefs = append(p.Coefs, append([]float64(nil), w...))
		p.Intercepts = append(p.Intercepts, ds.intercept(w))
		p.DualGaps = append(p.DualGaps, gap)
		p.Iterations = append(p.Iterations, it)
		if ctx.Err() != nil {
			return p, err
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return p, first
}

// alphaGrid returns scikit-learn's grid: n values evenly spaced in log α
// from α_max = max|Xᵀy|/(n·ρ) down to eps·α_max.
func alphaGrid(op string, ds *design, rho float64, num int, eps float64) ([]float64, error) {
	if num == 0 {
		num = 100
	}
	if eps == 0 {
		eps = 1e-3
	}
	if num < 0 || !(eps > 0 && eps < 1) {
		return nil, fmt.Errorf("%s: need NumAlphas ≥ 1 and Eps in (0, 1), got %d and %v", op, num, eps)
	}
	amax := 0.0
	for _, c := range ds.cols {
		amax = max(amax, math.Abs(dot(c, ds.y)))
	}
	amax /= float64(ds.n) * rho
	if amax == 0 {
		return nil, fmt.Errorf("%s: Xᵀy is zero (y is constant or orthogonal to every column): every α gives w = 0", op)
	}
	out := make([]float64, num)
	hi, lo := math.Log10(amax), math.Log10(amax*eps)
	for k := range out {
		t := hi
		if num > 1 {
			t = hi + (lo-hi)*float64(k)/float64(num-1)
		}
		out[k] = math.Pow(10, t)
	}
	return out, nil
}

// cdSettings are the checked loop settings shared by the fits: the L1
// ratio ρ, the passes and the tolerance. α varies along a path, so it is
// checked on its own (checkAlpha).
type cdSettings struct {
	rho     float64
	maxIter int
	tol     float64
}

func newCDSettings(op string, rho float64, maxIter int, tol float64) (cdSettings, error) {
	if maxIter == 0 {
		maxIter = 1000
	}
	if tol == 0 {
		tol = 1e-4
	}
	switch {
	case !(rho > 0 && rho <= 1):
		return cdSettings{}, fmt.Errorf("%s: L1 ratio %v must lie in (0, 1]", op, rho)
	case maxIter < 0:
		return cdSettings{}, fmt.Errorf("%s: MaxIter %d is negative", op, maxIter)
	case !(tol > 0):
		return cdSettings{}, fmt.Errorf("%s: Tol %v must be positive", op, tol)
	}
	return cdSettings{rho: rho, maxIter: maxIter, tol: tol}, nil
}

// checkAlpha returns the penalty α (default 1, scikit-learn's), or an
// error naming op when it is not positive and finite.
func checkAlpha(op string, alpha float64) (float64, error) {
	if alpha == 0 {
		alpha = 1
	}
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return 0, fmt.Errorf("%s: alpha %v must be positive and finite", op, alpha)
	}
	return alpha, nil
}

// coordinateDescent runs scikit-learn's enet_coordinate_descent on the
// centred design from the weights w (updated in place) for penalty α and
// s's ratio ρ. It returns the passes run, the duality gap divided by n,
// and an error when ctx was cancelled or the passes ran out.
func coordinateDescent(ctx context.Context, op string, ds *design, w []float64, alpha float64, s cdSettings) (int, float64, error) {
	n := float64(ds.n)
	l1, l2 := alpha*s.rho*n, alpha*(1-s.rho)*n
	norms := ds.colNorms()
	r := append([]float64(nil), ds.y...) // residual y − Xw
	for j, c := range ds.cols {
		if w[j] != 0 {
			axpy(-w[j], c, r)
		}
	}
	tol := s.tol * dot(ds.y, ds.y)
	gap := math.Inf(1)
	for it := range s.maxIter {
		if err := ctx.Err(); err != nil {
			return it, gap / n, fmt.Errorf("%s: %w", op, err)
		}
		wMax, dwMax := 0.0, 0.0
		for j, c := range ds.cols {
			if norms[j] == 0 {
				continue
			}
			old := w[j]
			if old != 0 {
				axpy(old, c, r)
			}
			t := dot(c, r)
			w[j] = 0 // +0, never the −0 that soft thresholding a negative t gives
			if a := math.Abs(t) - l1; a > 0 {
				w[j] = math.Copysign(a, t) / (norms[j] + l2)
				axpy(-w[j], c, r)
			}
			dwMax = max(dwMax, math.Abs(w[j]-old))
			wMax = max(wMax, math.Abs(w[j]))
		}
		if wMax == 0 || dwMax/wMax < s.tol || it == s.maxIter-1 {
			gap = dualityGap(ds, w, r, l1, l2)
			if gap < tol {
				return it + 1, gap / n, nil
			}
		}
	}
	return s.maxIter, gap / n, &tensor.NotConvergedError{Op: op, Iterations: s.maxIter, Change: gap / n, Tol: tol / n}
}

// dualityGap returns the gap between the primal objective
// ½‖r‖² + l1‖w‖₁ + l2/2‖w‖² and the dual objective at the residual r
// scaled into the dual feasible set (El Ghaoui, Viallon & Rabbani 2012,
// "Safe feature elimination in sparse supervised learning").
func dualityGap(ds *design, w, r []float64, l1, l2 float64) float64 {
	dual := 0.0
	for j, c := range ds.cols {
		dual = max(dual, math.Abs(dot(c, r)-l2*w[j]))
	}
	rr, ww, w1 := dot(r, r), dot(w, w), 0.0
	for _, v := range w {
		w1 += math.Abs(v)
	}
	k, gap := 1.0, rr
	if dual > l1 {
		k = l1 / dual
		gap = 0.5 * (rr + rr*k*k)
	}
	return gap + l1*w1 - k*dot(r, ds.y) + 0.5*l2*(1+k*k)*ww
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// axpy adds a·x to y.
func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}
