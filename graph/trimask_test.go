package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Tril, Triu and PhiLower on a batch of matrices, wide and tall, and on a
// transposed (strided) view: the expected values are the inputs with the
// masked triangle zeroed (and PhiLower's diagonal halved) by hand.
func TestTriMasksByHand(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			// Two 2×3 matrices [[1 2 3] [4 5 6]] and [[7 8 9] [10 11 12]].
			x := g.Const(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 3))
			assert.Equal(t, []float64{1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0}, graph.Tril(x).Value().Values())
			assert.Equal(t, []float64{1, 2, 3, 0, 5, 6, 7, 8, 9, 0, 11, 12}, graph.Triu(x).Value().Values())
			assert.Equal(t, []float64{0.5, 0, 0, 4, 2.5, 0, 3.5, 0, 0, 10, 5.5, 0}, graph.PhiLower(x).Value().Values())
			// The transpose of the first matrix, [[1 4] [2 5] [3 6]], is tall.
			xt := graph.Transpose(graph.Reshape(graph.Slice(x, 0, 0, 1, 1), 2, 3))
			assert.Equal(t, []float64{1, 0, 2, 5, 3, 6}, graph.Tril(xt).Value().Values())
			assert.Equal(t, []float64{1, 4, 0, 5, 0, 0}, graph.Triu(xt).Value().Values())
		})
	}
}
