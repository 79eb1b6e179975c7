package diffusion

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The linear schedule's ᾱ_t at a few t: T = 3 from 0.1 to 0.3 by hand,
// and Ho et al.'s T = 1000 from 1e-4 to 0.02 (ᾱ_2 by hand; ᾱ_500 and
// ᾱ_1000 from NumPy: np.cumprod(1 - np.linspace(1e-4, 0.02, 1000))).
func TestLinearAlphaBar(t *testing.T) {
	s, err := Linear(3, 0.1, 0.3)
	require.NoError(t, err)
	assert.Equal(t, 3, s.T())
	for i, want := range []float64{1, 0.9, 0.9 * 0.8, 0.9 * 0.8 * 0.7} {
		assert.InDelta(t, want, s.AlphaBar(i), 1e-15, "ᾱ_%d", i)
	}
	assert.InDelta(t, 0.2, s.Beta(2), 1e-15)

	s, err = Linear(1000, 1e-4, 0.02)
	require.NoError(t, err)
	assert.InDelta(t, 0.9999, s.AlphaBar(1), 1e-15)
	assert.InDelta(t, 0.9999*(1-(1e-4+0.0199/999)), s.AlphaBar(2), 1e-15)
	assert.InDelta(t, 0.07858724288177824, s.AlphaBar(500), 1e-13)
	assert.InDelta(t, 4.035829765375676e-05, s.AlphaBar(1000), 1e-15)
	assert.InDelta(t, 0.02, s.Beta(1000), 1e-15)
}

// The cosine schedule's ᾱ_t = f(t)/f(0), at T/2 with s = 0.008 and T = 10:
// cos²((0.5 + 0.008)/1.008·π/2)/cos²(0.008/1.008·π/2) = 0.49384359044063775.
func TestCosineAlphaBar(t *testing.T) {
	s, err := Cosine(10, 0.008)
	require.NoError(t, err)
	assert.InDelta(t, 0.49384359044063775, s.AlphaBar(5), 1e-14)
	assert.InDelta(t, 0.999, s.Beta(10), 1e-15, "the last β is clipped at 0.999")
}

// The posterior q(x_{t−1} | x_t, x_0) for β = (0.1, 0.2, 0.3) at t = 2:
// ᾱ_1 = 0.9, ᾱ_2 = 0.72, so c0 = √0.9·0.2/0.28, ct = √0.8·0.1/0.28 and
// β̃_2 = 0.1/0.28·0.2. At t = 1 the posterior is the point x_0.
func TestPosterior(t *testing.T) {
	s, err := NewSchedule([]float64{0.1, 0.2, 0.3})
	require.NoError(t, err)
	c0, ct, v := s.Posterior(2)
	assert.InDelta(t, 0.6776309271789385, c0, 1e-15)
	assert.InDelta(t, 0.3194382824999699, ct, 1e-15)
	assert.InDelta(t, 0.07142857142857144, v, 1e-15)
	c0, ct, v = s.Posterior(1)
	assert.InDelta(t, 1, c0, 1e-15)
	assert.Zero(t, ct)
	assert.Zero(t, v)
}

// moments returns each column's sample mean and variance of rows (n, d).
func moments(x *tensor.Tensor) (mean, variance []float64) {
	n, d := x.Shape()[0], x.Size()/x.Shape()[0]
	v := x.Values()
	mean, variance = make([]float64, d), make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += v[i*d+j] / float64(n)
		}
	}
	for i := range n {
		for j := range d {
			e := v[i*d+j] - mean[j]
			variance[j] += e * e / float64(n-1)
		}
	}
	return mean, variance
}

// checkMarginal asserts that the rows of x have mean √ᾱ·x0 and variance
// 1 − ᾱ, within 5 standard errors of n normal draws (sd σ/√n for the mean,
// σ²·√(2/(n−1)) for the variance).
func checkMarginal(t *testing.T, x *tensor.Tensor, x0 []float64, ab float64, msg string) {
	t.Helper()
	n := float64(x.Shape()[0])
	mean, variance := moments(x)
	for j := range x0 {
		assert.InDelta(t, math.Sqrt(ab)*x0[j], mean[j], 5*math.Sqrt((1-ab)/n), "%s: mean %d", msg, j)
		assert.InDelta(t, 1-ab, variance[j], 5*(1-ab)*math.Sqrt(2/(n-1)), "%s: variance %d", msg, j)
	}
}

// repeat returns x0 as n identical rows.
func repeat(x0 []float64, n int) *tensor.Tensor {
	v := make([]float64, 0, n*len(x0))
	for range n {
		v = append(v, x0...)
	}
	return tensor.FromValues(tensor.Float64, v, n, len(x0))
}

// Many draws of x_t from q(x_t | x_0) have the closed-form mean √ᾱ_t·x_0
// and variance 1 − ᾱ_t.
func TestQSampleMarginal(t *testing.T) {
	s, err := Linear(1000, 1e-4, 0.02)
	require.NoError(t, err)
	x0 := []float64{-1, 0.3, 1}
	const n = 20000
	rng := tensor.NewRNG(3)
	for _, step := range []int{1, 50, 500, 1000} {
		ts := make([]int, n)
		for i := range ts {
			ts[i] = step
		}
		xt := s.QSample(repeat(x0, n), Noise(rng, tensor.Float64, n, 3), ts)
		checkMarginal(t, xt, x0, s.AlphaBar(step), fmt.Sprintf("t = %d", step))
	}
}

// Composing the one-step kernels q(x_t | x_{t−1}) from x_0 gives the
// marginal q(x_t | x_0).
func TestQStepComposes(t *testing.T) {
	s, err := Linear(100, 1e-3, 0.1)
	require.NoError(t, err)
	x0 := []float64{-0.8, 0.5}
	const n, k = 20000, 30
	rng := tensor.NewRNG(4)
	x := repeat(x0, n)
	ts := make([]int, n)
	for step := 1; step <= k; step++ {
		for i := range ts {
			ts[i] = step
		}
		x = s.QStep(x, Noise(rng, tensor.Float64, n, 2), ts)
	}
	checkMarginal(t, x, x0, s.AlphaBar(k), "30 steps")
	// One step is the marginal at t = 1, exactly.
	eps := Noise(rng, tensor.Float64, 1, 2)
	one := []int{1}
	assert.InDeltaSlice(t, s.QSample(repeat(x0, 1), eps, one).Values(), s.QStep(repeat(x0, 1), eps, one).Values(), 1e-15)
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		f    func() (*Schedule, error)
		want string
	}{
		{func() (*Schedule, error) { return Linear(0, 1e-4, 0.02) }, "T = 0"},
		{func() (*Schedule, error) { return Linear(-5, 1e-4, 0.02) }, "T = -5"},
		{func() (*Schedule, error) { return Linear(10, 0, 0.02) }, "must be in (0, 1)"},
		{func() (*Schedule, error) { return Linear(10, 1e-4, 1) }, "must be in (0, 1)"},
		{func() (*Schedule, error) { return Cosine(0, 0.008) }, "T = 0"},
		{func() (*Schedule, error) { return Cosine(10, -1) }, "offset"},
		{func() (*Schedule, error) { return NewSchedule(nil) }, "no steps"},
		{func() (*Schedule, error) { return NewSchedule([]float64{0.1, 1.5}) }, "β_2 = 1.5 is not in (0, 1)"},
		{func() (*Schedule, error) { return NewSchedule([]float64{math.NaN()}) }, "β_1 = NaN"},
	} {
		s, err := c.f()
		assert.Nil(t, s)
		assert.ErrorContains(t, err, c.want)
	}
	s, err := Linear(10, 0.1, 0.2)
	require.NoError(t, err)
	x := tensor.Zeros(tensor.Float64, 2, 3)
	assert.Contains(t, panicMessage(func() { s.AlphaBar(11) }), "diffusion.Schedule.AlphaBar: time step 11 outside 0…10")
	assert.Contains(t, panicMessage(func() { s.Posterior(0) }), "time step 0 outside 1…10")
	assert.Contains(t, panicMessage(func() { s.QSample(x, tensor.Zeros(tensor.Float64, 2, 4), []int{1, 1}) }),
		"diffusion.Schedule.QSample: x (2, 3) float64 and the noise (2, 4) float64 differ")
	assert.Contains(t, panicMessage(func() { s.QStep(x, x, []int{1}) }), "1 time steps for a batch of 2")
	assert.Contains(t, panicMessage(func() { s.QStep(x, x, []int{1, 0}) }), "time step 0 outside 1…10")
	assert.Empty(t, panicMessage(func() { s.QSample(x, x, []int{1, 0}) }), "t = 0 gives x_0")
}

// panicMessage returns the error a *tensor.Error panic of f carries ("" if
// f does not panic).
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			var e *tensor.Error
			if err, ok := r.(error); ok && errors.As(err, &e) {
				msg = e.Error()
			} else {
				msg = fmt.Sprint("not a *tensor.Error: ", r)
			}
		}
	}()
	f()
	return ""
}
