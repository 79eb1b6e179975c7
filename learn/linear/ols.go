package linear

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/validate"
	"github.com/gradus-ml/gradus/tensor"
)

// LeastSquaresOptions configures FitLeastSquares.
type LeastSquaresOptions struct {
	NoIntercept bool // fit y ≈ Xw through the origin (default: fit an intercept b)
}

// LeastSquares is a least-squares fit y ≈ Xw + b.
type LeastSquares struct {
	Coef      []float64 // w, one weight per column of x
	Intercept float64   // b (0 with NoIntercept)
}

// FitLeastSquares minimises ‖y − Xw − b‖² for x (n, d) and y (n) by a
// Householder QR factorisation of the centred x (tensor.QR), which never
// forms XᵀX and so keeps the accuracy of the data. When x's centred
// columns are linearly dependent (rank below d, which includes n ≤ d with
// an intercept: constant or repeated columns, say) the minimiser is not
// unique, and it returns the one of least norm, as NumPy's lstsq does, from
// the SVD. It returns an error, naming the fit, for bad data (nil, NaN or
// ±Inf, zero columns, y of the wrong length).
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitLeastSquares(x, y *tensor.Tensor, opts LeastSquaresOptions) (*LeastSquares, error) {
	const op = "linear.FitLeastSquares"
	ds, err := prepare(op, x, y, !opts.NoIntercept)
	if err != nil {
		return nil, err
	}
	if ds.n < ds.d {
		return minNorm(op, ds)
	}
	q, r, err := tensor.QR(ds.matrix())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	rv := r.Values()
	big := 0.0
	for j := range ds.d {
		big = max(big, math.Abs(rv[j*ds.d+j]))
	}
	for j := range ds.d {
		if math.Abs(rv[j*ds.d+j]) <= 1e-12*big*float64(max(ds.n, ds.d)) || big == 0 {
			return minNorm(op, ds)
		}
	}
	qty := tensor.MatMulT(q, tensor.FromFloat64s(ds.y, ds.n, 1), true, false)
	w := tensor.TriSolve(r, qty, false, false).Values()
	return &LeastSquares{Coef: w, Intercept: ds.intercept(w)}, nil
}

// minNorm returns the least-squares fit of least norm, w = V·S⁺·Uᵀy from
// the SVD of the centred x, with singular values below max(n, d)·ε·s₁
// treated as zero (NumPy's rcond); a zero design gives w = 0.
func minNorm(op string, ds *design) (*LeastSquares, error) {
	u, s, v, err := tensor.SVD(ds.matrix())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sv := s.Values()
	cut := float64(max(ds.n, ds.d)) * 0x1p-52 * sv[0]
	uty := tensor.MatMulT(u, tensor.FromFloat64s(ds.y, ds.n, 1), true, false).Values()
	for i, si := range sv {
		if si > cut && si > 0 {
			uty[i] /= si
		} else {
			uty[i] = 0
		}
	}
	w := tensor.MatMul(v, tensor.FromFloat64s(uty, len(uty), 1)).Values()
	return &LeastSquares{Coef: w, Intercept: ds.intercept(w)}, nil
}

// Predict returns Xw + b for the rows of x (m, d), in x's dtype. It
// panics with a *tensor.Error when x does not have d columns.
func (m *LeastSquares) Predict(x *tensor.Tensor) *tensor.Tensor {
	return predict("linear.LeastSquares.Predict", x, m.Coef, m.Intercept)
}

// RidgeOptions configures FitRidge.
type RidgeOptions struct {
	Alpha       float64 // the L2 penalty α > 0 (default 1, scikit-learn's); FitLeastSquares is α = 0
	NoIntercept bool    // fit through the origin (default: fit an unpenalised intercept)
}

// Ridge is a ridge regression fit.
type Ridge struct {
	Coef      []float64 // w
	Intercept float64   // b (0 with NoIntercept)
	Alpha     float64   // the penalty it was fitted with
}

// FitRidge minimises ‖y − Xw − b‖² + α‖w‖² (Hoerl & Kennard 1970, "Ridge
// regression: biased estimation for nonorthogonal problems") for x (n, d)
// and y (n): it centres x and y (leaving the intercept unpenalised, as
// scikit-learn does), then solves (XᵀX + αI)w = Xᵀy by a Cholesky
// factorisation (tensor.Cholesky). Bad data and a negative or non-finite
// Alpha give an error naming the fit.
// It is closed-form, with no iterations to run out of: it never returns a
// *tensor.NotConvergedError.
func FitRidge(x, y *tensor.Tensor, opts RidgeOptions) (*Ridge, error) {
	const op = "linear.FitRidge"
	alpha := opts.Alpha
	if alpha == 0 {
		alpha = 1
	}
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("%s: alpha %v must be positive and finite", op, opts.Alpha)
	}
	ds, err := prepare(op, x, y, !opts.NoIntercept)
	if err != nil {
		return nil, err
	}
	xm := ds.matrix()
	a := tensor.MatMulT(xm, xm, true, false)
	av := a.Float64s()
	for j := range ds.d {
		av[j*ds.d+j] += alpha
	}
	l, err := tensor.Cholesky(a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	xty := tensor.MatMulT(xm, tensor.FromFloat64s(ds.y, ds.n, 1), true, false)
	w := tensor.CholeskySolve(l, xty).Values()
	return &Ridge{Coef: w, Intercept: ds.intercept(w), Alpha: alpha}, nil
}

// Predict returns Xw + b for the rows of x (m, d), in x's dtype. It
// panics with a *tensor.Error when x does not have d columns.
func (m *Ridge) Predict(x *tensor.Tensor) *tensor.Tensor {
	return predict("linear.Ridge.Predict", x, m.Coef, m.Intercept)
}

// design holds checked data, centred when an intercept is fitted.
type design struct {
	n, d  int
	cols  [][]float64 // the d columns of x, centred
	y     []float64   // y, centred
	xMean []float64   // the column means removed (zeros without intercept)
	yMean float64
	norms []float64 // ‖column‖², computed once by colNorms
}

// colNorms returns the squared norms of the centred columns, computing
// them on first use so that a path's fits share them.
func (ds *design) colNorms() []float64 {
	if ds.norms == nil {
		ds.norms = make([]float64, ds.d)
		for j, c := range ds.cols {
			ds.norms[j] = dot(c, c)
		}
	}
	return ds.norms
}

// prepare checks x (n, d) and y (n) for op and centres them when
// intercept is set.
func prepare(op string, x, y *tensor.Tensor, intercept bool) (*design, error) {
	xv, n, d, err := validate.Matrix(op, x)
	if err != nil {
		return nil, err
	}
	yv, err := validate.Target(op, y, n)
	if err != nil {
		return nil, err
	}
	ds := &design{n: n, d: d, cols: make([][]float64, d), y: yv, xMean: make([]float64, d)}
	for j := range d {
		c := make([]float64, n)
		for i := range n {
			c[i] = xv[i*d+j]
		}
		ds.cols[j] = c
	}
	if intercept {
		for j, c := range ds.cols {
			ds.xMean[j] = mean(c)
			for i := range c {
				c[i] -= ds.xMean[j]
			}
		}
		ds.yMean = mean(yv)
		for i := range yv {
			yv[i] -= ds.yMean
		}
	}
	return ds, nil
}

// matrix returns the centred x as an (n, d) float64 tensor.
func (ds *design) matrix() *tensor.Tensor {
	v := make([]float64, ds.n*ds.d)
	for j, c := range ds.cols {
		for i, e := range c {
			v[i*ds.d+j] = e
		}
	}
	return tensor.FromFloat64s(v, ds.n, ds.d)
}

// intercept returns ȳ − x̄ᵀw, which is 0 without an intercept.
func (ds *design) intercept(w []float64) float64 {
	b := ds.yMean
	for j, m := range ds.xMean {
		b -= m * w[j]
	}
	return b
}

func mean(v []float64) float64 {
	s := 0.0
	for _, e := range v {
		s += e
	}
	return s / float64(len(v))
}

// predict returns x·w + b in x's dtype for the Predict methods.
func predict(op string, x *tensor.Tensor, w []float64, b float64) *tensor.Tensor {
	xv, m := validate.Query(op, x, len(w))
	out := make([]float64, m)
	d := len(w)
	for i := range out {
		s := b
		for j, wj := range w {
			s += xv[i*d+j] * wj
		}
		out[i] = s
	}
	return validate.Out(x.DType(), out, m)
}
