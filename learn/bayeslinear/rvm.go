package bayeslinear

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// RVM is a relevance vector machine (Tipping 2001, "Sparse Bayesian
// learning and the relevance vector machine"): Bayesian linear regression
// with one prior precision αᵢ per basis function, re-estimated to maximise
// the evidence; most αᵢ grow without bound and their basis functions are
// pruned, leaving the relevant ones.
type RVM struct {
	*Regression       // the posterior over the relevant columns
	Relevant    []int // the columns of the design matrix kept, in order
	Columns     int   // the design matrix's width
}

// RVMOptions configures FitRVM. Zero fields take the defaults given.
type RVMOptions struct {
	Alpha      float64 // starting precision of every weight (default 1)
	Beta       float64 // starting noise precision (default 1/var(y))
	MaxIter    int     // re-estimations (default 1000)
	Tol        float64 // stop when the log evidence changes less (default 1e-9)
	PruneAlpha float64 // drop the weights whose α exceeds it (default 1e9)
}

// FitRVM fits an RVM on the design matrix x (n, M), e.g. a kernel matrix
// K(x, x) with a bias column, and targets y (n), with the updates
// γᵢ = 1 − αᵢΣᵢᵢ, αᵢ ← γᵢ/μᵢ², β ← (n − Σγᵢ)/‖y − Φμ‖², pruning the columns
// whose αᵢ exceeds opts.PruneAlpha (a column the data do not determine,
// such as a zero one, at once). When every column is pruned the model
// predicts 0 with variance 1/β. It returns an error as FitRegression
// does; after MaxIter re-estimations, or when β reaches its bound because
// the design fits y exactly, the model comes back with a
// *tensor.NotConvergedError, and when ctx is cancelled with an error
// wrapping ctx.Err().
func FitRVM(ctx context.Context, x, y *tensor.Tensor, opts RVMOptions) (*RVM, error) {
	const op = "bayeslinear.FitRVM"
	p, yv, err := check(op, x, y)
	if err != nil {
		return nil, err
	}
	alpha0, beta, err := precisions(op, opts.Alpha, opts.Beta, yv)
	if err != nil {
		return nil, err
	}
	maxIter, tol, err := iterations(op, opts.MaxIter, opts.Tol)
	if err != nil {
		return nil, err
	}
	prune, err := pruneAlpha(op, opts.PruneAlpha)
	if err != nil {
		return nil, err
	}
	n, cols := p.Shape()[0], p.Shape()[1]
	active := make([]int, cols)
	alpha := make([]float64, cols)
	for i := range active {
		active[i], alpha[i] = i, alpha0
	}
	bmax := betaMax(yv)
	beta = min(beta, bmax)
	prev, change := math.Inf(-1), math.Inf(1)
	var model *Regression
	for it := 1; it <= maxIter; it++ {
		if it > 1 && ctx.Err() != nil {
			return &RVM{Regression: model, Relevant: active, Columns: cols}, fmt.Errorf("%s: stopped after %d re-estimations: %w", op, model.Iterations, ctx.Err())
		}
		sub := tensor.IndexSelect(p, 1, active)
		if model, err = posterior(sub, yv, alpha, beta); err != nil {
			return nil, fmt.Errorf("%s: iteration %d: %w", op, it, err)
		}
		model.Iterations = it
		change = math.Abs(model.LogEvidence - prev)
		if change < tol {
			if beta >= bmax {
				return &RVM{Regression: model, Relevant: active, Columns: cols}, diverged(op, it, beta)
			}
			return &RVM{Regression: model, Relevant: active, Columns: cols}, nil
		}
		prev = model.LogEvidence
		pred := tensor.MatMul(sub, tensor.FromFloat64s(model.Mean, len(active), 1)).Values()
		rss := 0.0
		for i, t := range yv {
			rss += (t - pred[i]) * (t - pred[i])
		}
		gammaSum := 0.0
		var keepIdx []int
		var keepAlpha []float64
		for j := range active {
			gamma := 1 - alpha[j]*model.Cov.At(j, j)
			gammaSum += gamma
			a := gamma / math.Max(model.Mean[j]*model.Mean[j], 1e-300)
			if !(a > 0) { // γ = 0: the data do not determine the weight (a zero column)
				a = math.Inf(1)
			}
			if a < prune {
				keepIdx, keepAlpha = append(keepIdx, active[j]), append(keepAlpha, a)
			}
		}
		beta = nextBeta(float64(n)-gammaSum, rss, beta, bmax)
		if it < maxIter {
			active, alpha = keepIdx, keepAlpha
		}
	}
	if beta >= bmax {
		return &RVM{Regression: model, Relevant: active, Columns: cols}, diverged(op, model.Iterations, beta)
	}
	return &RVM{Regression: model, Relevant: active, Columns: cols}, &tensor.NotConvergedError{Op: op, Iterations: model.Iterations, Change: change, Tol: tol}
}

// pruneAlpha checks the pruning threshold for op and fills its default.
func pruneAlpha(op string, a float64) (float64, error) {
	if !(a >= 0) {
		return 0, fmt.Errorf("%s: PruneAlpha = %v must not be negative", op, a)
	}
	if a == 0 {
		a = 1e9
	}
	return a, nil
}

// Predict returns the predictive mean for the rows of the full design
// matrix x (k, M), a (k) tensor: only the relevant columns are read. It
// panics with a *tensor.Error when x is not a (k, M) matrix.
func (r *RVM) Predict(x *tensor.Tensor) *tensor.Tensor {
	return r.Regression.Predict(r.relevant("bayeslinear.RVM.Predict", x))
}

// PredictVariance returns the predictive variance for the rows of the
// full design matrix x (k, M), a (k) tensor. It panics as Predict does.
func (r *RVM) PredictVariance(x *tensor.Tensor) *tensor.Tensor {
	return r.Regression.PredictVariance(r.relevant("bayeslinear.RVM.PredictVariance", x))
}

func (r *RVM) relevant(op string, x *tensor.Tensor) *tensor.Tensor {
	if x == nil {
		tensor.Fail(op, "nil design matrix")
	}
	if x.Dim() != 2 || x.Shape()[1] != r.Columns {
		tensor.Fail(op, "want a (k, %d) design matrix, got shape %s", r.Columns, tensor.FormatShape(x.Shape()))
	}
	return tensor.IndexSelect(x.Cast(tensor.Float64), 1, r.Relevant)
}
