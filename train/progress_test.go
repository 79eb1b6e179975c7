package train

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Off a terminal, Progress writes one line per epoch and nothing per step.
func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf)
	p.Printf("start")
	p.StartEpoch("epoch 1/2", 3)
	p.Step(1)
	p.Step(2)
	p.EndEpoch("loss %.1f", 1.5)
	assert.Equal(t, "start\nepoch 1/2 loss 1.5\n", buf.String())
	NewProgress(nil).Printf("discarded") // must not panic
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
