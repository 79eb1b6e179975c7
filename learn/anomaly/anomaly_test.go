package anomaly_test

import (
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
	th, f1, err := anomaly.BestThreshold([]float64{5, 1, 6, 3, 2, 4}, []bool{false, true, false, true, false, true})
	require.NoError(t, err)
	assert.InDelta(t, 4.5, th, 1e-15)
	assert.InDelta(t, 6.0/7, f1, 1e-15)

	// Tied scores are flagged together: {1, 1} holds one anomaly of one,
	// F₁ = 2/3 at t = 1.5, better than flagging all three (1/2).
	th, f1, err = anomaly.BestThreshold([]float64{1, 1, 2}, []bool{true, false, false})
	require.NoError(t, err)
	assert.InDelta(t, 1.5, th, 1e-15)
	assert.InDelta(t, 2.0/3, f1, 1e-15)

	_, _, err = anomaly.BestThreshold([]float64{1, 2}, []bool{false, false})
	assert.ErrorContains(t, err, "no anomalous row")
	_, _, err = anomaly.BestThreshold([]float64{1, math.NaN()}, []bool{true, false})
	assert.ErrorContains(t, err, "score 1 is NaN")
	_, _, err = anomaly.BestThreshold([]float64{1}, []bool{true, false})
	assert.ErrorContains(t, err, "1 scores for 2 labels")
}

func TestPrecisionRecallF1ByHand(t *testing.T) {
	// TP = 2, FP = 1, FN = 1.
	p, r, f := anomaly.PrecisionRecallF1([]bool{true, true, true, false, false}, []bool{true, true, false, true, false})
	assert.InDelta(t, 2.0/3, p, 1e-15)
	assert.InDelta(t, 2.0/3, r, 1e-15)
	assert.InDelta(t, 2.0/3, f, 1e-15)
	p, r, f = anomaly.PrecisionRecallF1([]bool{false}, []bool{false})
	assert.Zero(t, p+r+f)
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
	d, err := anomaly.Fit(blobs(rng, 400, false), anomaly.Options{Components: 2, K: 2, Seed: 1})
	require.NoError(t, err)
	val := tensor.Concat(0, blobs(rng, 100, false), blobs(rng, 10, true))
	truth := make([]bool, 110)
	for i := 100; i < 110; i++ {
		truth[i] = true
	}
	f1, err := d.Calibrate(val, truth)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f1)
	test := tensor.Concat(0, blobs(rng, 100, false), blobs(rng, 10, true))
	pred, err := d.Predict(test)
	require.NoError(t, err)
	p, r, f := anomaly.PrecisionRecallF1(pred, truth)
	assert.Equal(t, []float64{1, 1, 1}, []float64{p, r, f})
	s, err := d.Score(test)
	require.NoError(t, err)
	for i, v := range s {
		assert.Equal(t, i >= 100, v < d.Threshold, "row %d", i)
	}

	_, err = d.Score(tensor.Zeros(tensor.Float64, 3, 5))
	assert.ErrorContains(t, err, "anomaly.Score: want an (m, 6) matrix")
	_, err = anomaly.Fit(blobs(rng, 10, false), anomaly.Options{Components: 2, K: 20})
	assert.ErrorContains(t, err, "K = 20 components for 10 rows")
	_, err = anomaly.Fit(blobs(rng, 10, false), anomaly.Options{K: 2})
	assert.ErrorContains(t, err, "Components = 0")
}
