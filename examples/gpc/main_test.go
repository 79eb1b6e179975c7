package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Versicolor and virginica overlap in petal length and width (several
// flowers of both species share the same measurements), so no classifier
// is perfect on them: a linear boundary misclassifies about 6 of the 100.
// The fitted GP classifier does as well, and fitting raises the Laplace
// approximation of the log marginal likelihood well above its value at the
// initial hyperparameters.
func TestIrisClassification(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"n", "train_accuracy", "lml", "initial_lml", "lengthscale", "variance", "plot"}, Pictures: []string{"surface.png"}})
	assert.Equal(t, 100, res.N)
	assert.GreaterOrEqual(t, res.Accuracy, 0.93)
	assert.Less(t, res.Accuracy, 1.0)
	assert.Greater(t, res.LML, res.InitialLML+5)
	// Fitting does better than a vanishing kernel variance, where every
	// point is a coin flip (LML 100·log ½ = −69.3); an LML is below 0.
	assert.Greater(t, res.LML, -69.3)
	assert.Less(t, res.LML, 0.0)
}

func TestMissingData(t *testing.T) {
	clitest.Fails(t, program(), 1, "-data", "no/such.csv")
}
