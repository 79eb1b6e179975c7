package bayeslinear

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// RVM is a relevance vector machine (Tipping 2001): Bayesian linear
// regression with one prior precision αᵢ per basis function, re-estimated
// to maximise the evidence; most αᵢ grow without bound and their basis
// functions are pruned, leaving the relevant ones.
type RVM struct {
	*Model         // the posterior over the relevant columns
	Relevant []int // the columns of the design matrix kept, in order
	Columns  int   // the design matrix's width
}

// FitRVM fits an RVM on the design matrix phi (n, M), e.g. a kernel matrix
// K(x, x) with a bias column, with the updates γᵢ = 1 − αᵢΣᵢᵢ, αᵢ ← γᵢ/μᵢ²,
// β ← (n − Σγᵢ)/‖y − Φμ‖², pruning the columns whose αᵢ exceeds
// opts.PruneAlpha.
func FitRVM(phi *tensor.Tensor, y []float64, opts Options) (*RVM, error) {
	p, err := check("bayeslinear.FitRVM", phi, y)
	if err != nil {
		return nil, err
	}
	opts = opts.defaults(y)
	n, cols := p.Shape()[0], p.Shape()[1]
	active := make([]int, cols)
	alpha := make([]float64, cols)
	for i := range active {
		active[i], alpha[i] = i, opts.Alpha
	}
	beta := opts.Beta
	prev := math.Inf(-1)
	var model *Model
	for it := 1; it <= opts.MaxIter; it++ {
		sub := tensor.IndexSelect(p, 1, active)
		if model, err = posterior(sub, y, alpha, beta); err != nil {
			return nil, fmt.Errorf("bayeslinear.FitRVM: iteration %d: %w", it, err)
		}
		model.Iterations = it
		if math.Abs(model.LogEvidence-prev) < opts.Tol {
			model.Converged = true
			break
		}
		prev = model.LogEvidence
		pred := tensor.MatMul(sub, tensor.FromFloat64s(model.Mean, len(active), 1)).Values()
		rss := 0.0
		for i, t := range y {
			rss += (t - pred[i]) * (t - pred[i])
		}
		gammaSum := 0.0
		var keepIdx []int
		var keepAlpha []float64
		for j := range active {
			gamma := 1 - alpha[j]*model.Cov.At(j, j)
			gammaSum += gamma
			a := gamma / math.Max(model.Mean[j]*model.Mean[j], 1e-300)
			if a < opts.PruneAlpha {
				keepIdx, keepAlpha = append(keepIdx, active[j]), append(keepAlpha, a)
			}
		}
		if len(keepIdx) == 0 {
			return nil, fmt.Errorf("bayeslinear.FitRVM: every basis function was pruned at iteration %d", it)
		}
		beta = (float64(n) - gammaSum) / math.Max(rss, 1e-300)
		active, alpha = keepIdx, keepAlpha
	}
	return &RVM{Model: model, Relevant: active, Columns: cols}, nil
}

// Predict returns the predictive mean and variance for the rows of the
// full design matrix phi (k, M): only the relevant columns are read.
func (r *RVM) Predict(phi *tensor.Tensor) (mean, variance []float64) {
	if phi == nil || phi.Dim() != 2 || phi.Shape()[1] != r.Columns {
		tensor.Fail("bayeslinear.RVM.Predict", "want a (k, %d) design matrix, got %v", r.Columns, phi)
	}
	return r.Model.Predict(tensor.IndexSelect(phi.Cast(tensor.Float64), 1, r.Relevant))
}
