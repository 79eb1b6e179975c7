package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scikit-learn's SVC(kernel="rbf", gamma=0.5, C=1) on the same two petal
// features scores 0.9667 on the training set with 34 support vectors.
func TestFigures(t *testing.T) {
	path := t.TempDir() + "/svm.png"
	res, err := run(1, 1, path, false)
	require.NoError(t, err)
	assert.InDelta(t, 0.9667, res.Accuracy, 1e-3)
	assert.Equal(t, 34, res.SupportVectors)
	for i, g := range res.Gaps {
		assert.Less(t, g, 1e-5*res.Primal[i], "gap of machine %d", i)
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(10000))
}
