package optim

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Schedule gives the learning rate for a step (or epoch) counted from 0.
// Schedules are pure functions of the step, so resuming from a checkpoint
// needs only the step number:
//
//	sched := optim.CosineAnnealingLR(0.1, 100, 0)
//	for epoch := 0; epoch < 100; epoch++ {
//		opt.SetLR(sched.LR(epoch))
//		// ... one epoch of opt.Step ...
//	}
type Schedule interface {
	// LR returns the learning rate for step (0-based).
	LR(step int) float64
}

// ScheduleFunc adapts a function to Schedule.
type ScheduleFunc func(step int) float64

// LR calls f(step).
func (f ScheduleFunc) LR(step int) float64 { return f(step) }

func checkStep(op string, step int) {
	if step < 0 {
		tensor.Fail(op, "step %d must be >= 0", step)
	}
}

func checkBase(op string, base float64) {
	if !(base >= 0) || math.IsInf(base, 0) {
		tensor.Fail(op, "base learning rate %g must be finite and >= 0", base)
	}
}

// Constant returns the schedule that is lr at every step.
func Constant(lr float64) Schedule {
	checkBase("Constant", lr)
	return ScheduleFunc(func(step int) float64 { return lr })
}

// StepLR returns torch's StepLR: base·gamma^⌊step/stepSize⌋, the rate
// multiplied by gamma every stepSize steps. It panics with a *tensor.Error
// if stepSize < 1 or base or gamma is negative.
func StepLR(base float64, stepSize int, gamma float64) Schedule {
	checkBase("StepLR", base)
	checkNonNeg("StepLR", "gamma", gamma)
	if stepSize < 1 {
		tensor.Fail("StepLR", "step size %d must be >= 1", stepSize)
	}
	return ScheduleFunc(func(step int) float64 {
		checkStep("StepLR", step)
		return base * math.Pow(gamma, float64(step/stepSize))
	})
}

// ExponentialLR returns torch's ExponentialLR: base·gamma^step. It panics
// with a *tensor.Error if base or gamma is negative.
func ExponentialLR(base, gamma float64) Schedule {
	checkBase("ExponentialLR", base)
	checkNonNeg("ExponentialLR", "gamma", gamma)
	return ScheduleFunc(func(step int) float64 {
		checkStep("ExponentialLR", step)
		return base * math.Pow(gamma, float64(step))
	})
}

// CosineAnnealingLR returns torch's CosineAnnealingLR in its closed form,
// etaMin + (base − etaMin)·(1 + cos(π·step/tMax))/2: it falls from base at
// step 0 to etaMin at step tMax and, as in PyTorch, rises again after
// (period 2·tMax). It panics with a *tensor.Error if tMax < 1 or a rate is
// negative.
func CosineAnnealingLR(base float64, tMax int, etaMin float64) Schedule {
	checkBase("CosineAnnealingLR", base)
	checkNonNeg("CosineAnnealingLR", "etaMin", etaMin)
	if tMax < 1 {
		tensor.Fail("CosineAnnealingLR", "tMax %d must be >= 1", tMax)
	}
	return ScheduleFunc(func(step int) float64 {
		checkStep("CosineAnnealingLR", step)
		return etaMin + (base-etaMin)*(1+math.Cos(math.Pi*float64(step)/float64(tMax)))/2
	})
}

// LinearWarmup returns a schedule that ramps linearly up to after's first
// rate over warmup steps and then follows after, shifted to start when the
// warmup ends:
//
//	LR(step) = after.LR(0)·(step+1)/warmup   for step < warmup
//	LR(step) = after.LR(step − warmup)       afterwards
//
// The first step thus already has a non-zero rate and step warmup−1 has
// the full one. It panics with a *tensor.Error if warmup < 0 or after is
// nil.
func LinearWarmup(warmup int, after Schedule) Schedule {
	if warmup < 0 {
		tensor.Fail("LinearWarmup", "warmup %d must be >= 0", warmup)
	}
	if after == nil {
		tensor.Fail("LinearWarmup", "the schedule after warmup is nil")
	}
	return ScheduleFunc(func(step int) float64 {
		checkStep("LinearWarmup", step)
		if step < warmup {
			return after.LR(0) * float64(step+1) / float64(warmup)
		}
		return after.LR(step - warmup)
	})
}
