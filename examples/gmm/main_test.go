package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// -init rows:0,50,100 is scikit-learn's EM from means_init = those rows,
// identity precisions and equal weights (testdata/make_fixture.py): run to
// convergence, the same mean log-likelihood and weights; at the default
// tol, the same stopping point (scikit-learn's n_iter_ counts the E-step
// at the initial parameters as an iteration, so it is one more than our
// M-steps); a trace that never decreases; and the PNG.
func TestRowsInitMatchesScikitLearn(t *testing.T) {
	t.Parallel()
	want := clitest.Fixture[result](t, "testdata/iris_rows.json")
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"mean_log_likelihood", "iterations", "weights", "log_likelihood_per_iteration", "plot"}, Pictures: []string{"gmm_ellipses.png"}},
		"-init", "rows:0,50,100", "-fit", "em", "-tol", "1e-3", "-max-iter", "100")
	assert.Equal(t, want.Iterations, res.Iterations+1)
	for i := 1; i < len(res.Trace); i++ {
		assert.GreaterOrEqual(t, res.Trace[i], res.Trace[i-1])
	}
	res, err := run(config{Init: "rows:0,50,100", Fit: "em", Tol: 1e-12, MaxIter: 5000}, clitest.EnvWith(t, 1, "sklearn/iris.csv"))
	require.NoError(t, err)
	assert.InDelta(t, want.MeanLogLikelihood, res.MeanLogLikelihood, 1e-9)
	require.Len(t, res.Weights, 3)
	for j := range want.Weights {
		assert.InDelta(t, want.Weights[j], res.Weights[j], 1e-7)
	}
}

// The gradient fit from a converged EM fit (k-means starts) reaches the
// same mean log-likelihood to 1e-6.
func TestGradientMeetsEM(t *testing.T) {
	t.Parallel()
	c := config{Init: "kmeans", Fit: "em", Tol: 1e-12, MaxIter: 3000}
	em, err := run(c, clitest.EnvWith(t, 1, "sklearn/iris.csv"))
	require.NoError(t, err)
	c.Fit = "gradient"
	gr, err := run(c, clitest.EnvWith(t, 1, "sklearn/iris.csv"))
	require.NoError(t, err)
	assert.InDelta(t, em.MeanLogLikelihood, gr.MeanLogLikelihood, 1e-6)
	assert.GreaterOrEqual(t, gr.MeanLogLikelihood, em.MeanLogLikelihood-1e-9)
}

func TestBadFlags(t *testing.T) {
	for _, c := range []config{
		{Init: "rows:0,50", Fit: "em"},
		{Init: "rows:0,50,1000", Fit: "em"},
		{Init: "random", Fit: "em"},
		{Init: "kmeans", Fit: "newton"},
	} {
		_, err := run(c, clitest.EnvWith(t, 1, "sklearn/iris.csv"))
		assert.Error(t, err, c.Init+" "+c.Fit)
	}
}
