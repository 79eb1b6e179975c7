package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

func TestLogLossProba(t *testing.T) {
	// −(log 0.8 + log 0.5 + log 1e-15)/3: the zero is clipped.
	p := tensor.FromFloat64s([]float64{0.8, 0.2, 0.5, 0.5, 1, 0}, 3, 2)
	got, err := LogLossProba(p, []int{0, 1, 1})
	require.NoError(t, err)
	assert.InDelta(t, -(math.Log(0.8)+math.Log(0.5)+math.Log(1e-15))/3, got, 1e-12)
	// float32 probabilities give the same mean to float32 precision.
	got32, err := LogLossProba(tensor.FromValues(tensor.Float32, []float64{0.8, 0.2, 0.5, 0.5}, 2, 2), []int{0, 1})
	require.NoError(t, err)
	assert.InDelta(t, -(math.Log(0.8)+math.Log(0.5))/2, got32, 1e-6)

	for _, c := range []struct {
		name   string
		p      *tensor.Tensor
		labels []int
		want   string
	}{
		{"nil", nil, []int{0}, "got nil"},
		{"1-D", tensor.FromFloat64s([]float64{0.5, 0.5}), []int{0}, "(n, classes)"},
		{"lengths", p, []int{0, 1}, "3 predictions for 2 labels"},
		{"label", p, []int{0, 2, 1}, "label 2 of row 1 is out of range [0, 2)"},
	} {
		_, err := LogLossProba(c.p, c.labels)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.Contains(t, err.Error(), "metrics.LogLossProba", c.name)
	}
}
