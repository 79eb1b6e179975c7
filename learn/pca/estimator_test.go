package pca_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// Bad data and options come back as errors that name the fit and the fault.
func TestFitsRejectBadInput(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{1, 2, 3, 4, 5, 7, 2, 1, 0}, 3, 3)
	nan := tensor.FromFloat64s([]float64{1, 2, 3, 4, math.NaN(), 7, 2, 1, 0}, 3, 3)
	empty := tensor.Zeros(tensor.Float64, 3, 0)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"PCA NaN", numtest.Err(pca.FitPCA(nan, pca.PCAOptions{})), "pca.FitPCA: x[1, 1] is NaN"},
		{"PCA no columns", numtest.Err(pca.FitPCA(empty, pca.PCAOptions{})), "pca.FitPCA: x has zero columns"},
		{"PCA K > n", numtest.Err(pca.FitPCA(x, pca.PCAOptions{Components: 4})), "4 components for data of shape (3, 3)"},
		{"PPCA q = d", numtest.Err(pca.FitPPCA(x, pca.PPCAOptions{Components: 3})), "3 latent dimensions (Components) for d = 3"},
		{"PPCA EM NaN", numtest.Err(pca.FitPPCAEM(ctx, nan, pca.PPCAOptions{Components: 1})), "pca.FitPPCAEM: x[1, 1] is NaN"},
		{"PPCA gradient q = 0", numtest.Err(pca.FitPPCAGradient(ctx, x, pca.PPCAOptions{})), "0 latent dimensions"},
		{"kernel PCA K > n", numtest.Err(pca.FitKernelPCA(x, pca.KernelPCAOptions{Components: 4})), "4 components for 3 rows"},
		{"kernel PCA NaN", numtest.Err(pca.FitKernelPCA(nan, pca.KernelPCAOptions{})), "pca.FitKernelPCA: x[1, 1] is NaN"},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// The iterative PPCA fits stop on a cancelled context; EM with one
// iteration allowed reports non-convergence and returns its model.
func TestPPCAContextAndConvergence(t *testing.T) {
	x := iris(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := pca.FitPPCAEM(ctx, x, pca.PPCAOptions{Components: 2})
	require.ErrorIs(t, err, context.Canceled)
	_, err = pca.FitPPCAGradient(ctx, x, pca.PPCAOptions{Components: 2})
	require.ErrorIs(t, err, context.Canceled)

	m, err := pca.FitPPCAEM(context.Background(), x, pca.PPCAOptions{Components: 2, MaxIter: 1})
	require.True(t, errors.Is(err, tensor.ErrNotConverged), "%v", err)
	require.NotNil(t, m)
	assert.Len(t, m.Trace, 1)
}

// Zero Components keeps every component with a positive eigenvalue: three
// distinct points span two dimensions after centring, so two.
func TestKernelPCAAllComponents(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 1, 0, 0, 1}, 3, 2)
	p, err := pca.FitKernelPCA(x, pca.KernelPCAOptions{})
	require.NoError(t, err)
	assert.Len(t, p.Eigenvalues, 2)
	assert.Equal(t, []int{3, 2}, p.Transform(x).Shape())
}

// Transform of rows with the wrong number of columns panics with a
// *tensor.Error naming the call.
func TestKernelPCATransformMisuse(t *testing.T) {
	p, err := pca.FitKernelPCA(iris(t), pca.KernelPCAOptions{Components: 2})
	require.NoError(t, err)
	defer func() {
		r := recover()
		e, ok := r.(*tensor.Error)
		require.True(t, ok, "panic %v is not a *tensor.Error", r)
		assert.Contains(t, e.Error(), "pca.KernelPCA.Transform")
	}()
	p.Transform(tensor.Zeros(tensor.Float64, 2, 3))
}
