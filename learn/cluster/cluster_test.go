package cluster_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/cluster"
	"github.com/gradus-ml/gradus/tensor"
)

var ctx = context.Background()

// iris returns the 150×4 iris measurements.
func iris(t *testing.T) *tensor.Tensor {
	t.Helper()
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	return x
}

type skFixture struct {
	Inertia float64     `json:"inertia"`
	Centers [][]float64 `json:"centers"`
}

// sortedRows orders centres lexicographically, so two clusterings compare
// whatever their numbering.
func sortedRows(rows [][]float64) [][]float64 {
	out := append([][]float64(nil), rows...)
	sort.Slice(out, func(i, j int) bool {
		for f := range out[i] {
			if out[i][f] != out[j][f] {
				return out[i][f] < out[j][f]
			}
		}
		return false
	})
	return out
}

func rowsOf(x *tensor.Tensor) [][]float64 {
	n, d := x.Shape()[0], x.Shape()[1]
	v := x.Values()
	out := make([][]float64, n)
	for i := range out {
		out[i] = v[i*d : (i+1)*d]
	}
	return out
}

// On iris, k-means with restarts reaches scikit-learn's best clustering
// (testdata/make_fixtures.py, 50 restarts): the same inertia and centres.
func TestKMeansMatchesScikitLearnOnIris(t *testing.T) {
	b, err := os.ReadFile("testdata/iris_kmeans.json")
	require.NoError(t, err)
	var fx map[string]skFixture
	require.NoError(t, json.Unmarshal(b, &fx))
	x := iris(t)
	for _, k := range []int{2, 3, 5} {
		want := fx["iris_k"+string(rune('0'+k))]
		res, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: k, Restarts: 20, Seed: 1})
		require.NoError(t, err)
		assert.InDelta(t, want.Inertia, res.Inertia, 1e-9*want.Inertia, "k = %d inertia", k)
		got, exp := sortedRows(rowsOf(res.Centers)), sortedRows(want.Centers)
		for j := range exp {
			assert.InDeltaSlice(t, exp[j], got[j], 1e-9, "k = %d centre %d", k, j)
		}
		// Labels are the nearest centres and inertia is their distance sum.
		labels := res.Predict(x)
		assert.Equal(t, res.Labels, labels)
	}
}

// Two points per cluster worked by hand: {0, 2} and {10, 12} on a line give
// centres 1 and 11 and inertia 4·1 = 4, from any seeding.
func TestKMeansByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 10, 2, 12}, 4, 1)
	for seed := range uint64(5) {
		res, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, Restarts: 1, Seed: seed})
		require.NoError(t, err)
		c := res.Centers.Values()
		sort.Float64s(c)
		assert.Equal(t, []float64{1, 11}, c)
		assert.Equal(t, 4.0, res.Inertia)
		assert.Equal(t, res.Labels[0], res.Labels[2])
		assert.NotEqual(t, res.Labels[0], res.Labels[1])
	}
}

func TestKMeansSeedIsDeterministic(t *testing.T) {
	x := iris(t)
	a, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 4, Restarts: 2, Seed: 9})
	require.NoError(t, err)
	b, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 4, Restarts: 2, Seed: 9})
	require.NoError(t, err)
	assert.Equal(t, a.Labels, b.Labels)
	assert.Equal(t, a.Centers.Values(), b.Centers.Values())
}

// Duplicate rows: three distinct points asked for four clusters leaves one
// cluster empty after relocation fails; the result is still finite.
func TestKMeansMoreClustersThanDistinctRows(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 0, 1, 1, 5}, 6, 1)
	res, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 4, Restarts: 3, Seed: 2})
	require.NoError(t, err)
	assert.Equal(t, 0.0, res.Inertia)
	for _, v := range res.Centers.Values() {
		assert.False(t, math.IsNaN(v))
	}
}

// Every fit rejects bad data and bad options with an error naming the fit
// and what was wrong.
func TestBadInput(t *testing.T) {
	nan := tensor.FromFloat64s([]float64{1, math.NaN()}, 1, 2)
	noCols := tensor.Zeros(tensor.Float64, 3, 0)
	line := tensor.FromFloat64s([]float64{1, 2}, 2, 1)
	for _, c := range []struct {
		name string
		fit  func() error
		want string
	}{
		{"kmeans vector", func() error {
			_, err := cluster.FitKMeans(ctx, tensor.FromFloat64s([]float64{1, 2}, 2), cluster.KMeansOptions{K: 1})
			return err
		}, "cluster.FitKMeans: x must be an (n, d) matrix, got shape [2]"},
		{"kmeans K > n", func() error { _, err := cluster.FitKMeans(ctx, line, cluster.KMeansOptions{K: 3}); return err }, "cluster.FitKMeans: K = 3 clusters for 2 rows"},
		{"kmeans K = 0", func() error { _, err := cluster.FitKMeans(ctx, line, cluster.KMeansOptions{}); return err }, "K = 0 clusters"},
		{"kmeans NaN", func() error { _, err := cluster.FitKMeans(ctx, nan, cluster.KMeansOptions{K: 1}); return err }, "cluster.FitKMeans: x[0, 1] is NaN: values must be finite"},
		{"kmeans zero columns", func() error { _, err := cluster.FitKMeans(ctx, noCols, cluster.KMeansOptions{K: 1}); return err }, "cluster.FitKMeans: x has zero columns"},
		{"kmeans nil", func() error { _, err := cluster.FitKMeans(ctx, nil, cluster.KMeansOptions{K: 1}); return err }, "cluster.FitKMeans: x is nil"},
		{"kmeans Tol", func() error { _, err := cluster.FitKMeans(ctx, line, cluster.KMeansOptions{K: 1, Tol: -1}); return err }, "must not be negative"},
		{"dpmeans λ", func() error { _, err := cluster.FitDPMeans(ctx, line, cluster.DPMeansOptions{}); return err }, "cluster.FitDPMeans: λ = 0"},
		{"dpmeans NaN", func() error { _, err := cluster.FitDPMeans(ctx, nan, cluster.DPMeansOptions{Lambda: 1}); return err }, "cluster.FitDPMeans: x[0, 1] is NaN: values must be finite"},
		{"dpmeans zero columns", func() error { _, err := cluster.FitDPMeans(ctx, noCols, cluster.DPMeansOptions{Lambda: 1}); return err }, "zero columns"},
		{"minibatch K > n", func() error {
			_, err := cluster.FitMiniBatchKMeans(ctx, tensor.FromFloat64s([]float64{1}, 1, 1), cluster.MiniBatchKMeansOptions{K: 2})
			return err
		}, "cluster.FitMiniBatchKMeans: K = 2 clusters for 1 rows"},
		{"minibatch NaN", func() error {
			_, err := cluster.FitMiniBatchKMeans(ctx, nan, cluster.MiniBatchKMeansOptions{K: 1})
			return err
		}, "is NaN"},
		{"minibatch zero columns", func() error {
			_, err := cluster.FitMiniBatchKMeans(ctx, noCols, cluster.MiniBatchKMeansOptions{K: 1})
			return err
		}, "zero columns"},
	} {
		assert.ErrorContains(t, c.fit(), c.want, c.name)
	}
}

// Prediction on data of the wrong width is misuse: a *tensor.Error panic
// naming the call.
func TestPredictMisusePanics(t *testing.T) {
	km, err := cluster.FitKMeans(ctx, tensor.FromFloat64s([]float64{0, 0, 1, 1}, 2, 2), cluster.KMeansOptions{K: 1})
	require.NoError(t, err)
	for name, f := range map[string]func(){
		"cluster.KMeans.Predict":   func() { km.Predict(tensor.Zeros(tensor.Float64, 2, 3)) },
		"cluster.KMeans.Transform": func() { km.Transform(nil) },
	} {
		var e *tensor.Error
		func() {
			defer func() { r := recover(); require.NotNil(t, r, name); e = r.(*tensor.Error) }()
			f()
		}()
		assert.Contains(t, e.Error(), name)
	}
}

// Transform gives the squared distance to each centre: by hand, centres 1
// and 11 on a line put the point 4 at 9 and 49.
func TestKMeansTransformByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 2, 10, 12}, 4, 1)
	km, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, Init: tensor.FromFloat64s([]float64{0, 12}, 2, 1)})
	require.NoError(t, err)
	assert.Equal(t, []float64{9, 49}, km.Transform(tensor.FromFloat64s([]float64{4}, 1, 1)).Float64s())
}

// A cancelled context stops every fit before its first iteration: the
// clustering of the seeds comes back with the context's error.
func TestCancelledContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	x := iris(t)
	km, err := cluster.FitKMeans(cancelled, x, cluster.KMeansOptions{K: 3, Seed: 1})
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "cluster.FitKMeans")
	require.NotNil(t, km)
	assert.Equal(t, 0, km.Iterations)
	assert.Len(t, km.Labels, 150)
	mb, err := cluster.FitMiniBatchKMeans(cancelled, x, cluster.MiniBatchKMeansOptions{K: 3})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, mb)
	assert.Equal(t, 0, mb.Iterations)
	dp, err := cluster.FitDPMeans(cancelled, x, cluster.DPMeansOptions{Lambda: 1})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, dp)
	assert.Equal(t, 1, dp.K, "the one starting cluster at the mean")
}

// DP-means by hand on the line {0, 1, 10, 11} with λ = 4: the global mean
// 5.5 is 30.25 from 0, so 0 opens cluster 2 (centre 0, the first cluster's
// centre becomes 22/3); 1 is 1 from 0 and joins it (centres 0.5 and 10.5);
// 10 and 11 stay. The second pass changes nothing: centres 0.5 and 10.5,
// objective 4·0.25 + 2·4 = 9.
func TestDPMeansByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 10, 11}, 4, 1)
	res, err := cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: 4})
	require.NoError(t, err)
	require.Equal(t, 2, res.K)
	c := res.Centers.Values()
	sort.Float64s(c)
	assert.InDeltaSlice(t, []float64{0.5, 10.5}, c, 1e-12)
	assert.InDelta(t, 9, res.Objective, 1e-12)
	assert.Equal(t, 2, res.Iterations)
	assert.Equal(t, res.Labels[0], res.Labels[1])
	assert.Equal(t, res.Labels[2], res.Labels[3])
	assert.NotEqual(t, res.Labels[0], res.Labels[2])
}

// λ far above every squared distance keeps one cluster at the mean; λ below
// every squared distance between distinct rows gives each its own.
func TestDPMeansLambdaExtremes(t *testing.T) {
	x := iris(t)
	one, err := cluster.FitDPMeans(ctx, x, cluster.DPMeansOptions{Lambda: 1e6})
	require.NoError(t, err)
	assert.Equal(t, 1, one.K)
	mean := tensor.Mean(x, []int{0}, false).Values()
	assert.InDeltaSlice(t, mean, one.Centers.Values(), 1e-12)
	many, err := cluster.FitDPMeans(ctx, tensor.FromFloat64s([]float64{0, 1, 3, 7}, 4, 1), cluster.DPMeansOptions{Lambda: 0.5})
	require.NoError(t, err)
	assert.Equal(t, 4, many.K)
	assert.InDelta(t, 4*0.5, many.Objective, 1e-12)
}

// Mini-batch k-means lands within a few percent of the full algorithm's
// inertia on iris (Sculley reports the same kind of gap).
func TestMiniBatchKMeansNearLloyd(t *testing.T) {
	x := iris(t)
	full, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 3, Seed: 1})
	require.NoError(t, err)
	mb, err := cluster.FitMiniBatchKMeans(ctx, x, cluster.MiniBatchKMeansOptions{K: 3, BatchSize: 32, Steps: 300, Seed: 1})
	require.NoError(t, err)
	assert.Less(t, mb.Inertia, 1.05*full.Inertia)
	assert.GreaterOrEqual(t, mb.Inertia, full.Inertia-1e-9)
	assert.Len(t, mb.Labels, 150)
}

// Init gives the starting centres: on four points in two pairs, centres
// at rows 0 and 1 (one from each pair) converge to the pair means; a
// wrongly shaped Init is an error naming the shapes.
func TestKMeansInit(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 0, 10, 10, 0, 2, 10, 12}, 4, 2)
	r, err := cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, Init: tensor.Slice(x, 0, 0, 2, 1)})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 10, 11}, r.Centers.Float64s())
	assert.Equal(t, []int{0, 1, 0, 1}, r.Labels)
	assert.InDelta(t, 4.0, r.Inertia, 1e-12)
	_, err = cluster.FitKMeans(ctx, x, cluster.KMeansOptions{K: 2, Init: tensor.Slice(x, 0, 0, 3, 1)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Init has shape [3 2]")
}
