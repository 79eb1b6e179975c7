package optim

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// PlateauOptions configures NewReduceLROnPlateau. Zero-valued fields take
// PyTorch's defaults (Factor 0.1, Patience 10, Threshold 1e-4, Eps 1e-8;
// Cooldown and MinLR 0); set NoDefaults to take every field literally
// (e.g. Patience 0).
type PlateauOptions struct {
	Maximize          bool    // the metric should grow (torch mode "max"); default "min"
	Factor            float64 // new rate = old rate · Factor, in (0, 1)
	Patience          int     // epochs without improvement tolerated before reducing
	Threshold         float64 // least improvement that counts
	AbsoluteThreshold bool    // Threshold is absolute (torch "abs"); default relative ("rel")
	Cooldown          int     // epochs to wait after a reduction before counting again
	MinLR             float64 // the rate is never reduced below MinLR
	Eps               float64 // reductions smaller than Eps are skipped
	NoDefaults        bool    // take every field literally
}

// ReduceLROnPlateau lowers an optimiser's learning rate when a metric
// stops improving, with the semantics of torch's ReduceLROnPlateau. Call
// Observe once per epoch with the validation metric.
type ReduceLROnPlateau struct {
	opt      Optimizer
	cfg      PlateauOptions
	best     float64
	bad      int // epochs since the last improvement
	cooldown int // epochs of cooldown left
}

// NewReduceLROnPlateau returns a scheduler that adjusts opt's learning
// rate. It panics with a *tensor.Error for a Factor outside (0, 1) or
// negative values.
func NewReduceLROnPlateau(opt Optimizer, cfg PlateauOptions) *ReduceLROnPlateau {
	const op = "NewReduceLROnPlateau"
	if opt == nil {
		tensor.Fail(op, "optimiser is nil")
	}
	if !cfg.NoDefaults {
		def(&cfg.Factor, 0.1)
		if cfg.Patience == 0 {
			cfg.Patience = 10
		}
		def(&cfg.Threshold, 1e-4)
		def(&cfg.Eps, 1e-8)
	}
	if !(cfg.Factor > 0 && cfg.Factor < 1) {
		tensor.Fail(op, "Factor %g must be in (0, 1)", cfg.Factor)
	}
	if cfg.Patience < 0 || cfg.Cooldown < 0 {
		tensor.Fail(op, "Patience %d and Cooldown %d must be >= 0", cfg.Patience, cfg.Cooldown)
	}
	checkNonNeg(op, "Threshold", cfg.Threshold)
	checkNonNeg(op, "MinLR", cfg.MinLR)
	checkNonNeg(op, "Eps", cfg.Eps)
	r := &ReduceLROnPlateau{opt: opt, cfg: cfg, best: math.Inf(1)}
	if cfg.Maximize {
		r.best = math.Inf(-1)
	}
	return r
}

// better reports whether metric improves on the best so far by more than
// the threshold. NaN never does.
func (r *ReduceLROnPlateau) better(metric float64) bool {
	c := r.cfg
	switch {
	case !c.Maximize && !c.AbsoluteThreshold:
		return metric < r.best*(1-c.Threshold)
	case !c.Maximize:
		return metric < r.best-c.Threshold
	case !c.AbsoluteThreshold:
		return metric > r.best*(1+c.Threshold)
	default:
		return metric > r.best+c.Threshold
	}
}

// Observe records the metric of one epoch and, after more than Patience
// epochs without improvement (outside cooldown), multiplies the
// optimiser's learning rate by Factor, never going below MinLR.
func (r *ReduceLROnPlateau) Observe(metric float64) {
	if r.better(metric) {
		r.best = metric
		r.bad = 0
	} else {
		r.bad++
	}
	if r.cooldown > 0 {
		r.cooldown--
		r.bad = 0
	}
	if r.bad > r.cfg.Patience {
		old := r.opt.LR()
		lr := max(old*r.cfg.Factor, r.cfg.MinLR)
		if old-lr > r.cfg.Eps {
			r.opt.SetLR(lr)
		}
		r.cooldown = r.cfg.Cooldown
		r.bad = 0
	}
}

// Best returns the best metric observed so far (±Inf before the first).
func (r *ReduceLROnPlateau) Best() float64 { return r.best }

// PlateauState is what a ReduceLROnPlateau remembers between epochs, for
// checkpoints: the learning rate itself is the optimiser's (its State
// holds it).
type PlateauState struct {
	Best     float64 // the best metric so far: +Inf (−Inf when maximising) before the first
	Bad      int     // epochs since the last improvement
	Cooldown int     // epochs of cooldown left
}

// State returns the scheduler's state.
func (r *ReduceLROnPlateau) State() PlateauState {
	return PlateauState{Best: r.best, Bad: r.bad, Cooldown: r.cooldown}
}

// SetState restores a state returned by State of a scheduler with the same
// options. It returns an error, changing nothing, when s could not have
// come from one: a NaN or wrong-signed infinite Best, Bad outside
// [0, Patience], or Cooldown outside [0, Cooldown].
func (r *ReduceLROnPlateau) SetState(s PlateauState) error {
	start := math.Inf(1)
	if r.cfg.Maximize {
		start = math.Inf(-1)
	}
	switch {
	case math.IsNaN(s.Best) || math.IsInf(s.Best, 0) && s.Best != start:
		return fmt.Errorf("optim.ReduceLROnPlateau.SetState: best metric %g: want a finite value, or %g before the first epoch", s.Best, start)
	case s.Bad < 0 || s.Bad > r.cfg.Patience:
		return fmt.Errorf("optim.ReduceLROnPlateau.SetState: %d epochs without improvement: want 0 to Patience %d", s.Bad, r.cfg.Patience)
	case s.Cooldown < 0 || s.Cooldown > r.cfg.Cooldown:
		return fmt.Errorf("optim.ReduceLROnPlateau.SetState: cooldown of %d epochs: want 0 to Cooldown %d", s.Cooldown, r.cfg.Cooldown)
	}
	r.best, r.bad, r.cooldown = s.Best, s.Bad, s.Cooldown
	return nil
}
