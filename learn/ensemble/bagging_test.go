package ensemble

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// Bagged stumps on a step at 19.5: every bootstrap stump splits between
// the sampled points nearest the step (18.5 … 21 here), so away from it
// the average is the step exactly.
func TestBaggingRecoversAStep(t *testing.T) {
	x := make([]float64, 40)
	y := make([]float64, 40)
	for i := range x {
		x[i] = float64(i)
		if i >= 20 {
			y[i] = 3
		}
	}
	b, err := FitBagging(context.Background(), tensor.FromFloat64s(x, 40, 1), tensor.FromFloat64s(y, 40), BaggingOptions{Trees: 25, MaxDepth: 1, MinLeaf: 1, Seed: 1})
	require.NoError(t, err)
	got := b.Predict(tensor.FromFloat64s([]float64{2, 15, 25, 37}, 4, 1))
	assert.Equal(t, []int{4}, got.Shape())
	assert.InDeltaSlice(t, []float64{0, 0, 3, 3}, got.Float64s(), 1e-12)
}
