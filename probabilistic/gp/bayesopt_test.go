package gp

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// marginalAcq is an acquisition of the posterior marginals alone (EI, PI,
// UCB), with its closed form exposed as Score.
type marginalAcq interface {
	Acquisition
	Score(mean, std *graph.Node, best float64) *graph.Node
}

// apxScore evaluates an acquisition at scalar mean and std in dtype dt.
func apxScore(dt tensor.DType, a marginalAcq, mean, std, best float64) float64 {
	g := graph.New()
	return a.Score(g.Const(tensor.FromValues(dt, []float64{mean}, 1)), g.Const(tensor.FromValues(dt, []float64{std}, 1)), best).Item()
}

// apxIntegrate integrates h(f) N(f; μ, σ²) over μ ± 12σ by Simpson's rule.
func apxIntegrate(h func(float64) float64, mu, sigma float64) float64 {
	const n = 20000
	a, b := mu-12*sigma, mu+12*sigma
	step := (b - a) / n
	sum := 0.0
	for i := 0; i <= n; i++ {
		f := a + float64(i)*step
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		z := (f - mu) / sigma
		sum += w * h(f) * math.Exp(-z*z/2) / (sigma * math.Sqrt(2*math.Pi))
	}
	return sum * step / 3
}

// Closed forms against textbook values and numerical integrals of the
// definitions: EI = E[max(f − best − ξ, 0)], PI = P(f > best + ξ).
func TestAcquisitionValues(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-9
		if dt == tensor.Float32 {
			tol = 2e-6
		}
		// EI at mean 0, std 1, incumbent 0 is φ(0) = 1/√(2π).
		assert.InDelta(t, 0.398942280, apxScore(dt, EI{}, 0, 1, 0), tol+1e-9, "%v", dt)
		assert.InDelta(t, 0.5, apxScore(dt, PI{}, 0, 1, 0), tol, "%v", dt)
		assert.InDelta(t, 1.3, apxScore(dt, UCB{Beta: 2}, 0.3, 0.5, 99), tol, "%v", dt)
		for _, c := range []struct{ mu, sigma, best, xi float64 }{{0.3, 0.7, 0.5, 0.05}, {1.2, 0.4, 0.5, 0}, {-1, 2, 0.3, 0.01}} {
			thr := c.best + c.xi
			ei := apxIntegrate(func(f float64) float64 { return math.Max(f-thr, 0) }, c.mu, c.sigma)
			pi := apxIntegrate(func(f float64) float64 {
				if f > thr {
					return 1
				}
				return 0
			}, c.mu, c.sigma)
			assert.InDelta(t, ei, apxScore(dt, EI{Xi: c.xi}, c.mu, c.sigma, c.best), 1e-6+tol, "EI %+v %v", c, dt)
			assert.InDelta(t, pi, apxScore(dt, PI{Xi: c.xi}, c.mu, c.sigma, c.best), 2e-4, "PI %+v %v", c, dt)
		}
		// A certain posterior improves by exactly max(μ − best − ξ, 0).
		assert.InDelta(t, 0.25, apxScore(dt, EI{Xi: 0.05}, 1.3, 0, 1), tol+1e-7, "%v", dt)
		assert.InDelta(t, 0, apxScore(dt, EI{}, 0.7, 0, 1), tol, "%v", dt)
	}
}

// The acquisitions' gradients with respect to the posterior mean and
// standard deviation, checked against finite differences.
func TestAcquisitionGradCheck(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, a := range []marginalAcq{EI{Xi: 0.01}, PI{Xi: 0.02}, UCB{Beta: 1.5}} {
			mean := tensor.FromValues(dt, []float64{-0.4, 0.1, 0.6, 1.1}, 4)
			std := tensor.FromValues(dt, []float64{0.3, 0.8, 0.5, 1.2}, 4)
			fn := func(xs []*graph.Node) *graph.Node { return a.Score(xs[0], xs[1], 0.2) }
			opt := autodiff.GradCheckOptions{Name: a.Name()}
			if dt == tensor.Float32 {
				opt.Tol, opt.Tol2 = 3e-2, 1e-1
			}
			_, err := autodiff.GradCheck(fn, []*tensor.Tensor{mean, std}, opt)
			assert.NoError(t, err, "%s %v", a.Name(), dt)
		}
	}
}

// apxSmallModel is an exact GP on five points of sin, not fitted.
func apxSmallModel(t *testing.T, dt tensor.DType) *Exact {
	x := tensor.FromValues(dt, []float64{-1.5, -0.6, 0.2, 0.9, 1.7}, 5, 1)
	y := tensor.FromValues(dt, []float64{math.Sin(-1.5), math.Sin(-0.6), math.Sin(0.2), math.Sin(0.9), math.Sin(1.7)}, 5)
	m, err := NewExact(x, y, ExactOptions{Kernel: kernel.NewScale(kernel.NewRBF(0.8), 1), Noise: 0.01})
	require.NoError(t, err)
	return m
}

// Acquisitions are graphs of the query point: their gradient with respect
// to x, through the exact GP's posterior mean and variance, matches
// finite differences.
func TestAcquisitionGradientWrtQueryPoint(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		m := apxSmallModel(t, dt)
		for _, a := range []marginalAcq{EI{Xi: 0.01}, PI{}, UCB{Beta: 2}} {
			xq := tensor.FromValues(dt, []float64{-1.1, 0.55, 1.3, 2.4}, 4, 1)
			fn := func(xs []*graph.Node) *graph.Node {
				mean, variance, err := m.Posterior(xs[0])
				require.NoError(t, err)
				return a.Score(mean, graph.Sqrt(variance), 0.8)
			}
			opt := autodiff.GradCheckOptions{Name: a.Name() + "(x)", Order: 1}
			if dt == tensor.Float32 {
				opt.Tol = 5e-2
			}
			_, err := autodiff.GradCheck(fn, []*tensor.Tensor{xq}, opt)
			assert.NoError(t, err, "%s %v", a.Name(), dt)
		}
	}
}

// Ask returns the maximiser of the acquisition: no point of a fine grid
// scores higher.
func TestBayesOptAskMaximisesAcquisition(t *testing.T) {
	f := func(x float64) float64 { return math.Sin(3*x) + 0.5*x }
	for _, name := range []string{"ei", "pi", "ucb"} {
		a, err := AcquisitionByName(name)
		require.NoError(t, err)
		bo := NewBayesOpt([][2]float64{{-2, 2}}, BayesOptOptions{Seed: 4, Acquisition: a})
		for _, x := range []float64{-1.7, -0.4, 0.5, 1.9} {
			require.NoError(t, bo.Tell([]float64{x}, f(x)))
		}
		next := bo.Ask(context.Background())
		require.NoError(t, bo.Err())
		grid := make([][]float64, 2001)
		for i := range grid {
			grid[i] = []float64{-2 + 4*float64(i)/2000}
		}
		vals, err := bo.AcquisitionAt(context.Background(), grid)
		require.NoError(t, err)
		at, err := bo.AcquisitionAt(context.Background(), [][]float64{next})
		require.NoError(t, err)
		for i, v := range vals {
			assert.LessOrEqual(t, v, at[0]+1e-9*math.Max(1, math.Abs(at[0])), "%s: grid x=%g beats Ask's x=%g", name, grid[i][0], next[0])
		}
	}
}

// The ask/tell loop finds the maximum of a 2-D quadratic bowl.
func TestBayesOptFindsMaximum2D(t *testing.T) {
	f := func(x []float64) float64 { return -(x[0]-0.3)*(x[0]-0.3) - 2*(x[1]+0.2)*(x[1]+0.2) }
	bo := NewBayesOpt([][2]float64{{-1, 1}, {-1, 1}}, BayesOptOptions{Seed: 2, Acquisition: UCB{Beta: 1}})
	var seen [][]float64
	for i := 0; i < 15; i++ {
		x := bo.Ask(context.Background())
		require.Len(t, x, 2)
		for j, v := range x {
			require.True(t, v >= -1 && v <= 1, "x[%d] = %g out of bounds", j, v)
		}
		for _, p := range seen {
			require.Greater(t, math.Hypot(p[0]-x[0], p[1]-x[1]), 1e-7, "Ask repeated %v", p)
		}
		seen = append(seen, x)
		require.NoError(t, bo.Tell(x, f(x)))
	}
	assert.Equal(t, 15, bo.Len())
	x, mean, err := bo.Recommend(context.Background())
	require.NoError(t, err)
	assert.InDelta(t, 0.3, x[0], 0.05)
	assert.InDelta(t, -0.2, x[1], 0.05)
	assert.InDelta(t, 0, mean, 0.01)
	bx, by := bo.Best()
	assert.InDelta(t, f(bx), by, 1e-12)
}

// The first InitialPoints asks are uniform draws from the seeded
// sampler: the same seed gives the same points.
func TestBayesOptInitialPointsSeeded(t *testing.T) {
	ask := func(seed uint64) [][]float64 {
		bo := NewBayesOpt([][2]float64{{0, 10}, {-3, -1}}, BayesOptOptions{Seed: seed, InitialPoints: 4})
		var out [][]float64
		for i := 0; i < 4; i++ {
			x := bo.Ask(context.Background())
			out = append(out, x)
			require.NoError(t, bo.Tell(x, x[0]))
		}
		return out
	}
	a, b, c := ask(7), ask(7), ask(8)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

func TestBayesOptMisuse(t *testing.T) {
	assert.Panics(t, func() { NewBayesOpt(nil, BayesOptOptions{}) })
	assert.Panics(t, func() { NewBayesOpt([][2]float64{{1, 1}}, BayesOptOptions{}) })
	bo := NewBayesOpt([][2]float64{{0, 1}}, BayesOptOptions{})
	assert.ErrorContains(t, bo.Tell([]float64{0.5, 1}, 0), "2 coordinates")
	assert.ErrorContains(t, bo.Tell([]float64{2}, 0), "outside")
	assert.ErrorContains(t, bo.Tell([]float64{0.5}, math.NaN()), "not finite")
	_, _, err := bo.Recommend(context.Background())
	assert.ErrorContains(t, err, "no observations")
	_, err = AcquisitionByName("nope")
	assert.ErrorContains(t, err, "unknown acquisition")
}
