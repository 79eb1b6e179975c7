package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A short run of both fits: on the held-out rows each beats the predictor
// that knows nothing (N(0, 1) on the standardised target: about −1.42 per
// row), and the 90 % intervals cover between 75 % and 98 % of the rows.
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"svi", "nuts", "n_train", "n_test", "plot"},
		Pictures: []string{"bnn.png"}},
		"-hidden", "8", "-steps", "800", "-lr", "0.02", "-nuts-hidden", "2", "-chains", "1", "-warmup", "60", "-draws", "60")
	assert.Equal(t, 442, res.Train+res.Test)
	for name, f := range map[string]fit{"SVI": res.SVI, "NUTS": res.NUTS} {
		assert.Greater(t, f.TestLPD, -1.3, name)
		assert.InDelta(t, 0.865, f.Coverage90, 0.115, name)
		assert.Less(t, f.TestRMSE, 0.9, name)
	}
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-hidden", "0"}, {"-draws", "2"}, {"-lr", "0"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}
