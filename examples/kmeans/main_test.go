package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -init first is scikit-learn's KMeans(init=X[:10], n_init=1,
// algorithm="lloyd") on digits (examples/gmm/testdata/make_fixture.py):
// the same inertia, iteration count and cluster sizes.
func TestFirstRowsMatchScikitLearn(t *testing.T) {
	b, err := os.ReadFile("testdata/digits_first.json")
	require.NoError(t, err)
	var want result
	require.NoError(t, json.Unmarshal(b, &want))
	dir := t.TempDir()
	res, err := run(config{init: "first", k: 10, data: "sklearn/digits.csv", out: dir})
	require.NoError(t, err)
	assert.InDelta(t, want.Inertia, res.Inertia, 1e-6*want.Inertia)
	assert.Equal(t, want.Iterations, res.Iterations)
	assert.Equal(t, want.Sizes, res.Sizes)
	st, err := os.Stat(res.Plot)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(1000))
}

// k-means++ with restarts does no worse than the first-rows start here,
// its sizes sum to the 1,797 rows, and it agrees with the digit labels
// better than chance.
func TestPlusPlusRestarts(t *testing.T) {
	first, err := run(config{init: "first", k: 10, data: "sklearn/digits.csv"})
	require.NoError(t, err)
	res, err := run(config{init: "kmeans++", k: 10, restarts: 3, seed: 1, data: "sklearn/digits.csv"})
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Inertia, first.Inertia*1.001)
	n := 0
	for _, s := range res.Sizes {
		n += s
	}
	assert.Equal(t, 1797, n)
	assert.Greater(t, res.ARI, 0.5)
	_, err = run(config{init: "random", k: 10, data: "sklearn/digits.csv"})
	assert.Error(t, err)
}
