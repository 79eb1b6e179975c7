package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/chewxy/math32"
)

// pcgStream is the fixed PCG increment (stream selector) paired with the
// user's seed. Keeping it constant means a seed alone determines the
// sequence, on every run and platform.
const pcgStream = 0x9e3779b97f4a7c15

// RNG is an explicitly seeded source of random numbers and random tensors.
// It wraps math/rand/v2's PCG generator; there is no package-level state,
// so two RNGs made with the same seed produce the same numbers in the same
// order on every run and platform.
//
// An RNG is not safe for concurrent use: give each goroutine its own (for
// example seeded from a parent RNG's Uint64).
type RNG struct {
	src *rand.PCG // kept to save and restore the state; r holds no other
	r   *rand.Rand
}

// NewRNG returns a generator seeded with seed.
func NewRNG(seed uint64) *RNG {
	src := rand.NewPCG(seed, pcgStream)
	return &RNG{src: src, r: rand.New(src)}
}

// MarshalBinary returns the generator's state (encoding.BinaryMarshaler).
// A generator given that state by UnmarshalBinary draws the same numbers
// from then on; checkpoints save it so a resumed run continues the stream.
func (g *RNG) MarshalBinary() ([]byte, error) { return g.src.MarshalBinary() }

// UnmarshalBinary sets the generator's state to one returned by
// MarshalBinary (encoding.BinaryUnmarshaler). It returns an error, and
// leaves g as it was, when b is not such a state.
func (g *RNG) UnmarshalBinary(b []byte) error {
	if err := g.src.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("tensor: RNG state of %d bytes: %w", len(b), err)
	}
	return nil
}

// Float64 returns a uniform value in [0, 1).
func (g *RNG) Float64() float64 { return g.r.Float64() }

// NormFloat64 returns a standard normal value.
func (g *RNG) NormFloat64() float64 { return g.r.NormFloat64() }

// Uint64 returns 64 uniformly random bits.
func (g *RNG) Uint64() uint64 { return g.r.Uint64() }

// Intn returns a uniform integer in [0, n). It panics if n <= 0.
func (g *RNG) Intn(n int) int {
	if n <= 0 {
		Fail("Intn", "n = %d is not positive", n)
	}
	return g.r.IntN(n)
}

// Perm returns a uniformly random permutation of 0, 1, ..., n-1.
func (g *RNG) Perm(n int) []int {
	if n < 0 {
		Fail("Perm", "negative n = %d", n)
	}
	return g.r.Perm(n)
}

// Uniform returns a tensor of values drawn uniformly from [lo, hi). It
// panics unless lo < hi and both are finite.
func (g *RNG) Uniform(dt DType, lo, hi float64, shape ...int) *Tensor {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		Fail("Uniform", "need finite lo < hi, got [%g, %g) for shape %v %v", lo, hi, fmtShape(shape), dt)
	}
	t := New(dt, shape...)
	w := hi - lo
	if dt == Float32 {
		lo32, hi32 := float32(lo), float32(hi)
		for i := range t.f32 {
			v := float32(lo + w*g.r.Float64())
			// Rounding to float32 can land exactly on hi; keep the
			// interval half-open.
			if v >= hi32 {
				v = math32.Nextafter(hi32, lo32)
			}
			t.f32[i] = v
		}
		return t
	}
	for i := range t.f64 {
		t.f64[i] = lo + w*g.r.Float64()
	}
	return t
}

// Normal returns a tensor of values drawn from a normal distribution with
// the given mean and standard deviation. It panics if std is negative.
func (g *RNG) Normal(dt DType, mean, std float64, shape ...int) *Tensor {
	if !(std >= 0) {
		Fail("Normal", "standard deviation %g is not >= 0 (shape %v %v)", std, fmtShape(shape), dt)
	}
	t := New(dt, shape...)
	if dt == Float32 {
		for i := range t.f32 {
			t.f32[i] = float32(mean + std*g.r.NormFloat64())
		}
		return t
	}
	for i := range t.f64 {
		t.f64[i] = mean + std*g.r.NormFloat64()
	}
	return t
}

// Bernoulli returns a tensor of independent 0/1 values that are 1 with
// probability p. It panics unless 0 <= p <= 1.
func (g *RNG) Bernoulli(dt DType, p float64, shape ...int) *Tensor {
	if !(p >= 0 && p <= 1) {
		Fail("Bernoulli", "probability %g is outside [0, 1] (shape %v %v)", p, fmtShape(shape), dt)
	}
	t := New(dt, shape...)
	if dt == Float32 {
		for i := range t.f32 {
			if g.r.Float64() < p {
				t.f32[i] = 1
			}
		}
		return t
	}
	for i := range t.f64 {
		if g.r.Float64() < p {
			t.f64[i] = 1
		}
	}
	return t
}
