package diffusion

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Schedule is the variance schedule β_1, …, β_T of a diffusion and the
// quantities derived from it: α_t = 1 − β_t and ᾱ_t = ∏_{s≤t} α_s. Time
// steps are numbered 1…T as in Ho et al. (2020); ᾱ_0 = 1.
type Schedule struct {
	betas     []float64 // β_t at index t−1
	alphaBars []float64 // ᾱ_t at index t−1
}

// NewSchedule returns the schedule of the given β_1, …, β_T. It returns an
// error if there are none or one is not in (0, 1).
func NewSchedule(betas []float64) (*Schedule, error) {
	if len(betas) == 0 {
		return nil, fmt.Errorf("diffusion: NewSchedule: no steps (T = 0)")
	}
	s := &Schedule{betas: append([]float64(nil), betas...), alphaBars: make([]float64, len(betas))}
	prod := 1.0
	for i, b := range betas {
		if !(b > 0 && b < 1) {
			return nil, fmt.Errorf("diffusion: NewSchedule: β_%d = %v is not in (0, 1)", i+1, b)
		}
		prod *= 1 - b
		s.alphaBars[i] = prod
	}
	return s, nil
}

// Linear returns the linear schedule of Ho et al. (2020): T values of β
// evenly spaced from beta1 to betaT (the paper: T = 1000, 1e-4 to 0.02).
// It returns an error if T ≤ 0 or an end is not in (0, 1).
func Linear(T int, beta1, betaT float64) (*Schedule, error) {
	if T <= 0 {
		return nil, fmt.Errorf("diffusion: Linear: T = %d steps, want at least 1", T)
	}
	if !(beta1 > 0 && beta1 < 1) || !(betaT > 0 && betaT < 1) {
		return nil, fmt.Errorf("diffusion: Linear: β_1 = %v and β_T = %v must be in (0, 1)", beta1, betaT)
	}
	betas := make([]float64, T)
	for i := range betas {
		if T == 1 {
			betas[i] = beta1
			break
		}
		betas[i] = beta1 + (betaT-beta1)*float64(i)/float64(T-1)
	}
	return NewSchedule(betas)
}

// Cosine returns the cosine schedule of Nichol and Dhariwal (2021):
// ᾱ_t = f(t)/f(0) with f(t) = cos²((t/T + s)/(1 + s)·π/2), the β_t it
// implies clipped at 0.999 (s = 0.008 in the paper). It returns an error
// if T ≤ 0 or s < 0.
func Cosine(T int, s float64) (*Schedule, error) {
	if T <= 0 {
		return nil, fmt.Errorf("diffusion: Cosine: T = %d steps, want at least 1", T)
	}
	if !(s >= 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("diffusion: Cosine: offset s = %v must be finite and not negative", s)
	}
	f := func(t int) float64 {
		c := math.Cos((float64(t)/float64(T) + s) / (1 + s) * math.Pi / 2)
		return c * c
	}
	betas := make([]float64, T)
	for t := 1; t <= T; t++ {
		betas[t-1] = min(1-f(t)/f(t-1), 0.999)
	}
	return NewSchedule(betas)
}

// T returns the number of steps.
func (s *Schedule) T() int { return len(s.betas) }

// Beta returns β_t for t in 1…T. It panics with a *tensor.Error for a t
// outside that range.
func (s *Schedule) Beta(t int) float64 {
	s.check("Beta", t, 1)
	return s.betas[t-1]
}

// AlphaBar returns ᾱ_t = ∏_{s≤t} (1 − β_s) for t in 0…T (ᾱ_0 = 1). It
// panics with a *tensor.Error for a t outside that range.
func (s *Schedule) AlphaBar(t int) float64 {
	s.check("AlphaBar", t, 0)
	if t == 0 {
		return 1
	}
	return s.alphaBars[t-1]
}

// Posterior returns the coefficients of the Gaussian posterior
// q(x_{t−1} | x_t, x_0) = N(c0·x_0 + ct·x_t, variance) for t in 1…T (Ho et
// al. 2020, eq. 6–7):
//
//	c0 = √ᾱ_{t−1}·β_t/(1 − ᾱ_t),  ct = √α_t·(1 − ᾱ_{t−1})/(1 − ᾱ_t),
//	variance = β̃_t = (1 − ᾱ_{t−1})/(1 − ᾱ_t)·β_t.
func (s *Schedule) Posterior(t int) (c0, ct, variance float64) {
	s.check("Posterior", t, 1)
	ab, abPrev, b := s.AlphaBar(t), s.AlphaBar(t-1), s.betas[t-1]
	return math.Sqrt(abPrev) * b / (1 - ab), math.Sqrt(1-b) * (1 - abPrev) / (1 - ab), (1 - abPrev) / (1 - ab) * b
}

func (s *Schedule) check(op string, t, lo int) {
	if t < lo || t > len(s.betas) {
		tensor.Fail("diffusion.Schedule."+op, "time step %d outside %d…%d", t, lo, len(s.betas))
	}
}

// Noise returns the given shape of standard normal values drawn from rng,
// in dtype dt.
func Noise(rng *tensor.RNG, dt tensor.DType, shape ...int) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return tensor.FromValues(dt, v, shape...)
}

// QSample draws x_t from the forward process's marginal q(x_t | x_0) =
// N(√ᾱ_t·x_0, (1 − ᾱ_t)·I) given the noise: x_t = √ᾱ_t·x_0 + √(1 − ᾱ_t)·ε.
// x0 and eps are (N, …) of one shape and dtype; t holds each row's time
// step in 1…T (or 0, which returns x_0). It panics with a *tensor.Error on
// shapes that do not fit.
func (s *Schedule) QSample(x0, eps *tensor.Tensor, t []int) *tensor.Tensor {
	return s.combine("QSample", x0, eps, t, func(t int) (float64, float64) {
		ab := s.AlphaBar(t)
		return math.Sqrt(ab), math.Sqrt(1 - ab)
	})
}

// QStep draws x_t from one step of the forward process, q(x_t | x_{t−1}) =
// N(√(1 − β_t)·x_{t−1}, β_t·I), given the noise: x_t = √(1 − β_t)·x_{t−1}
// + √β_t·ε, with t (per row) in 1…T.
func (s *Schedule) QStep(xPrev, eps *tensor.Tensor, t []int) *tensor.Tensor {
	return s.combine("QStep", xPrev, eps, t, func(t int) (float64, float64) {
		b := s.Beta(t)
		return math.Sqrt(1 - b), math.Sqrt(b)
	})
}

// combine returns a·x + b·e row by row, with (a, b) = coef(t[row]).
func (s *Schedule) combine(op string, x, e *tensor.Tensor, t []int, coef func(int) (float64, float64)) *tensor.Tensor {
	n, row := checkBatch("diffusion.Schedule."+op, x, e, t)
	xv, ev := x.Values(), e.Values()
	out := make([]float64, len(xv))
	for i := range n {
		a, b := coef(t[i])
		for j := i * row; j < (i+1)*row; j++ {
			out[j] = a*xv[j] + b*ev[j]
		}
	}
	return tensor.FromValues(x.DType(), out, x.Shape()...)
}

// checkBatch checks that x and e are (N, …) of one shape and dtype with one
// time step per row, and returns N and the size of a row.
func checkBatch(op string, x, e *tensor.Tensor, t []int) (n, row int) {
	if x == nil || e == nil {
		tensor.Fail(op, "nil tensor")
	}
	sh := x.Shape()
	if len(sh) < 1 || sh[0] == 0 {
		tensor.Fail(op, "x of shape %s: want a batch (N, …) with N > 0", tensor.FormatShape(sh))
	}
	if !equalShape(sh, e.Shape()) || x.DType() != e.DType() {
		tensor.Fail(op, "x %s %v and the noise %s %v differ", tensor.FormatShape(sh), x.DType(), tensor.FormatShape(e.Shape()), e.DType())
	}
	if len(t) != sh[0] {
		tensor.Fail(op, "%d time steps for a batch of %d", len(t), sh[0])
	}
	return sh[0], x.Size() / sh[0]
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
