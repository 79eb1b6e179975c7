package inference

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// ctx is the context of the runs that are not about cancellation.
var ctx = context.Background()

// countdown is a context whose Err reports cancellation from its (n+1)th
// call on: a cancellation at a chosen point of a run, without timing.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// A context cancelled before the call stops NUTS and ADVI at once: no
// draws, no steps, and the context's error wrapped with the sampler's name.
func TestPreCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := NUTS(cancelled, gaussian2D(0.5, 1), NUTSOptions{Chains: 2, Warmup: 100000, Draws: 100000})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "inference.NUTS: stopped with 0 draws kept over 2 chains")
	require.NotNil(t, r)
	assert.Equal(t, []string{"x[0]", "x[1]"}, r.Names)
	assert.Empty(t, r.Draws[0])
	assert.Empty(t, r.Draws[1])

	q, err := ADVI(cancelled, gaussian2D(0.5, 1), ADVIOptions{MaxSteps: 1000000})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "inference.ADVI: stopped after 0 steps")
	require.NotNil(t, q)
	assert.Zero(t, q.Steps)
	assert.False(t, q.Converged)
	assert.Equal(t, []float64{0, 0}, q.Mean) // q's starting point N(0, I)
	assert.Equal(t, []float64{1, 0, 0, 1}, q.Cov)
}

// Cancelled part-way, NUTS keeps the draws it has: one chain, cancelled
// after its 30th transition's check, returns 10 draws past a 20-iteration
// warm-up, equal to the first 10 of an uncancelled run with the same seed.
// ADVI cancelled after 50 steps equals a run of 50 steps.
func TestCancelledPartWay(t *testing.T) {
	opts := NUTSOptions{Chains: 1, Warmup: 20, Draws: 1000, Seed: 3}
	// Err is checked once before the chain starts and once per transition.
	r, err := NUTS(&countdown{Context: ctx, n: 31}, gaussian2D(0.5, 1), opts)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, r.Draws[0], 10)
	opts.Draws = 10
	full, err := NUTS(ctx, gaussian2D(0.5, 1), opts)
	require.NoError(t, err)
	assert.Equal(t, full.Draws[0], r.Draws[0])

	a, err := ADVI(&countdown{Context: ctx, n: 50}, gaussian2D(0.5, 1), ADVIOptions{MaxSteps: 1000, Seed: 1})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 50, a.Steps)
	b, err := ADVI(ctx, gaussian2D(0.5, 1), ADVIOptions{MaxSteps: 50, Seed: 1})
	require.ErrorIs(t, err, tensor.ErrNotConverged) // 50 steps are less than two windows of 100
	assert.ErrorContains(t, err, "inference.ADVI: did not converge in 50 iterations")
	assert.Equal(t, b.Mean, a.Mean)
	assert.Equal(t, b.Cov, a.Cov)
}
