package inference

import (
	"context"
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

// ImportanceOptions configures Importance: the Gaussian proposal
// N(Mean, diag(SD²)) on the unconstrained parameters, the number of draws
// and the seed.
type ImportanceOptions struct {
	Mean []float64 // the proposal's mean, one per unconstrained scalar (required)
	SD   []float64 // its standard deviations, positive (required)
	// Draws is the number of draws; 0 means 1000.
	Draws int
	Seed  uint64
}

// Importance draws points from the Gaussian proposal of opts on the
// unconstrained parameters and weights them by the model's density over
// the proposal's (importance sampling; Owen 2013, "Monte Carlo theory,
// methods and examples", ch. 9). Self-normalised weights give posterior
// expectations (Expect); the mean unnormalised weight estimates the
// evidence. Draws where the model has no density get weight 0. When ctx
// is cancelled it stops drawing and returns the result of the draws so far
// (if any has a finite density) with ctx.Err() wrapped.
func Importance(ctx context.Context, m Model, opts ImportanceOptions) (*ImportanceResult, error) {
	ev, err := newEvaluator(m)
	if err != nil {
		return nil, err
	}
	mean, sd, n := opts.Mean, opts.SD, opts.Draws
	if n == 0 {
		n = 1000
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
	rng := tensor.NewRNG(opts.Seed)
	res := &ImportanceResult{Names: ev.names(mean)}
	grad := make([]float64, ev.dim)
	theta := make([]float64, ev.dim)
	top := math.Inf(-1)
	var stopped error
	for k := range n {
		if err := ctx.Err(); err != nil {
			stopped = fmt.Errorf("inference.Importance: stopped after %d of %d draws: %w", k, n, err)
			break
		}
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
	if stopped != nil && len(res.LogW) == 0 {
		return nil, stopped
	}
	if math.IsInf(top, -1) {
		return nil, fmt.Errorf("inference.Importance: no draw has a finite density")
	}
	res.Weights, res.ESS, res.LogEvidence = SelfNormalize(res.LogW)
	return res, stopped
}

// SelfNormalize turns log importance weights log wᵢ into normalised
// weights wᵢ/Σw, their effective sample size 1/Σ(wᵢ/Σw)² (Kong 1992) and
// the log of their mean, log (1/n)Σwᵢ, the estimate of the log evidence,
// computed from the largest weight so that none overflows. At least one
// log weight must be finite.
func SelfNormalize(logW []float64) (weights []float64, ess, logMean float64) {
	top := math.Inf(-1)
	for _, lw := range logW {
		top = math.Max(top, lw)
	}
	sum, sum2 := 0.0, 0.0
	weights = make([]float64, len(logW))
	for i, lw := range logW {
		weights[i] = math.Exp(lw - top)
		sum += weights[i]
	}
	for i := range weights {
		weights[i] /= sum
		sum2 += weights[i] * weights[i]
	}
	return weights, 1 / sum2, top + math.Log(sum/float64(len(logW)))
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
