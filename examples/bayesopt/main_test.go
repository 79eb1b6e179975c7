package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// f(x) = x/15 − x²/50 − sin(x)/x peaks where f'(x) = 1/15 − x/25 −
// (x cos x − sin x)/x² = 0 on [−5, 5]: x ≈ 4.0796, f ≈ 0.1368.
const trueMaxX = 4.0796

func TestObjectiveByHand(t *testing.T) {
	assert.Equal(t, -1.0, objective(0))
	// f(π) = π/15 − π²/50 − 0.
	assert.InDelta(t, math.Pi/15-math.Pi*math.Pi/50, objective(math.Pi), 1e-15)
	// The stated maximiser: f' changes sign across it and f there is 0.1368.
	d := func(x float64) float64 { return 1.0/15 - x/25 - (x*math.Cos(x)-math.Sin(x))/(x*x) }
	assert.Greater(t, d(trueMaxX-1e-3), 0.0)
	assert.Less(t, d(trueMaxX+1e-3), 0.0)
	assert.InDelta(t, 0.1368, objective(trueMaxX), 5e-5)
}

// Within 20 evaluations (3 random, 17 by expected improvement) the
// posterior-mean maximiser is within 0.1 of the true maximiser, for
// several seeds of the initial points and the noise.
func TestFindsMaximum(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		res, err := run(config{Acq: "ei", Evals: 20}, clitest.EnvWith(t, seed, ""))
		require.NoError(t, err)
		assert.Equal(t, 20, res.Evaluations, "seed %d", seed)
		assert.InDelta(t, trueMaxX, res.BestX, 0.1, "seed %d", seed)
		assert.InDelta(t, 0.1368, res.BestY, 0.01, "seed %d: posterior mean at the maximiser", seed)
		assert.InDelta(t, trueMaxX, res.BestObservedX, 0.3, "seed %d", seed)
	}
}

// The other acquisitions work too, and the picture is written.
func TestOtherAcquisitionsAndPlot(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"best_x", "best_y", "evaluations", "best_observed_x", "best_observed_y", "acquisition", "plot"}, Pictures: []string{"step.png"}},
		"-seed", "2", "-acq", "ucb", "-evals", "20")
	assert.InDelta(t, trueMaxX, res.BestX, 0.1)
	assert.Equal(t, "ucb", res.Acquisition)
	res, err := run(config{Acq: "pi", Evals: 20}, clitest.EnvWith(t, 2, ""))
	require.NoError(t, err)
	assert.InDelta(t, trueMaxX, res.BestX, 0.1)

	_, err = run(config{Acq: "nope", Evals: 20}, clitest.EnvWith(t, 1, ""))
	assert.ErrorContains(t, err, "unknown acquisition")
	clitest.Fails(t, program(), 2, "-evals", "3")
}

// The acquisitions that read the joint posterior find the maximum too:
// Thompson sampling and max-value entropy search one point at a time,
// q-EI three at a time; a batch with an acquisition of the marginals is a
// bad flag.
func TestFullPosteriorAcquisitions(t *testing.T) {
	for _, cfg := range []config{{Acq: "thompson", Evals: 20, Batch: 1}, {Acq: "mes", Evals: 20, Batch: 1}, {Acq: "qei", Evals: 20, Batch: 3}} {
		res, err := run(cfg, clitest.EnvWith(t, 1, ""))
		require.NoError(t, err, cfg.Acq)
		assert.Equal(t, 20, res.Evaluations, cfg.Acq)
		assert.InDelta(t, trueMaxX, res.BestX, 0.1, cfg.Acq)
		assert.Equal(t, cfg.Acq, res.Acquisition)
	}
	clitest.Fails(t, program(), 2, "-acq", "ei", "-batch", "2")
}
