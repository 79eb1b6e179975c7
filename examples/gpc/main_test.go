package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Versicolor and virginica overlap in petal length and width (several
// flowers of both species share the same measurements), so no classifier
// is perfect on them: a linear boundary misclassifies about 6 of the 100.
// The fitted GP classifier does as well, and fitting raises the Laplace
// approximation of the log marginal likelihood well above its value at the
// initial hyperparameters.
func TestIrisClassification(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gpc.png")
	res, err := run(config{seed: 1, data: "sklearn/iris.csv", out: out})
	require.NoError(t, err)
	assert.Equal(t, 100, res.N)
	assert.GreaterOrEqual(t, res.Accuracy, 0.93)
	assert.Less(t, res.Accuracy, 1.0)
	assert.Greater(t, res.LML, res.InitialLML+5)
	// Fitting does better than a vanishing kernel variance, where every
	// point is a coin flip (LML 100·log ½ = −69.3); an LML is below 0.
	assert.Greater(t, res.LML, -69.3)
	assert.Less(t, res.LML, 0.0)

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Equal(t, 7*96, img.Bounds().Dx())
	assert.Equal(t, 5*96, img.Bounds().Dy())
}

func TestMissingData(t *testing.T) {
	_, err := run(config{data: "no/such.csv"})
	assert.Error(t, err)
}
