package anomaly_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/anomaly"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand: sorted scores 1…6 with anomalies at 1, 3, 4 give F₁ = 2TP/(flagged
// + 3) of 2/4, 2/5, 4/6, 6/7, 6/8, 6/9 when flagging the lowest 1…6; the
// best is 6/7 with the threshold between 4 and 5.
func TestBestThresholdByHand(t *testing.T) {
	th, f1, err := anomaly.BestThreshold([]float64{5, 1, 6, 3, 2, 4}, []int{0, 1, 0, 1, 0, 1})
	require.NoError(t, err)
	assert.InDelta(t, 4.5, th, 1e-15)
	assert.InDelta(t, 6.0/7, f1, 1e-15)

	// Tied scores are flagged together: {1, 1} holds one anomaly of one,
	// F₁ = 2/3 at t = 1.5, better than flagging all three (1/2).
	th, f1, err = anomaly.BestThreshold([]float64{1, 1, 2}, []int{1, 0, 0})
	require.NoError(t, err)
	assert.InDelta(t, 1.5, th, 1e-15)
	assert.InDelta(t, 2.0/3, f1, 1e-15)

	_, _, err = anomaly.BestThreshold([]float64{1, 2}, []int{0, 0})
	assert.ErrorContains(t, err, "anomaly.BestThreshold: no anomalous row")
	_, _, err = anomaly.BestThreshold([]float64{1, math.NaN()}, []int{1, 0})
	assert.ErrorContains(t, err, "score 1 is NaN")
	_, _, err = anomaly.BestThreshold([]float64{1}, []int{1, 0})
	assert.ErrorContains(t, err, "1 scores for 2 labels")
	_, _, err = anomaly.BestThreshold([]float64{1, 2}, []int{1, 2})
	assert.ErrorContains(t, err, "label 1 is 2")
}

// blobs returns n rows in 6-D: two tight clusters on a plane, plus small
// noise in the other four dimensions; anomalies sit off the plane's
// clusters at distance 8.
func blobs(rng *tensor.RNG, n int, anomalous bool) *tensor.Tensor {
	v := rng.Normal(tensor.Float64, 0, 0.05, n, 6).Float64s()
	extra := rng.Normal(tensor.Float64, 0, 0.3, n).Float64s()
	for i := range n {
		c := float64(2*(i%2) - 1)
		v[i*6] += 3 * c
		v[i*6+1] += extra[i]
		if anomalous {
			v[i*6+1] += 8
		}
	}
	return tensor.FromFloat64s(v, n, 6)
}

// Normal rows from two clusters, anomalies away from both: the pipeline
// (PCA to 2-D, a 2-component mixture, F₁-calibrated threshold) separates a
// fresh test split exactly, and the threshold sits between the two
// groups' scores.
func TestPipelineSeparates(t *testing.T) {
	rng := tensor.NewRNG(3)
	d, err := anomaly.FitDetector(context.Background(), blobs(rng, 400, false), anomaly.Options{Components: 2, K: 2, Seed: 1})
	require.NoError(t, err)
	val := tensor.Concat(0, blobs(rng, 100, false), blobs(rng, 10, true))
	truth := make([]int, 110)
	for i := 100; i < 110; i++ {
		truth[i] = 1
	}
	f1, err := d.Calibrate(val, truth)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f1)
	test := tensor.Concat(0, blobs(rng, 100, false), blobs(rng, 10, true))
	assert.Equal(t, truth, d.Predict(test))
	s := d.LogProb(test)
	assert.Equal(t, []int{110}, s.Shape())
	for i, v := range s.Float64s() {
		assert.Equal(t, i >= 100, v < d.Threshold, "row %d", i)
	}
	defer func() {
		e, ok := recover().(*tensor.Error)
		require.True(t, ok, "want a *tensor.Error panic")
		assert.Contains(t, e.Error(), "tensor.anomaly.Detector.LogProb: want an (m, 6) matrix, got shape (3, 5)")
	}()
	d.LogProb(tensor.Zeros(tensor.Float64, 3, 5))
}

// FitDetector rejects bad data and options with an error naming the fit.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	rng := tensor.NewRNG(4)
	nan := blobs(rng, 10, false)
	nan.Float64s()[13] = math.NaN()
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		opts anomaly.Options
		want string
	}{
		{"K > n", blobs(rng, 10, false), anomaly.Options{Components: 2, K: 20}, "anomaly.FitDetector: K = 20 components for 10 rows"},
		{"no components", blobs(rng, 10, false), anomaly.Options{K: 2}, "anomaly.FitDetector: Components = 0 for 6 columns"},
		{"NaN", nan, anomaly.Options{Components: 2, K: 2}, "anomaly.FitDetector: normal[2, 1] is NaN"},
		{"zero columns", tensor.Zeros(tensor.Float64, 4, 0), anomaly.Options{Components: 1, K: 1}, "anomaly.FitDetector: normal has zero columns"},
		{"vector", tensor.Zeros(tensor.Float64, 4), anomaly.Options{Components: 1, K: 1}, "anomaly.FitDetector: normal must be an (n, d) matrix"},
	} {
		_, err := anomaly.FitDetector(ctx, c.x, c.opts)
		assert.ErrorContains(t, err, c.want, c.name)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	d, err := anomaly.FitDetector(cancelled, blobs(rng, 50, false), anomaly.Options{Components: 2, K: 2})
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotNil(t, d)
}
