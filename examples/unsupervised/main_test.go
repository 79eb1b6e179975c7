package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The figures against scikit-learn on the same data: PCA of digits
// explains 14.89 % and 13.62 % on its first two components; k-means on
// iris has inertia 78.851 and an adjusted Rand index of 0.730 against the
// species; the full-covariance mixture's is 0.904.
func TestFiguresAndPictures(t *testing.T) {
	dir := t.TempDir()
	res, err := run(1, dir, false)
	require.NoError(t, err)
	assert.InDelta(t, 0.14890594, res.DigitsExplained[0], 1e-6)
	assert.InDelta(t, 0.13618771, res.DigitsExplained[1], 1e-6)
	assert.InDelta(t, 78.851, res.KMeansInertia, 1e-3)
	assert.InDelta(t, 0.7302, res.KMeansARI, 1e-3)
	assert.InDelta(t, 0.9039, res.GMMARI, 1e-3)
	require.Len(t, res.Plots, 3)
	for _, p := range res.Plots {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(10000), filepath.Base(p))
	}
}
