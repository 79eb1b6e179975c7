package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/tensor"
)

// Every fit out of iterations returns its clustering with a
// *tensor.NotConvergedError, and that clustering is finite and predicts:
// one Lloyd step or one DP-means pass on iris does not settle.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	x := iris(t)
	cases := []struct {
		name, op string
		fit      func() ([][]float64, error)
	}{
		{"k-means", "cluster.FitKMeans", func() ([][]float64, error) {
			m, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 3, MaxIter: 1, Restarts: 1, Seed: 1})
			if m == nil {
				return nil, err
			}
			assert.Equal(t, m.Labels, m.Predict(x))
			return [][]float64{m.Transform(x).Values(), {m.Inertia}}, err
		}},
		{"DP-means", "cluster.FitDPMeans", func() ([][]float64, error) {
			m, err := cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: 1, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Centers.Values(), {m.Objective}}, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out...)
		})
	}
}

// Invalid hyperparameters are errors naming them.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	cases := []struct {
		name, want string
		err        error
	}{
		{"k-means negative restarts", "Restarts", numtest.Err(cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, Restarts: -1}))},
		{"k-means negative MaxIter", "MaxIter", numtest.Err(cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, MaxIter: -1}))},
		{"DP-means negative λ", "λ = -1", numtest.Err(cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: -1}))},
		{"DP-means negative MaxIter", "MaxIter", numtest.Err(cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: 1, MaxIter: -1}))},
		{"mini-batch negative steps", "Steps = -1", numtest.Err(cluster.FitMiniBatchKMeans(ctx, x, cluster.MiniBatchKMeansOptions{K: 2, Steps: -1}))},
		{"mini-batch K = 0", "K = 0", numtest.Err(cluster.FitMiniBatchKMeans(ctx, x, cluster.MiniBatchKMeansOptions{}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data, a constant column or rows all alike (asked
// for more clusters than distinct rows), gives finite clusterings.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	data := map[string]*tensor.Tensor{
		"constant column": tensor.FromFloat64s([]float64{7, 0, 7, 1, 7, 5, 7, 6}, 4, 2),
		"identical rows":  tensor.Full(tensor.Float64, 3, 4, 2),
	}
	for name, x := range data {
		cases := []numtest.FitCase{
			{Name: "k-means", Fit: func() ([]float64, error) {
				m, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2})
				if m == nil {
					return nil, err
				}
				return append(m.Transform(x).Values(), m.Inertia), err
			}},
			{Name: "mini-batch k-means", Fit: func() ([]float64, error) {
				m, err := cluster.FitMiniBatchKMeans(ctx, x, cluster.MiniBatchKMeansOptions{K: 2, Steps: 5})
				if m == nil {
					return nil, err
				}
				return append(m.Transform(x).Values(), m.Inertia), err
			}},
			{Name: "DP-means", Fit: func() ([]float64, error) {
				m, err := cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: 0.5})
				if m == nil {
					return nil, err
				}
				return append(m.Centers.Values(), m.Objective), err
			}},
		}
		numtest.FiniteFits(t, name, cases)
	}
}
