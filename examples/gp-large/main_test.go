package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A quick run: the LML estimate rises under Adam, the test RMSE comes
// near the noise floor, the exact and CG fits on the subset agree on the
// noise, the plot is written, and -json has the keys the issue names.
func TestCGFitReachesTheNoiseFloorAndTheExactFit(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"n", "lml", "seconds_per_step", "fit_seconds", "test_rmse", "noise_std", "lml_trace", "exact", "plot", "products"}, Pictures: []string{"lml.png"}},
		"-n", "800", "-steps", "8", "-exact-n", "150", "-test", "100", "-probes", "8", "-rank", "50", "-lr", "0.1")
	require.Len(t, res.Trace, 8)
	assert.Equal(t, "float32", res.Products)
	assert.Greater(t, res.Trace[7], res.Trace[0])
	assert.Less(t, res.TestRMSE, 0.2)
	assert.Greater(t, res.TestRMSE, 0.5*noiseStd)
	require.NotNil(t, res.Exact)
	en, cn := res.Exact.ExactParams["noise"], res.Exact.CGParams["noise"]
	assert.InDelta(t, 1, cn/en, 0.3, "noise exact %g, CG %g", en, cn)
	// The CG fit (8 probes) reaches an exact LML within a few nats of the
	// exact optimum (1.3 with this seed, on 150 points; the stochastic gradient stops L-BFGS
	// on the ridge where the variance and the constant mean trade off).
	assert.Greater(t, res.Exact.ExactLMLAtCGFit, res.Exact.ExactLMLAtExactFit-3)
	assert.False(t, math.IsNaN(res.Exact.CGLML))
}

func TestBadFlags(t *testing.T) {
	clitest.Fails(t, program(), 1, "-n", "5")
	_, err := run(config{N: 5, Steps: 1, Test: 1}, clitest.Env(t))
	assert.ErrorContains(t, err, "need n ≥ 10")
	_, err = run(config{N: 100, Steps: 1, ExactN: 200, Test: 1}, clitest.Env(t))
	assert.ErrorContains(t, err, "exact-n 200")
}
