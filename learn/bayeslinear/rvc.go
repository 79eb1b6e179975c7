package bayeslinear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// RVC is a relevance vector classifier (Tipping 2001, "Sparse Bayesian
// learning and the relevance vector machine", §4): logistic
// regression on a design matrix with one ARD precision αᵢ per basis
// function. Each re-estimation finds the mode w* of the posterior by
// Newton's method (iteratively reweighted least squares) and takes the
// Laplace approximation there, Σ = (ΦᵀBΦ + A)⁻¹ with B = diag(σᵢ(1 − σᵢ)),
// then sets αᵢ ← γᵢ/wᵢ*² with γᵢ = 1 − αᵢΣᵢᵢ and prunes the basis functions
// whose αᵢ diverges.
type RVC struct {
	Relevant   []int     // the columns kept, in order
	Weights    []float64 // the posterior mode w* over them
	Alpha      []float64 // their precisions
	Columns    int       // the design matrix's width
	Iterations int       // re-estimations made
}

// RVCOptions configures FitRVC. Zero fields take the defaults given.
type RVCOptions struct {
	Alpha      float64 // starting precision of every weight (default 1)
	MaxIter    int     // re-estimations (default 1000)
	Tol        float64 // stop when no weight is pruned and every log αᵢ changes less (default 1e-6)
	PruneAlpha float64 // drop the weights whose α exceeds it (default 1e9)
}

// FitRVC fits the classifier to the design matrix x (n, M) and labels in
// {0, 1}. It returns an error naming the fit for bad data (as
// FitRegression does, a label other than 0 or 1, a single class), when
// every basis function is pruned, or when Newton's method fails; after
// MaxIter re-estimations the classifier comes back with a
// *tensor.NotConvergedError, and when ctx is cancelled with an error
// wrapping ctx.Err().
func FitRVC(ctx context.Context, x *tensor.Tensor, labels []int, opts RVCOptions) (*RVC, error) {
	const op = "bayeslinear.FitRVC"
	y := make([]float64, len(labels))
	ones := 0
	for i, l := range labels {
		if l != 0 && l != 1 {
			return nil, fmt.Errorf("%s: label %d is %d; labels must be 0 or 1", op, i, l)
		}
		y[i] = float64(l)
		ones += l
	}
	p, _, err := check(op, x, tensor.FromFloat64s(y, len(y)))
	if err != nil {
		return nil, err
	}
	if ones == 0 || ones == len(labels) {
		return nil, fmt.Errorf("%s: the labels hold a single class (%d); the classifier needs both 0 and 1", op, labels[0])
	}
	alpha0, _, err := precisions(op, opts.Alpha, 1, y)
	if err != nil {
		return nil, err
	}
	if opts.MaxIter < 0 || !(opts.Tol >= 0) {
		return nil, fmt.Errorf("%s: MaxIter = %d and Tol = %v must not be negative", op, opts.MaxIter, opts.Tol)
	}
	maxIter, tol := opts.MaxIter, opts.Tol
	if maxIter == 0 {
		maxIter = 1000
	}
	if tol == 0 {
		tol = 1e-6
	}
	prune, err := pruneAlpha(op, opts.PruneAlpha)
	if err != nil {
		return nil, err
	}
	n, cols := p.Shape()[0], p.Shape()[1]
	pv := p.Values()
	active := make([]int, cols)
	alpha := make([]float64, cols)
	for i := range active {
		active[i], alpha[i] = i, alpha0
	}
	w := make([]float64, cols)
	res := &RVC{Columns: cols}
	converged, change := false, math.Inf(1)
	for it := 1; it <= maxIter; it++ {
		if ctx.Err() != nil {
			break
		}
		m := len(active)
		cov, err := irls(pv, n, cols, active, y, alpha, w)
		if err != nil {
			return nil, fmt.Errorf("%s: iteration %d: %w", op, it, err)
		}
		var keep []int
		var keepA, keepW []float64
		change = 0.0
		for j := range m {
			gamma := 1 - alpha[j]*cov[j*m+j]
			a := gamma / math.Max(w[j]*w[j], 1e-300)
			if !(a > 0) { // γ = 0: the data do not determine the weight (a zero column)
				a = math.Inf(1)
			}
			change = math.Max(change, math.Abs(math.Log(a)-math.Log(alpha[j])))
			if a < prune {
				keep, keepA, keepW = append(keep, active[j]), append(keepA, a), append(keepW, w[j])
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("%s: every basis function was pruned at iteration %d", op, it)
		}
		res.Iterations = it
		converged = len(keep) == m && change < tol
		active, alpha, w = keep, keepA, keepW
		if converged {
			break
		}
	}
	// The mode for the final precisions.
	if _, err := irls(pv, n, cols, active, y, alpha, w); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	res.Relevant, res.Alpha, res.Weights = active, alpha, w
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: stopped after %d re-estimations: %w", op, res.Iterations, ctx.Err())
	case !converged:
		return res, &tensor.NotConvergedError{Op: op, Iterations: res.Iterations, Change: change, Tol: tol}
	}
	return res, nil
}

// irls finds the mode of the posterior over the active weights (w updated
// in place, starting from its values) by Newton's method and returns the
// Laplace covariance Σ = (ΦᵀBΦ + A)⁻¹ (m×m, row-major) there.
func irls(pv []float64, n, cols int, active []int, y, alpha, w []float64) ([]float64, error) {
	m := len(active)
	sigma := make([]float64, n)
	for range 100 {
		grad := make([]float64, m) // Φᵀ(y − σ) − Aw
		h := make([]float64, m*m)  // ΦᵀBΦ + A
		for i := range n {
			eta := 0.0
			for j, c := range active {
				eta += pv[i*cols+c] * w[j]
			}
			sigma[i] = 1 / (1 + math.Exp(-eta))
			b := sigma[i] * (1 - sigma[i])
			for j, c := range active {
				grad[j] += pv[i*cols+c] * (y[i] - sigma[i])
				for k := 0; k <= j; k++ {
					h[j*m+k] += b * pv[i*cols+c] * pv[i*cols+active[k]]
				}
			}
		}
		for j := range m {
			grad[j] -= alpha[j] * w[j]
			h[j*m+j] += alpha[j]
			for k := range j {
				h[k*m+j] = h[j*m+k]
			}
		}
		ht := tensor.FromFloat64s(h, m, m)
		l, err := tensor.Cholesky(ht)
		if err != nil {
			return nil, fmt.Errorf("the Laplace precision is not positive definite: %w", err)
		}
		step := tensor.CholeskySolve(l, tensor.FromFloat64s(grad, m, 1)).Values()
		big := 0.0
		for j := range m {
			w[j] += step[j]
			big = math.Max(big, math.Abs(step[j]))
		}
		if big < 1e-10 {
			inv := tensor.CholeskySolve(l, tensor.Eye(tensor.Float64, m)).Values()
			return inv, nil
		}
	}
	return nil, fmt.Errorf("Newton's method did not converge in 100 steps")
}

// PredictProba returns (P(y = 0 | x), P(y = 1 | x)) with
// P(y = 1 | x) = σ(φ(x)ᵀw*) for the rows of the full design matrix x
// (k, M), the mode's plug-in prediction, as a (k, 2) tensor. It panics
// with a *tensor.Error when x is not a (k, M) matrix.
func (r *RVC) PredictProba(x *tensor.Tensor) *tensor.Tensor {
	p := r.prob1("bayeslinear.RVC.PredictProba", x)
	out := make([]float64, 0, 2*len(p))
	for _, v := range p {
		out = append(out, 1-v, v)
	}
	return tensor.FromFloat64s(out, len(p), 2)
}

// Predict returns 1 where P(y = 1 | x) > ½ and 0 elsewhere, for the rows
// of the full design matrix x (k, M). It panics as PredictProba does.
func (r *RVC) Predict(x *tensor.Tensor) []int {
	p := r.prob1("bayeslinear.RVC.Predict", x)
	out := make([]int, len(p))
	for i, v := range p {
		if v > 0.5 {
			out[i] = 1
		}
	}
	return out
}

// prob1 returns P(y = 1 | x) for the rows of x, checked for op.
func (r *RVC) prob1(op string, x *tensor.Tensor) []float64 {
	if x == nil {
		tensor.Fail(op, "nil design matrix")
	}
	if x.Dim() != 2 || x.Shape()[1] != r.Columns {
		tensor.Fail(op, "want a (k, %d) design matrix, got shape %s", r.Columns, tensor.FormatShape(x.Shape()))
	}
	k := x.Shape()[0]
	pv := x.Cast(tensor.Float64).Contiguous().Values()
	out := make([]float64, k)
	for i := range k {
		eta := 0.0
		for j, c := range r.Relevant {
			eta += pv[i*r.Columns+c] * r.Weights[j]
		}
		out[i] = 1 / (1 + math.Exp(-eta))
	}
	return out
}
