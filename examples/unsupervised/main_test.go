package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// The figures against scikit-learn on the same data: PCA of digits
// explains 14.89 % and 13.62 % on its first two components; k-means on
// iris has inertia 78.851 and an adjusted Rand index of 0.730 against the
// species; the full-covariance mixture's is 0.904.
func TestFiguresAndPictures(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"digits_pca_explained_ratio", "iris_kmeans_inertia", "iris_kmeans_ari", "iris_gmm_mean_loglik", "iris_gmm_ari", "plots"}, Pictures: []string{"digits_pca.png", "iris_kmeans.png", "iris_gmm.png"}})
	assert.InDelta(t, 0.14890594, res.DigitsExplained[0], 1e-6)
	assert.InDelta(t, 0.13618771, res.DigitsExplained[1], 1e-6)
	assert.InDelta(t, 78.851, res.KMeansInertia, 1e-3)
	assert.InDelta(t, 0.7302, res.KMeansARI, 1e-3)
	assert.InDelta(t, 0.9039, res.GMMARI, 1e-3)
	require.Len(t, res.Plots, 3)
}
