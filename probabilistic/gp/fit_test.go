package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// gpDraw samples y = f(x) + ε at n inputs in [0, 6] from a GP with an RBF
// kernel of lengthscale ls and unit variance, with noise variance noise,
// using the Cholesky factor of the covariance built by hand.
func gpDraw(seed uint64, n int, ls, noise float64) (x, y *tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	x = rng.Uniform(tensor.Float64, 0, 6, n, 1)
	kk := rbfByHand(x, x, ls, 1)
	for i := range kk {
		kk[i][i] += noise
	}
	l, err := tensor.Cholesky(matrix(kk))
	if err != nil {
		panic(err)
	}
	y = tensor.Reshape(tensor.MatMul(l, rng.Normal(tensor.Float64, 0, 1, n, 1)), n)
	return x, y
}

// Fitting data drawn from a GP with ℓ = 0.6 recovers the lengthscale
// roughly, from a start at ℓ = 2, and increases the LML, with either
// optimiser.
func TestFitRecoversLengthscale(t *testing.T) {
	x, y := gpDraw(1, 60, 0.6, 0.01)
	for _, opt := range []string{"lbfgs", "adam"} {
		t.Run(opt, func(t *testing.T) {
			m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1)})
			require.NoError(t, err)
			before := lmlOf(t, m)
			var events int
			res, err := m.fit(context.Background(), fitOptions{Optimizer: opt, Restarts: 1, Seed: 3, MaxIter: 150,
				Progress: func(FitEvent) { events++ }})
			require.NoError(t, err)
			after := lmlOf(t, m)
			assert.Greater(t, after, before+5)
			assert.InDelta(t, res.LML, after, 1e-6, "the result reports the installed hyperparameters' LML")
			assert.Len(t, res.Restarts, 2)
			assert.Positive(t, res.Iterations)
			assert.Positive(t, events)
			ls := m.Hyperparam("rbf.lengthscale").Value()
			assert.InDelta(t, 0.6, ls, 0.2, "lengthscale")
			assert.InDelta(t, 0.01, m.Hyperparam("noise").Value(), 0.02, "noise")
			for _, r := range res.Restarts {
				if r.Err == nil {
					assert.LessOrEqual(t, r.Objective, res.Objective+1e-9)
				}
			}
		})
	}
}

// Priors add their log density to the objective, and bounds hold.
func TestFitPriorAndBounds(t *testing.T) {
	x, y := gpDraw(2, 40, 0.6, 0.01)
	plain, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1)})
	require.NoError(t, err)
	_, err = plain.fit(context.Background(), fitOptions{})
	require.NoError(t, err)
	k := kernel.NewScale(kernel.NewRBF(2), 1)
	k.Kernel().(*kernel.Stationary).Lengthscale().SetPrior(kernel.GammaPrior(20, 10)) // mean 2, sd 0.45
	m, err := NewExact(x, y, ExactOptions{Kernel: k})
	require.NoError(t, err)
	res, err := m.fit(context.Background(), fitOptions{Bounds: map[string][2]float64{"scale.variance": {0.5, 1.5}}})
	require.NoError(t, err)
	g := graph.New()
	assert.InDelta(t, res.Objective-res.LML, m.LogPrior(g).Item(), 1e-6)
	ls := m.Hyperparam("rbf.lengthscale").Value()
	assert.Greater(t, ls, plain.Hyperparam("rbf.lengthscale").Value()+0.05, "the prior pulls the lengthscale towards 2")
	v := m.Hyperparam("scale.variance").Value()
	assert.GreaterOrEqual(t, v, 0.5-1e-9)
	assert.LessOrEqual(t, v, 1.5+1e-9)
}

// A fixed hyperparameter does not move.
func TestFitFixed(t *testing.T) {
	x, y := gpDraw(3, 30, 0.6, 0.01)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1), Noise: 0.3, FixNoise: true})
	require.NoError(t, err)
	_, err = m.fit(context.Background(), fitOptions{MaxIter: 30})
	require.NoError(t, err)
	assert.InDelta(t, 0.3, m.Hyperparam("noise").Value(), 1e-12)
}

// Duplicate inputs without noise: fitting goes through jitter escalation
// and reports every try through Progress.
func TestFitReportsJitter(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 1, 2, 2, 3}, 6, 1)
	y := tensor.FromFloat64s([]float64{1, 1, 0, -1, -1, 0}, 6)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(1), NoiseFree: true})
	require.NoError(t, err)
	var jitters []float64
	_, err = m.fit(context.Background(), fitOptions{MaxIter: 5, Progress: func(e FitEvent) {
		if e.Jitter > 0 {
			jitters = append(jitters, e.Jitter)
		}
	}})
	require.NoError(t, err)
	require.NotEmpty(t, jitters)
	assert.InDelta(t, 1e-8, jitters[0], 1e-20)
}

// rawValues copies every hyperparameter's unconstrained values.
func rawValues(m *Exact) [][]float64 {
	var out [][]float64
	for _, p := range m.Hyperparams() {
		out = append(out, p.Raw().Values())
	}
	return out
}

// A fit that fails (every start hits an indefinite covariance, the
// context is cancelled midway, or the options are invalid) returns an
// error and leaves the hyperparameters exactly as they were.
func TestFailedFitKeepsParams(t *testing.T) {
	t.Run("indefinite", func(t *testing.T) {
		m, err := NewExact(tensor.Zeros(tensor.Float64, 4, 1), tensor.Zeros(tensor.Float64, 4), ExactOptions{Kernel: badKernel{kernel.NewHyperparam("bad.v", 1.5)}, NoiseFree: true})
		require.NoError(t, err)
		before := rawValues(m)
		var jitterEvents int
		_, err = m.fit(context.Background(), fitOptions{Restarts: 2, Seed: 1, Progress: func(e FitEvent) {
			if e.Jitter > 0 {
				jitterEvents++
			}
		}})
		var ce *CholeskyError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, before, rawValues(m))
		assert.Equal(t, 3*5, jitterEvents, "five escalations per start")
	})
	t.Run("cancelled", func(t *testing.T) {
		x, y := gpDraw(4, 30, 0.6, 0.01)
		m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1)})
		require.NoError(t, err)
		before := rawValues(m)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err = m.fit(ctx, fitOptions{Progress: func(e FitEvent) {
			if e.Iteration == 3 {
				cancel()
			}
		}})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, before, rawValues(m))
	})
	t.Run("bad options", func(t *testing.T) {
		x, y := gpDraw(5, 10, 0.6, 0.01)
		m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewRBF(2)})
		require.NoError(t, err)
		before := rawValues(m)
		for _, o := range []fitOptions{
			{Optimizer: "sgd"},
			{Bounds: map[string][2]float64{"nope": {1, 2}}},
			{Bounds: map[string][2]float64{"rbf.lengthscale": {2, 1}}},
			{Bounds: map[string][2]float64{"rbf.lengthscale": {-2, -1}}},
			{Restarts: -1},
		} {
			_, err := m.fit(context.Background(), o)
			assert.Error(t, err)
			assert.Equal(t, before, rawValues(m))
		}
	})
}

// Restarts are reproducible for a seed.
func TestFitSeeded(t *testing.T) {
	x, y := gpDraw(6, 25, 0.6, 0.01)
	run := func() []float64 {
		m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1)})
		require.NoError(t, err)
		res, err := m.fit(context.Background(), fitOptions{Restarts: 2, Seed: 9, MaxIter: 20})
		require.NoError(t, err)
		var out []float64
		for _, r := range res.Restarts {
			out = append(out, r.Objective)
		}
		return out
	}
	a, b := run(), run()
	assert.Equal(t, a, b)
	assert.False(t, math.IsNaN(a[0]))
}

// Fitting works in float32 too: the hyperparameters follow the data's
// dtype and the lengthscale is recovered as in float64.
func TestFitFloat32(t *testing.T) {
	x, y := gpDraw(7, 50, 0.6, 0.01)
	m, err := NewExact(x.Cast(tensor.Float32), y.Cast(tensor.Float32), ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 1)})
	require.NoError(t, err)
	before := lmlOf(t, m)
	_, err = m.fit(context.Background(), fitOptions{})
	require.NoError(t, err)
	assert.Greater(t, lmlOf(t, m), before+5)
	assert.InDelta(t, 0.6, m.Hyperparam("rbf.lengthscale").Value(), 0.2)
	assert.Equal(t, tensor.Float32, m.Hyperparam("rbf.lengthscale").Raw().DType())
}

// Bounds reaching past the top of a bounded domain (a sigmoid-constrained
// hyperparameter lives in (0, 1)) are cut at the top, not rejected; bounds
// wholly above it are an error.
func TestFitBoundsOnBoundedDomain(t *testing.T) {
	x, y := gpDraw(4, 30, 0.6, 0.01)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(2), 0.7)})
	require.NoError(t, err)
	v := m.Hyperparam("scale.variance")
	v.SetBijector(probabilistic.Sigmoid{})
	// Restarts draw their starting points inside the domain as well.
	_, err = m.fit(context.Background(), fitOptions{MaxIter: 20, Restarts: 4, Seed: 2, Bounds: map[string][2]float64{"scale.variance": {0.5, 2}}})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v.Value(), 0.5-1e-9)
	assert.Less(t, v.Value(), 1.0)
	before := v.Value()
	_, err = m.fit(context.Background(), fitOptions{Bounds: map[string][2]float64{"scale.variance": {2, 3}}})
	assert.ErrorContains(t, err, "outside its domain")
	assert.Equal(t, before, v.Value())
}
