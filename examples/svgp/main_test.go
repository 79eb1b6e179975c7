package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// At small settings both fits learn: the CO2 test RMSE is far below the
// series' spread (about 12 ppm around its mean) and the classifier beats
// the majority class (63 % benign) on held-out tumours; -json has the
// agreed fields and both pictures are written.
func TestRunSmall(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{
		Fields:   []string{"co2_elbo", "co2_test_rmse", "co2_test_nlpd", "co2_seconds", "cancer_elbo", "cancer_test_accuracy", "cancer_test_nlpd", "cancer_seconds", "plot", "elbo_plot"},
		Pictures: []string{"co2.png", "elbo.png"}},
		"-steps", "300", "-inducing", "40", "-class-inducing", "10")
	assert.Less(t, res.CO2RMSE, 3.0, "ppm")
	assert.Less(t, res.CO2NLPD, 3.0)
	assert.Equal(t, 374, res.CO2Train)
	assert.Greater(t, res.CancerAccuracy, 0.9)
	assert.Less(t, res.CancerNLPD, 0.35, "log loss; 0.66 for the majority rate")
	assert.Equal(t, 455, res.CancerTrain)
	assert.Greater(t, res.CO2Seconds, 0.0)
}

// The probit link with natural-gradient steps also runs.
func TestRunProbitNatGrad(t *testing.T) {
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"cancer_test_accuracy"}},
		"-steps", "100", "-inducing", "20", "-class-inducing", "10", "-link", "probit", "-natgrad", "0.1")
	assert.Greater(t, res.CancerAccuracy, 0.9)
}

// Bad flags exit with 2.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-link", "cauchit"}, {"-steps", "0"}, {"-natgrad", "2"}} {
		t.Run(args[0], func(t *testing.T) { clitest.Fails(t, program(), 2, args...) })
	}
}

// A CSV without the columns is a clear error (exit code 1).
func TestMissingColumns(t *testing.T) {
	clitest.Fails(t, program(), 1, "-data", "sklearn/iris.csv", "-steps", "5")
}
