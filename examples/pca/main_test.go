package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// The -json fields equal scikit-learn's PCA(10, svd_solver="full").explained_variance_ and
// explained_variance_ratio_ on the digits and KernelPCA(10, rbf,
// gamma=1e-3).eigenvalues_ on the first 500 rows
// (testdata/make_fixture.py); both PNGs are written.
func TestMatchesScikitLearn(t *testing.T) {
	want := clitest.Fixture[result](t, "testdata/digits.json")
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"eigenvalues", "explained_variance_ratio", "kpca_eigenvalues", "plots"}, Pictures: []string{"eigendigits.png", "projections.png"}},
		"-gamma", "1e-3", "-kpca-n", "500")
	require.Len(t, res.Eigenvalues, 10)
	require.Len(t, res.KPCAEigenvalues, 10)
	for i := range 10 {
		assert.InDelta(t, want.Eigenvalues[i], res.Eigenvalues[i], 1e-9*want.Eigenvalues[0], "eigenvalue %d", i)
		assert.InDelta(t, want.Ratio[i], res.Ratio[i], 1e-11, "ratio %d", i)
		assert.InDelta(t, want.KPCAEigenvalues[i], res.KPCAEigenvalues[i], 1e-9*want.KPCAEigenvalues[0], "kpca %d", i)
	}
	clitest.Fails(t, program(), 2, "-kpca-n", "5000")
}
