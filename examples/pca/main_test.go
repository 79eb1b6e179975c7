package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The -json fields equal scikit-learn's PCA(10, svd_solver="full").explained_variance_ and
// explained_variance_ratio_ on the digits and KernelPCA(10, rbf,
// gamma=1e-3).eigenvalues_ on the first 500 rows
// (testdata/make_fixture.py); both PNGs are written.
func TestMatchesScikitLearn(t *testing.T) {
	b, err := os.ReadFile("testdata/digits.json")
	require.NoError(t, err)
	var want result
	require.NoError(t, json.Unmarshal(b, &want))
	dir := t.TempDir()
	res, err := run(config{data: "sklearn/digits.csv", out: dir, gamma: 1e-3, kpcaN: 500})
	require.NoError(t, err)
	require.Len(t, res.Eigenvalues, 10)
	require.Len(t, res.KPCAEigenvalues, 10)
	for i := range 10 {
		assert.InDelta(t, want.Eigenvalues[i], res.Eigenvalues[i], 1e-9*want.Eigenvalues[0], "eigenvalue %d", i)
		assert.InDelta(t, want.Ratio[i], res.Ratio[i], 1e-11, "ratio %d", i)
		assert.InDelta(t, want.KPCAEigenvalues[i], res.KPCAEigenvalues[i], 1e-9*want.KPCAEigenvalues[0], "kpca %d", i)
	}
	require.Len(t, res.Plots, 2)
	for _, p := range res.Plots {
		st, err := os.Stat(p)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(2000), p)
	}
	_, err = run(config{data: "sklearn/digits.csv", gamma: 1e-3, kpcaN: 5000})
	assert.Error(t, err)
}
