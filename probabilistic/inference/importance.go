package inference

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// ImportanceResult holds draws from a proposal and their weights.
type ImportanceResult struct {
	Names   []string
	Draws   [][]float64 // constrained draws, in the layout of Names
	LogW    []float64   // log p(θ) + log|J| − log q(θ) for each draw
	Weights []float64   // self-normalised weights (sum to 1)
	// ESS is Kish's effective sample size (Σw)²/Σw².
	ESS float64
	// LogEvidence estimates log ∫ p: log of the mean unnormalised weight.
	// It is the log marginal likelihood when the model's log density is
	// normalised (log prior + log likelihood with their constants).
	LogEvidence float64
}

// Importance draws n points from the Gaussian proposal N(mean, diag(sd²))
// on the unconstrained parameters and weights them by the model's density
// over the proposal's (seed 000 §5.7.4). Self-normalised weights give
// posterior expectations (Expect); the mean unnormalised weight estimates
// the evidence. Draws where the model has no density get weight 0.
func Importance(m Model, mean, sd []float64, n int, seed uint64) (*ImportanceResult, error) {
	ev, err := newEvaluator(m)
	if err != nil {
		return nil, err
	}
	if len(mean) != ev.dim || len(sd) != ev.dim {
		return nil, fmt.Errorf("inference.Importance: the proposal has %d means and %d sds for %d unconstrained parameters", len(mean), len(sd), ev.dim)
	}
	for i, s := range sd {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("inference.Importance: proposal sd %d is %v", i, s)
		}
	}
	if n < 1 {
		return nil, fmt.Errorf("inference.Importance: %d draws", n)
	}
	rng := tensor.NewRNG(seed)
	res := &ImportanceResult{Names: ev.names(mean)}
	grad := make([]float64, ev.dim)
	theta := make([]float64, ev.dim)
	top := math.Inf(-1)
	for range n {
		logq := 0.0
		for i := range theta {
			z := rng.NormFloat64()
			theta[i] = mean[i] + sd[i]*z
			logq += -0.5*z*z - math.Log(sd[i]) - 0.5*math.Log(2*math.Pi)
		}
		lw := ev.logp(theta, grad) - logq
		res.LogW = append(res.LogW, lw)
		res.Draws = append(res.Draws, ev.constrain(theta))
		top = math.Max(top, lw)
	}
	if math.IsInf(top, -1) {
		return nil, fmt.Errorf("inference.Importance: no draw has a finite density")
	}
	sum, sum2 := 0.0, 0.0
	res.Weights = make([]float64, n)
	for i, lw := range res.LogW {
		res.Weights[i] = math.Exp(lw - top)
		sum += res.Weights[i]
	}
	for i := range res.Weights {
		res.Weights[i] /= sum
		sum2 += res.Weights[i] * res.Weights[i]
	}
	res.ESS = 1 / sum2
	res.LogEvidence = top + math.Log(sum/float64(n))
	return res, nil
}

// Expect returns the self-normalised estimate of E[f(θ)] over the
// posterior, θ constrained in the layout of Names.
func (r *ImportanceResult) Expect(f func(theta []float64) float64) float64 {
	s := 0.0
	for i, d := range r.Draws {
		s += r.Weights[i] * f(d)
	}
	return s
}
