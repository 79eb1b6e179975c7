package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// At small settings the fit recovers the generating parameters: the means
// within 0.3 of −2, 0 and 2.5 (the states are well separated, so the
// fitted labels follow the ordered starting means), the log-likelihood at
// the maximum-likelihood fit is at least that at the true parameters, and
// the Viterbi path gets more than 95 % of 200 states right (the states
// overlap little: 0.98 is typical); -json has the agreed fields and the
// picture is written.
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"viterbi_accuracy", "log_likelihood", "true_log_likelihood", "means", "scales", "transition", "seconds", "plot"},
		Pictures: []string{"hmm.png"}},
		"-t", "200", "-steps", "150", "-seed", "3")
	assert.Greater(t, res.ViterbiAccuracy, 0.95)
	assert.GreaterOrEqual(t, res.LogLikelihood, res.TrueLogLikelihood)
	assert.Less(t, res.LogLikelihood-res.TrueLogLikelihood, 20.0, "the fit gains a few nats per parameter, not more")
	for j, want := range truth.means {
		assert.InDelta(t, want, res.Means[j], 0.3, "mean %d", j)
		assert.InDelta(t, truth.scales[j], res.Scales[j], 0.2, "scale %d", j)
		assert.Greater(t, res.Transition[j][j], 0.75, "sticky state %d", j)
	}
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-t", "3"}, {"-steps", "0"}, {"-lr", "-1"}, {"-draws", "-1"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}

// With -draws, NUTS samples the posterior from the fit (a very short run
// here: 20 observations, 10 warm-up iterations and 10 draws per chain)
// and the decoded path still matches the states.
func TestRunNUTS(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"viterbi_accuracy", "rhat_max"}},
		"-t", "20", "-steps", "30", "-draws", "10")
	assert.GreaterOrEqual(t, res.ViterbiAccuracy, 0.9)
	assert.Greater(t, res.RhatMax, 0.9)
	assert.Less(t, res.RhatMax, 2.0, "two chains from one start agree roughly even this short")
}
