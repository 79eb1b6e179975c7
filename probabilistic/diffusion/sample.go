package diffusion

import (
	"context"
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/losses"
	"github.com/gradus-ml/gradus/tensor"
)

// NoiseModel predicts the noise ε in a noisy batch: given x_t (N, …) on a
// graph and each row's time step t in 1…T, it returns ε̂ of x_t's shape.
// UNet.Forward is one.
type NoiseModel func(xt *graph.Node, t []int) *graph.Node

// Loss returns the simplified training objective of Ho et al. (2020),
// Algorithm 1: with t uniform on 1…T and ε ~ N(0, I) drawn from rng for
// every row of the clean batch x0 (N, …), the mean over all elements of
// ‖ε − ε̂(√ᾱ_t·x_0 + √(1 − ᾱ_t)·ε, t)‖². It panics with a *tensor.Error if
// the model returns another shape.
func (s *Schedule) Loss(g *graph.Graph, model NoiseModel, x0 *tensor.Tensor, rng *tensor.RNG) *graph.Node {
	if x0 == nil || x0.Dim() < 1 || x0.Shape()[0] == 0 {
		tensor.Fail("diffusion.Schedule.Loss", "want a batch (N, …) of clean examples with N > 0")
	}
	t := make([]int, x0.Shape()[0])
	for i := range t {
		t[i] = 1 + rng.Intn(s.T())
	}
	return s.LossAt(g, model, x0, Noise(rng, x0.DType(), x0.Shape()...), t)
}

// LossAt is Loss at given noise eps (x0's shape) and time steps t (one per
// row).
func (s *Schedule) LossAt(g *graph.Graph, model NoiseModel, x0, eps *tensor.Tensor, t []int) *graph.Node {
	xt := s.QSample(x0, eps, t)
	pred := predict("diffusion.Schedule.Loss", model, g.Const(xt), t)
	return losses.MSE(pred, g.Const(eps), losses.Mean)
}

// predict runs the model and checks the shape of its answer.
func predict(op string, model NoiseModel, xt *graph.Node, t []int) *graph.Node {
	eps := model(xt, t)
	if eps == nil || !equalShape(eps.Shape(), xt.Shape()) {
		got := "nil"
		if eps != nil {
			got = tensor.FormatShape(eps.Shape())
		}
		tensor.Fail(op, "the noise model maps x_t %s to %s; want the same shape", tensor.FormatShape(xt.Shape()), got)
	}
	return eps
}

// Sampler names a reverse process.
type Sampler int

const (
	// Ancestral is Algorithm 2 of Ho et al. (2020): x_{t−1} = (x_t −
	// β_t/√(1 − ᾱ_t)·ε̂)/√α_t + σ_t·z, with no noise at the last step.
	Ancestral Sampler = iota
	// DDIM is the implicit sampler of Song, Meng and Ermon (2021): x_{t−1}
	// = √ᾱ_{t−1}·x̂_0 + √(1 − ᾱ_{t−1} − σ_t²)·ε̂ + σ_t·z with x̂_0 = (x_t −
	// √(1 − ᾱ_t)·ε̂)/√ᾱ_t; deterministic with the default η = 0.
	DDIM
)

// String returns "ancestral" or "ddim".
func (k Sampler) String() string {
	switch k {
	case Ancestral:
		return "ancestral"
	case DDIM:
		return "ddim"
	}
	return fmt.Sprintf("Sampler(%d)", int(k))
}

// ParseSampler returns the sampler named "ancestral" or "ddim".
func ParseSampler(name string) (Sampler, error) {
	switch name {
	case "ancestral":
		return Ancestral, nil
	case "ddim":
		return DDIM, nil
	}
	return 0, fmt.Errorf("diffusion: unknown sampler %q (want ancestral or ddim)", name)
}

// SampleOptions configures Sample. The zero value is Algorithm 2 over all
// T steps with σ_t² = β_t.
type SampleOptions struct {
	Sampler Sampler
	// Steps is the number of reverse steps, at time steps τ_i = round(i·T/
	// Steps), i = 1…Steps (0: all T). With fewer steps than T the ancestral
	// sampler uses the respaced β_i = 1 − ᾱ_{τ_i}/ᾱ_{τ_{i−1}} (Nichol and
	// Dhariwal 2021).
	Steps int
	// PosteriorVariance takes σ_t² = β̃_t = (1 − ᾱ_{t−1})/(1 − ᾱ_t)·β_t
	// instead of β_t in the ancestral sampler (Ho et al. found both alike).
	PosteriorVariance bool
	// Eta scales DDIM's noise: 0 is deterministic, 1 is the ancestral
	// sampler with σ_t² = β̃_t.
	Eta float64
	// Clip, if positive, clips the predicted x̂_0 to [−Clip, Clip] at every
	// step (the ancestral mean is then c0·x̂_0 + ct·x_t, the posterior's).
	Clip float64
	// Progress, if not nil, is called after each reverse step.
	Progress func(done, total int)
}

// timeSteps returns τ_1 < … < τ_S = T.
func (s *Schedule) timeSteps(steps int) ([]int, error) {
	T := s.T()
	if steps == 0 {
		steps = T
	}
	if steps < 0 || steps > T {
		return nil, fmt.Errorf("diffusion: Sample: %d steps, want 1…T = %d", steps, T)
	}
	tau := make([]int, steps)
	for i := range tau {
		tau[i] = int(math.Round(float64((i+1)*T) / float64(steps)))
	}
	return tau, nil
}

// Sample draws x_0 by the reverse process from x_T ~ N(0, I) of the given
// shape (N, …) and dtype, with the noise model's predictions and noise
// from rng. It returns an error for a bad shape or option, a model whose
// output does not fit, or a non-finite value. It checks ctx before every
// reverse step and returns ctx.Err() wrapped when ctx is cancelled (a
// partly denoised x_t is no sample, so nothing else comes back).
func (s *Schedule) Sample(ctx context.Context, model NoiseModel, rng *tensor.RNG, dt tensor.DType, opts SampleOptions, shape ...int) (*tensor.Tensor, error) {
	for _, d := range shape {
		if d <= 0 {
			return nil, fmt.Errorf("diffusion: Sample: shape %s must be a non-empty batch (N, …)", tensor.FormatShape(shape))
		}
	}
	if len(shape) == 0 {
		return nil, fmt.Errorf("diffusion: Sample: no shape")
	}
	return s.SampleFrom(ctx, model, Noise(rng, dt, shape...), rng, opts)
}

// SampleFrom runs the reverse process from the given x_T (N, …), drawing
// any further noise from rng, and returns x_0. See Sample.
func (s *Schedule) SampleFrom(ctx context.Context, model NoiseModel, xT *tensor.Tensor, rng *tensor.RNG, opts SampleOptions) (out *tensor.Tensor, err error) {
	defer tensor.Recover(&err)
	if opts.Sampler != Ancestral && opts.Sampler != DDIM {
		return nil, fmt.Errorf("diffusion: Sample: unknown sampler %v", opts.Sampler)
	}
	if !(opts.Eta >= 0) || !(opts.Clip >= 0) {
		return nil, fmt.Errorf("diffusion: Sample: η = %v and clip = %v must not be negative", opts.Eta, opts.Clip)
	}
	tau, err := s.timeSteps(opts.Steps)
	if err != nil {
		return nil, err
	}
	if xT == nil || xT.Dim() < 1 || xT.Size() == 0 {
		return nil, fmt.Errorf("diffusion: Sample: x_T must be a non-empty batch (N, …)")
	}
	shape, dt := xT.Shape(), xT.DType()
	x := xT.Values()
	ts := make([]int, shape[0])
	g := graph.New()
	for i := len(tau) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("diffusion: Sample: stopped after %d of %d steps: %w", len(tau)-1-i, len(tau), err)
		}
		t, prev := tau[i], 0
		if i > 0 {
			prev = tau[i-1]
		}
		for j := range ts {
			ts[j] = t
		}
		g.Reset()
		eps := predict("diffusion.Schedule.Sample", model, g.Const(tensor.FromValues(dt, x, shape...)), ts).Value().Values()
		s.reverseStep(x, eps, t, prev, rng, opts)
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("diffusion: Sample: x_%d is not finite", prev)
			}
		}
		if opts.Progress != nil {
			opts.Progress(len(tau)-i, len(tau))
		}
	}
	g.Reset()
	return tensor.FromValues(dt, x, shape...), nil
}

// reverseStep replaces x = x_t by a draw of x_prev given the predicted
// noise eps.
func (s *Schedule) reverseStep(x, eps []float64, t, prev int, rng *tensor.RNG, opts SampleOptions) {
	ab, abPrev := s.AlphaBar(t), s.AlphaBar(prev)
	beta := 1 - ab/abPrev // β_t itself when prev = t − 1
	x0 := func(xt, e float64) float64 {
		v := (xt - math.Sqrt(1-ab)*e) / math.Sqrt(ab)
		if opts.Clip > 0 {
			v = max(-opts.Clip, min(opts.Clip, v))
		}
		return v
	}
	var sigma float64
	if opts.Sampler == DDIM {
		sigma = opts.Eta * math.Sqrt((1-abPrev)/(1-ab)*beta)
		dir := math.Sqrt(max(1-abPrev-sigma*sigma, 0))
		for j := range x {
			x[j] = math.Sqrt(abPrev)*x0(x[j], eps[j]) + dir*eps[j]
		}
	} else {
		sigma = math.Sqrt(beta)
		if opts.PosteriorVariance {
			sigma = math.Sqrt((1 - abPrev) / (1 - ab) * beta)
		}
		if opts.Clip > 0 {
			c0, ct := math.Sqrt(abPrev)*beta/(1-ab), math.Sqrt(1-beta)*(1-abPrev)/(1-ab)
			for j := range x {
				x[j] = c0*x0(x[j], eps[j]) + ct*x[j]
			}
		} else {
			a, b := 1/math.Sqrt(1-beta), beta/math.Sqrt(1-ab)
			for j := range x {
				x[j] = a * (x[j] - b*eps[j])
			}
		}
	}
	if prev > 0 && sigma > 0 {
		for j := range x {
			x[j] += sigma * rng.NormFloat64()
		}
	}
}
