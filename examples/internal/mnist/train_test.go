package mnist

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func TestAccuracy(t *testing.T) {
	assert.Equal(t, 0.75, Accuracy([]int{1, 2, 3, 4}, []int{1, 2, 0, 4}))
	assert.Equal(t, 0.0, Accuracy(nil, nil))
	assert.Panics(t, func() { Accuracy([]int{1}, nil) })
}

// Predict takes the arg-max of each row's logits, across batch boundaries.
func TestPredict(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.FromValues(dt, []float64{
			0, 1, 0,
			5, -1, 2,
			-3, -2, -1,
			0, 0, 7,
			9, 8, 8,
		}, 5, 3)
		identity := func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return g.Const(xb) }
		assert.Equal(t, []int{1, 0, 2, 2, 0}, Predict(x, 2, identity), dt)
	}
}
