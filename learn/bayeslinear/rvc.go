package bayeslinear

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// RVC is a relevance vector classifier (Tipping 2001, §4): logistic
// regression on a design matrix with one ARD precision αᵢ per basis
// function. Each re-estimation finds the mode w* of the posterior by
// Newton's method (iteratively reweighted least squares) and takes the
// Laplace approximation there, Σ = (ΦᵀBΦ + A)⁻¹ with B = diag(σᵢ(1 − σᵢ)),
// then sets αᵢ ← γᵢ/wᵢ*² with γᵢ = 1 − αᵢΣᵢᵢ and prunes the basis functions
// whose αᵢ diverges.
type RVC struct {
	Relevant []int     // the columns kept, in order
	Weights  []float64 // the posterior mode w* over them
	Alpha    []float64 // their precisions
	Columns  int
	Iter     int
}

// FitRVC fits the classifier to the design matrix phi (n, M) and labels in
// {0, 1}. It returns an error for bad shapes or labels, or when every
// basis function is pruned.
func FitRVC(phi *tensor.Tensor, labels []int, opts Options) (*RVC, error) {
	const op = "bayeslinear.FitRVC"
	y := make([]float64, len(labels))
	for i, l := range labels {
		if l != 0 && l != 1 {
			return nil, fmt.Errorf("%s: label %d is %d; labels must be 0 or 1", op, i, l)
		}
		y[i] = float64(l)
	}
	p, err := check(op, phi, y)
	if err != nil {
		return nil, err
	}
	opts = opts.defaults(y)
	n, cols := p.Shape()[0], p.Shape()[1]
	pv := p.Values()
	active := make([]int, cols)
	alpha := make([]float64, cols)
	for i := range active {
		active[i], alpha[i] = i, opts.Alpha
	}
	w := make([]float64, cols)
	res := &RVC{Columns: cols}
	for it := 1; it <= opts.MaxIter; it++ {
		m := len(active)
		cov, err := irls(pv, n, cols, active, y, alpha, w)
		if err != nil {
			return nil, fmt.Errorf("%s: iteration %d: %w", op, it, err)
		}
		var keep []int
		var keepA, keepW []float64
		change := 0.0
		for j := range m {
			gamma := 1 - alpha[j]*cov[j*m+j]
			a := gamma / math.Max(w[j]*w[j], 1e-300)
			change = math.Max(change, math.Abs(math.Log(a)-math.Log(alpha[j])))
			if a < opts.PruneAlpha {
				keep, keepA, keepW = append(keep, active[j]), append(keepA, a), append(keepW, w[j])
			}
		}
		if len(keep) == 0 {
			return nil, fmt.Errorf("%s: every basis function was pruned at iteration %d", op, it)
		}
		res.Iter = it
		converged := len(keep) == m && change < 1e-6
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

// Probability returns P(y = 1 | x) = σ(φ(x)ᵀw*) for the rows of the full
// design matrix phi (k, M), the mode's plug-in prediction.
func (r *RVC) Probability(phi *tensor.Tensor) []float64 {
	if phi == nil || phi.Dim() != 2 || phi.Shape()[1] != r.Columns {
		tensor.Fail("bayeslinear.RVC.Probability", "want a (k, %d) design matrix, got %v", r.Columns, phi)
	}
	k := phi.Shape()[0]
	pv := phi.Cast(tensor.Float64).Contiguous().Values()
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
