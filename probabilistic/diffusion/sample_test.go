package diffusion

import (
	"context"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// perfect returns the exact noise model of data that always equal point:
// ε̂(x_t, t) = (x_t − √ᾱ_t·point)/√(1 − ᾱ_t), rows of x_t laid out as point.
func perfect(s *Schedule, point []float64) NoiseModel {
	return func(xt *graph.Node, t []int) *graph.Node {
		v := xt.Value().Values()
		d := len(point)
		out := make([]float64, len(v))
		for i, ti := range t {
			ab := s.AlphaBar(ti)
			for j := range d {
				out[i*d+j] = (v[i*d+j] - math.Sqrt(ab)*point[j]) / math.Sqrt(1-ab)
			}
		}
		return xt.Graph().Const(tensor.FromValues(xt.DType(), out, xt.Shape()...))
	}
}

// With a perfect noise predictor for a point mass every sampler returns
// the point: the ancestral sampler's last mean is exactly x_0 (c0 = 1, ct
// = 0 at t = 1) and DDIM's x̂_0 is the point at every step.
func TestSamplersRecoverPointMass(t *testing.T) {
	s, err := Linear(200, 1e-4, 0.05)
	require.NoError(t, err)
	point := []float64{-0.7, 0, 0.25, 0.9}
	for _, c := range []struct {
		name string
		opts SampleOptions
	}{
		{"ancestral", SampleOptions{}},
		{"ancestral β̃", SampleOptions{PosteriorVariance: true}},
		{"ancestral, 20 respaced steps", SampleOptions{Steps: 20}},
		{"ancestral, clipped", SampleOptions{Clip: 1}},
		{"ddim", SampleOptions{Sampler: DDIM}},
		{"ddim, 10 steps", SampleOptions{Sampler: DDIM, Steps: 10}},
		{"ddim η = 1, 25 steps", SampleOptions{Sampler: DDIM, Steps: 25, Eta: 1}},
	} {
		done := 0
		c.opts.Progress = func(i, n int) { done = i }
		x, err := s.Sample(context.Background(), perfect(s, point), tensor.NewRNG(5), tensor.Float64, c.opts, 3, 4)
		require.NoError(t, err, c.name)
		assert.Equal(t, []int{3, 4}, x.Shape())
		assert.InDeltaSlice(t, append(append(append([]float64{}, point...), point...), point...), x.Values(), 1e-9, c.name)
		want := c.opts.Steps
		if want == 0 {
			want = 200
		}
		assert.Equal(t, want, done, "%s: progress", c.name)
	}
}

// Algorithm 2's mean (x_t − β_t/√(1 − ᾱ_t)·ε̂)/√α_t is the posterior mean
// c0·x̂_0 + ct·x_t at x̂_0 = (x_t − √(1 − ᾱ_t)·ε̂)/√ᾱ_t: with a clip too wide
// to act, both forms give the same draws from the same noise, here with a
// model that is not perfect.
func TestAncestralMeanIsPosteriorMean(t *testing.T) {
	s, err := Linear(50, 1e-3, 0.1)
	require.NoError(t, err)
	model := func(xt *graph.Node, ts []int) *graph.Node { return graph.MulScalar(graph.Sin(xt), 0.3) }
	a, err := s.Sample(context.Background(), model, tensor.NewRNG(9), tensor.Float64, SampleOptions{}, 2, 3)
	require.NoError(t, err)
	b, err := s.Sample(context.Background(), model, tensor.NewRNG(9), tensor.Float64, SampleOptions{Clip: 1e9}, 2, 3)
	require.NoError(t, err)
	assert.InDeltaSlice(t, a.Values(), b.Values(), 1e-9)
	// DDIM with η = 0 is deterministic given x_T; the ancestral sampler is not.
	xT := Noise(tensor.NewRNG(1), tensor.Float64, 2, 3)
	d1, err := s.SampleFrom(context.Background(), model, xT, tensor.NewRNG(1), SampleOptions{Sampler: DDIM})
	require.NoError(t, err)
	d2, err := s.SampleFrom(context.Background(), model, xT, tensor.NewRNG(2), SampleOptions{Sampler: DDIM})
	require.NoError(t, err)
	assert.Equal(t, d1.Values(), d2.Values())
	a1, err := s.SampleFrom(context.Background(), model, xT, tensor.NewRNG(1), SampleOptions{})
	require.NoError(t, err)
	a2, err := s.SampleFrom(context.Background(), model, xT, tensor.NewRNG(2), SampleOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, a1.Values(), a2.Values())
}

// The loss of the perfect model on its point mass is 0; that of the model
// that always says 0 is the mean of ε².
func TestLoss(t *testing.T) {
	s, err := Linear(100, 1e-4, 0.02)
	require.NoError(t, err)
	point := []float64{0.5, -0.5, 1}
	g := graph.New()
	x0 := repeat(point, 8)
	assert.InDelta(t, 0, s.Loss(g, perfect(s, point), x0, tensor.NewRNG(1)).Item(), 1e-20)
	eps := Noise(tensor.NewRNG(2), tensor.Float64, 8, 3)
	want := 0.0
	for _, e := range eps.Values() {
		want += e * e / 24
	}
	zero := func(xt *graph.Node, _ []int) *graph.Node { return graph.MulScalar(xt, 0) }
	assert.InDelta(t, want, s.LossAt(g, zero, x0, eps, []int{1, 2, 3, 4, 5, 6, 7, 100}).Item(), 1e-12)
}

func TestSampleBadInput(t *testing.T) {
	s, err := Linear(10, 1e-3, 0.1)
	require.NoError(t, err)
	id := func(xt *graph.Node, _ []int) *graph.Node { return xt }
	rng := tensor.NewRNG(1)
	for _, c := range []struct {
		opts  SampleOptions
		shape []int
		want  string
	}{
		{SampleOptions{Steps: 11}, []int{2, 3}, "11 steps, want 1…T = 10"},
		{SampleOptions{Steps: -1}, []int{2, 3}, "-1 steps"},
		{SampleOptions{Sampler: 7}, []int{2, 3}, "unknown sampler Sampler(7)"},
		{SampleOptions{Eta: -1}, []int{2, 3}, "must not be negative"},
		{SampleOptions{}, []int{0, 3}, "shape (0, 3) must be a non-empty batch"},
		{SampleOptions{}, nil, "no shape"},
	} {
		x, err := s.Sample(context.Background(), id, rng, tensor.Float64, c.opts, c.shape...)
		assert.Nil(t, x)
		assert.ErrorContains(t, err, c.want)
	}
	wrong := func(xt *graph.Node, _ []int) *graph.Node { return graph.Sum(xt, []int{1}, false) }
	_, err = s.Sample(context.Background(), wrong, rng, tensor.Float64, SampleOptions{}, 2, 3)
	assert.ErrorContains(t, err, "diffusion.Schedule.Sample: the noise model maps x_t (2, 3) to (2,); want the same shape")
	blowup := func(xt *graph.Node, _ []int) *graph.Node { return graph.MulScalar(xt, 1e300) }
	_, err = s.Sample(context.Background(), blowup, rng, tensor.Float64, SampleOptions{}, 2, 3)
	assert.ErrorContains(t, err, "is not finite")
	_, err = ParseSampler("euler")
	assert.ErrorContains(t, err, `unknown sampler "euler"`)
	k, err := ParseSampler("ddim")
	require.NoError(t, err)
	assert.Equal(t, "ddim", k.String())
	assert.Contains(t, panicMessage(func() { s.Loss(graph.New(), wrong, tensor.Zeros(tensor.Float64, 2, 3), rng) }),
		"diffusion.Schedule.Loss: the noise model maps x_t (2, 3) to (2,)")
}

// A cancelled context stops sampling before the model is called.
func TestSampleCancelled(t *testing.T) {
	s, err := Linear(50, 1e-3, 0.1)
	require.NoError(t, err)
	calls := 0
	model := func(xt *graph.Node, ts []int) *graph.Node { calls++; return graph.MulScalar(xt, 0) }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x, err := s.Sample(ctx, model, tensor.NewRNG(1), tensor.Float64, SampleOptions{}, 2, 3)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "stopped after 0 of 50 steps")
	assert.Nil(t, x)
	assert.Zero(t, calls)
}
