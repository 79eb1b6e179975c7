package pca_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// ppcaOutputs are what a probabilistic PCA gives: W, σ² and the
// log-likelihood of x.
func ppcaOutputs(t *testing.T, m *pca.PPCA, x *tensor.Tensor) [][]float64 {
	ll, err := m.LogLikelihood(x)
	if err != nil {
		t.Error(err)
	}
	return [][]float64{m.W.Values(), {m.Sigma2, ll}}
}

// The iterative fits out of iterations return their model with a
// *tensor.NotConvergedError, and that model is finite.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	ctx := context.Background()
	x := iris(t)
	cases := []struct {
		name, op string
		fit      func() (*pca.PPCA, error)
	}{
		{"EM", "pca.FitPPCAEM", func() (*pca.PPCA, error) {
			return pca.FitPPCAEM(ctx, x, pca.PPCAOptions{Components: 2, MaxIter: 1})
		}},
		{"gradient", "pca.FitPPCAGradient", func() (*pca.PPCA, error) {
			return pca.FitPPCAGradient(ctx, x, pca.PPCAOptions{Components: 2, MaxIter: 1})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.fit()
			if m == nil {
				t.Fatalf("no model: %v", err)
			}
			numtest.Unconverged(t, err, c.op, ppcaOutputs(t, m, x)...)
		})
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	ctx := context.Background()
	x := iris(t)
	cases := []struct {
		name, want string
		err        error
	}{
		{"PCA more components than columns", "5 components", numtest.Err(pca.FitPCA(x, pca.PCAOptions{Components: 5}))},
		{"PCA negative components", "-1 components", numtest.Err(pca.FitPCA(x, pca.PCAOptions{Components: -1}))},
		{"PCA unknown method", "unknown method 9", numtest.Err(pca.FitPCA(x, pca.PCAOptions{Method: 9}))},
		{"kernel PCA more components than rows", "151 components", numtest.Err(pca.FitKernelPCA(x, pca.KernelPCAOptions{Components: 151}))},
		{"PPCA q = d", "4 latent dimensions", numtest.Err(pca.FitPPCA(x, pca.PPCAOptions{Components: 4}))},
		{"PPCA EM negative MaxIter", "negative MaxIter -1", numtest.Err(pca.FitPPCAEM(ctx, x, pca.PPCAOptions{Components: 2, MaxIter: -1}))},
		{"PPCA gradient negative Tol", "Tol -1", numtest.Err(pca.FitPPCAGradient(ctx, x, pca.PPCAOptions{Components: 2, Tol: -1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or duplicated rows, gives
// finite projections and models.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	ctx := context.Background()
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{7, 0, 1, 7, 1, 0, 7, 5, 2, 7, 6, 1, 7, 2, 2}, 5, 3),
		"duplicated rows": tensor.FromFloat64s([]float64{1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 0, 1, 4, 0, 1}, 5, 3),
	}
	for name, x := range data {
		cases := []struct {
			name string
			fit  func(t *testing.T) ([][]float64, error)
		}{
			{"PCA whitened", func(*testing.T) ([][]float64, error) {
				p, err := pca.FitPCA(x, pca.PCAOptions{Whiten: true})
				if p == nil {
					return nil, err
				}
				return [][]float64{p.Transform(x).Values(), p.ExplainedVarianceRatio}, err
			}},
			{"kernel PCA", func(*testing.T) ([][]float64, error) {
				p, err := pca.FitKernelPCA(x, pca.KernelPCAOptions{Components: 1})
				if p == nil {
					return nil, err
				}
				return [][]float64{p.Transform(x).Values()}, err
			}},
			{"PPCA", func(t *testing.T) ([][]float64, error) {
				m, err := pca.FitPPCA(x, pca.PPCAOptions{Components: 1})
				if m == nil {
					return nil, err
				}
				return ppcaOutputs(t, m, x), err
			}},
			{"PPCA EM", func(t *testing.T) ([][]float64, error) {
				m, err := pca.FitPPCAEM(ctx, x, pca.PPCAOptions{Components: 1})
				if m == nil {
					return nil, err
				}
				return ppcaOutputs(t, m, x), err
			}},
			{"PPCA gradient", func(t *testing.T) ([][]float64, error) {
				m, err := pca.FitPPCAGradient(ctx, x, pca.PPCAOptions{Components: 1})
				if m == nil {
					return nil, err
				}
				return ppcaOutputs(t, m, x), err
			}},
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				out, err := c.fit(t)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range out {
					numtest.Finite(t, c.name, o)
				}
			})
		}
	}
}
