package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// At small settings (400 training digits, short fits) every model
// classifies the 360 held-out digits well, deep kernel learning's NLPD is
// no worse than the network's at an accuracy within a point of it, and
// -json has the agreed fields and the picture is written. (At the default
// settings, seeds 1–3: DKL accuracy 0.992/0.986/0.989 against the net's
// 0.986/0.981/0.978, NLPD 0.047/0.069/0.044 against 0.051/0.125/0.125.)
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"dkl_accuracy", "net_accuracy", "gp_accuracy", "dkl_nlpd", "net_nlpd", "dkl_ece", "net_ece", "gp_nlpd", "gp_ece", "plot"},
		Pictures: []string{"reliability.png"}},
		"-train-n", "400", "-epochs", "20", "-steps", "30", "-gp-iters", "10")
	assert.Equal(t, 400, res.Train)
	assert.Equal(t, 360, res.Test)
	for name, acc := range map[string]float64{"dkl": res.DKLAccuracy, "net": res.NetAccuracy, "gp": res.GPAccuracy} {
		assert.Greater(t, acc, 0.9, name)
	}
	assert.LessOrEqual(t, res.DKLNLPD, res.NetNLPD)
	assert.Greater(t, res.DKLAccuracy, res.NetAccuracy-0.01)
	assert.Less(t, res.DKLECE, 0.1)
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-features", "0"}, {"-steps", "-1"}, {"-lr", "0"}, {"-alpha-eps", "0"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}
