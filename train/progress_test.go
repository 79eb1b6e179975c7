package train

import (
	"bytes"
	"math"
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

// Predict takes the arg-max of each row's logits, across batch
// boundaries, and their softmax, exp(zᵢ)/Σⱼexp(zⱼ) row by row.
func TestPredict(t *testing.T) {
	logits := []float64{
		0, 1, 0,
		5, -1, 2,
		-3, -2, -1,
		0, 0, 7,
		9, 8, 8,
	}
	want := make([]float64, len(logits))
	for r := range 5 {
		z := logits[3*r : 3*r+3]
		sum := math.Exp(z[0]) + math.Exp(z[1]) + math.Exp(z[2])
		for j := range 3 {
			want[3*r+j] = math.Exp(z[j]) / sum
		}
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.FromValues(dt, logits, 5, 3)
		identity := func(g *graph.Graph, xb *tensor.Tensor) *graph.Node { return g.Const(xb) }
		classes, proba := Predict(x, 2, identity)
		assert.Equal(t, []int{1, 0, 2, 2, 0}, classes, dt)
		assert.Equal(t, []int{5, 3}, proba.Shape())
		assert.Equal(t, dt, proba.DType())
		assert.InDeltaSlice(t, want, proba.Values(), 1e-6, dt)
	}
	msg := func() (msg string) {
		defer func() { msg = recover().(*tensor.Error).Error() }()
		Predict(tensor.New(tensor.Float64, 4, 3), 2, func(g *graph.Graph, xb *tensor.Tensor) *graph.Node {
			return g.Const(tensor.New(tensor.Float64, 6))
		})
		return ""
	}()
	assert.Contains(t, msg, "train.Predict")
	assert.Contains(t, msg, "logits of shape (6,) for 2 rows")
}
