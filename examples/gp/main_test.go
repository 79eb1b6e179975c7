package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
)

// The monthly inputs are exact: 1959 + (i−1)/12.
func TestLoadCO2(t *testing.T) {
	x, y, err := load("co2.csv", config{X: "decimal_year", Y: "ppm"})
	require.NoError(t, err)
	require.Len(t, x, 468)
	require.Len(t, y, 468)
	assert.Equal(t, 1959.0, x[0])
	assert.Equal(t, 1960.0, x[12])
	assert.Equal(t, 1959+467.0/12, x[467])
	assert.Equal(t, 315.42, y[0])
	_, _, err = load("co2.csv", config{X: "year", Y: "ppm"})
	assert.ErrorContains(t, err, `"year"`)
}

// A short fit on the CO2 record improves the log marginal likelihood,
// keeps the yearly period, and writes the plot; -json has the agreed keys.
func TestRunCO2(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	env := clitest.EnvWith(t, 1, "co2.csv")
	env.Log = &log
	res, err := run(config{X: "decimal_year", Y: "ppm", Kernel: "co2", Restarts: 0, MaxIter: 8, Ahead: 10}, env)
	require.NoError(t, err)
	assert.Equal(t, 468, res.N)
	assert.Greater(t, res.LML, res.Start)
	assert.False(t, math.IsNaN(res.LML))
	assert.InDelta(t, 1, res.Params["seasonal.period"], 0.01, "the seasonal cycle is yearly")
	assert.Len(t, res.Params, 7)
	assert.Contains(t, log.String(), "restart 0 iter 1:")
	assert.Contains(t, log.String(), "log marginal likelihood")

	f, err := os.Open(res.Plot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 500)

}

// Through the cli: the JSON object's fields and the picture.
func TestCLIWritesFieldsAndPlot(t *testing.T) {
	t.Parallel()
	clitest.Check[map[string]any](t, program(), clitest.Expect{Fields: []string{"lml", "lml_start", "params", "n", "plot"}, Pictures: []string{"co2.png"}},
		"-kernel", "rbf", "-restarts", "0", "-iters", "5")
}

// Kernel expressions: terms by +, factors by *, each non-noise term scaled.
func TestParseKernel(t *testing.T) {
	k, _, err := buildKernel("rbf+periodic*rbf+white", 40)
	require.NoError(t, err)
	var names []string
	for _, p := range k.Hyperparams() {
		names = append(names, p.Name())
	}
	assert.Equal(t, []string{"scale.variance", "rbf.lengthscale", "scale_2.variance", "periodic.lengthscale",
		"periodic.period", "rbf_2.lengthscale", "white.variance"}, names)
	assert.True(t, hasWhite(k))
	k, _, err = buildKernel("matern52", 40)
	require.NoError(t, err)
	assert.IsType(t, &kernel.Sum{}, k)
	k, _, err = buildKernel("rbf*linear", 40)
	require.NoError(t, err)
	assert.False(t, hasWhite(k))
	_, _, err = buildKernel("rbf+spline", 40)
	assert.ErrorContains(t, err, `"spline"`)
}
