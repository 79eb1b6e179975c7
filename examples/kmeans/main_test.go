package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// -init first is scikit-learn's KMeans(init=X[:10], n_init=1,
// algorithm="lloyd") on digits (examples/gmm/testdata/make_fixture.py):
// the same inertia, iteration count and cluster sizes.
func TestFirstRowsMatchScikitLearn(t *testing.T) {
	want := clitest.Fixture[result](t, "testdata/digits_first.json")
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"inertia", "iterations", "sizes", "adjusted_rand", "plot"}, Pictures: []string{"kmeans_centres.png"}},
		"-init", "first", "-k", "10")
	assert.InDelta(t, want.Inertia, res.Inertia, 1e-6*want.Inertia)
	assert.Equal(t, want.Iterations, res.Iterations)
	assert.Equal(t, want.Sizes, res.Sizes)
}

// k-means++ with restarts does no worse than the first-rows start here,
// its sizes sum to the 1,797 rows, and it agrees with the digit labels
// better than chance.
func TestPlusPlusRestarts(t *testing.T) {
	first, err := run(config{Init: "first", K: 10}, clitest.EnvWith(t, 1, "sklearn/digits.csv"))
	require.NoError(t, err)
	res, err := run(config{Init: "kmeans++", K: 10, Restarts: 3}, clitest.EnvWith(t, 1, "sklearn/digits.csv"))
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Inertia, first.Inertia*1.001)
	n := 0
	for _, s := range res.Sizes {
		n += s
	}
	assert.Equal(t, 1797, n)
	assert.Greater(t, res.ARI, 0.5)
	clitest.Fails(t, program(), 2, "-init", "random")
}
