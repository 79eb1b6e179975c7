package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// Every expected value below is worked out by hand.

func TestAccuracyAndConfusion(t *testing.T) {
	pred := []int{0, 1, 1, 2, 2, 0}
	labels := []int{0, 1, 2, 2, 1, 1}
	acc, err := Accuracy(pred, labels)
	require.NoError(t, err)
	assert.InDelta(t, 3.0/6, acc, 1e-15)
	m, err := Confusion(pred, labels, 3)
	require.NoError(t, err)
	// true 0: predicted 0 once; true 1: 1, 2 and 0 once each; true 2: 1 and 2.
	assert.Equal(t, [][]int{{1, 0, 0}, {1, 1, 1}, {0, 1, 1}}, m)
	_, err = Confusion([]int{3}, []int{0}, 3)
	assert.ErrorContains(t, err, "prediction 3")
}

// Per class from the matrix above: class 0 tp 1, fp 1, fn 0 → P ½, R 1,
// F₁ ⅔; class 1 tp 1, fp 1, fn 2 → P ½, R ⅓, F₁ 0.4; class 2 tp 1, fp 1,
// fn 1 → ½, ½, ½. Micro: tp 3, fp 3, fn 3 → ½ all.
func TestPrecisionRecallF1(t *testing.T) {
	per, macro, micro, err := PrecisionRecallF1([]int{0, 1, 1, 2, 2, 0}, []int{0, 1, 2, 2, 1, 1}, 3)
	require.NoError(t, err)
	want := []PRF{{0.5, 1, 2.0 / 3}, {0.5, 1.0 / 3, 0.4}, {0.5, 0.5, 0.5}}
	for c, w := range want {
		assert.InDelta(t, w.Precision, per[c].Precision, 1e-15)
		assert.InDelta(t, w.Recall, per[c].Recall, 1e-15)
		assert.InDelta(t, w.F1, per[c].F1, 1e-15)
	}
	assert.InDelta(t, 0.5, macro.Precision, 1e-15)
	assert.InDelta(t, (1+1.0/3+0.5)/3, macro.Recall, 1e-15)
	assert.InDelta(t, (2.0/3+0.4+0.5)/3, macro.F1, 1e-15)
	assert.InDelta(t, 0.5, micro.F1, 1e-15)
}

// TopK: row 0 ranks class 2 second; row 1's label ties the best score at
// a higher index, so it counts as second.
func TestTopK(t *testing.T) {
	scores := tensor.FromFloat64s([]float64{0.1, 0.6, 0.3, 0.5, 0.5, 0.0}, 2, 3)
	labels := []int{2, 1}
	k1, err := TopK(scores, labels, 1)
	require.NoError(t, err)
	assert.Equal(t, 0.0, k1)
	k2, err := TopK(scores, labels, 2)
	require.NoError(t, err)
	assert.Equal(t, 1.0, k2)
}

// Positives score 0.8, 0.4; negatives 0.3, 0.4, 0.1. Of the 6 pairs the
// positive wins 5 and ties 1 (0.4 = 0.4): AUC = 5.5/6.
func TestROCAUCWithTies(t *testing.T) {
	auc, err := ROCAUC([]float64{0.8, 0.4, 0.3, 0.4, 0.1}, []int{1, 1, 0, 0, 0})
	require.NoError(t, err)
	assert.InDelta(t, 5.5/6, auc, 1e-15)
	_, err = ROCAUC([]float64{0.1, 0.2}, []int{1, 1})
	assert.ErrorContains(t, err, "both classes")
}

// log loss −(log 0.9 + log 0.5)/2; a zero probability is clipped at 1e-15.
func TestLogLoss(t *testing.T) {
	l, err := LogLoss(tensor.FromFloat32s([]float32{0.9, 0.1, 0.5, 0.5}, 2, 2), []int{0, 1})
	require.NoError(t, err)
	assert.InDelta(t, -(math.Log(0.9)+math.Log(0.5))/2, l, 1e-7, "float32 probabilities")
	l, err = LogLoss(tensor.FromFloat64s([]float64{1, 0}, 1, 2), []int{1})
	require.NoError(t, err)
	assert.InDelta(t, -math.Log(1e-15), l, 1e-9)
	_, err = LogLoss(tensor.FromFloat64s([]float64{1, 0}, 2), []int{1})
	assert.ErrorContains(t, err, "metrics.LogLoss: scores must be an (n, classes) tensor, got (2,)")
	_, err = LogLoss(tensor.FromFloat64s([]float64{1, 0}, 1, 2), []int{1, 0})
	assert.ErrorContains(t, err, "metrics.LogLoss")
	_, err = LogLoss(tensor.FromFloat64s([]float64{1, 0}, 1, 2), []int{2})
	assert.ErrorContains(t, err, "label 2 of row 0 is out of range [0, 2)")
}

// Two bins: the rows of confidence 0.9 (right) and 0.8 (wrong) fall in
// [0.5, 1], with accuracy ½ and mean confidence 0.85, contributing
// |0.5 − 0.85|·2/3; the third row's confidence 0.4 (right) falls in
// [0, 0.5) and contributes |1 − 0.4|·1/3.
func TestECE(t *testing.T) {
	probs := tensor.FromFloat64s([]float64{0.9, 0.1, 0, 0.8, 0.2, 0, 0.4, 0.3, 0.3}, 3, 3)
	e, err := ECE(probs, []int{0, 1, 0}, 2)
	require.NoError(t, err)
	assert.InDelta(t, 0.35*2/3+0.6/3, e, 1e-15)
}

// Errors (1, −1, 2): MSE 2, MAE 4/3; targets (1, 2, 3) have SS_tot 2, so
// R² = 1 − 6/2 = −2.
func TestRegression(t *testing.T) {
	pred, target := []float64{2, 1, 5}, []float64{1, 2, 3}
	mse, _ := MSE(pred, target)
	mae, _ := MAE(pred, target)
	r2, err := R2(pred, target)
	require.NoError(t, err)
	assert.InDelta(t, 2, mse, 1e-15)
	assert.InDelta(t, 4.0/3, mae, 1e-15)
	assert.InDelta(t, -2, r2, 1e-15)
	_, err = R2([]float64{1, 2}, []float64{3, 3})
	assert.ErrorContains(t, err, "constant")
	_, err = MSE([]float64{1}, nil)
	assert.ErrorContains(t, err, "1 predictions for 0 labels")
}
