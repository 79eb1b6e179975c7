package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -init rows:0,50,100 is scikit-learn's EM from means_init = those rows,
// identity precisions and equal weights (testdata/make_fixture.py): run to
// convergence, the same mean log-likelihood and weights; at the default
// tol, the same stopping point (scikit-learn's n_iter_ counts the E-step
// at the initial parameters as an iteration, so it is one more than our
// M-steps); a trace that never decreases; and the PNG.
func TestRowsInitMatchesScikitLearn(t *testing.T) {
	b, err := os.ReadFile("testdata/iris_rows.json")
	require.NoError(t, err)
	var want result
	require.NoError(t, json.Unmarshal(b, &want))
	dir := t.TempDir()
	res, err := run(config{init: "rows:0,50,100", fit: "em", data: "sklearn/iris.csv", out: dir, tol: 1e-3, maxIter: 100, seed: 1})
	require.NoError(t, err)
	assert.Equal(t, want.Iterations, res.Iterations+1)
	for i := 1; i < len(res.Trace); i++ {
		assert.GreaterOrEqual(t, res.Trace[i], res.Trace[i-1])
	}
	st, err := os.Stat(res.Plot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000))

	res, err = run(config{init: "rows:0,50,100", fit: "em", data: "sklearn/iris.csv", tol: 1e-12, maxIter: 5000, seed: 1})
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
	c := config{init: "kmeans", fit: "em", data: "sklearn/iris.csv", tol: 1e-12, maxIter: 3000, seed: 1}
	em, err := run(c)
	require.NoError(t, err)
	c.fit = "gradient"
	gr, err := run(c)
	require.NoError(t, err)
	assert.InDelta(t, em.MeanLogLikelihood, gr.MeanLogLikelihood, 1e-6)
	assert.GreaterOrEqual(t, gr.MeanLogLikelihood, em.MeanLogLikelihood-1e-9)
}

func TestBadFlags(t *testing.T) {
	for _, c := range []config{
		{init: "rows:0,50", fit: "em", data: "sklearn/iris.csv"},
		{init: "rows:0,50,1000", fit: "em", data: "sklearn/iris.csv"},
		{init: "random", fit: "em", data: "sklearn/iris.csv"},
		{init: "kmeans", fit: "newton", data: "sklearn/iris.csv"},
	} {
		_, err := run(c)
		assert.Error(t, err, c.init+" "+c.fit)
	}
}
