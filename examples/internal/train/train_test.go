package train

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestWritePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "curve.png")
	err := WritePNG(path,
		Panel{Title: "loss", XLabel: "epoch", Curves: []Curve{{Name: "train", Y: []float64{2, 1, 0.5}}}},
		Panel{Title: "series", Curves: []Curve{{Name: "a", Y: []float64{0, 1, 0}, Style: Scatter}, {Name: "b", Y: []float64{1, 0, 1}, Style: Line}}})
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	// Two panels of 5×3.5 inches side by side at vgimg's default 96 dpi.
	assert.Equal(t, 960, img.Bounds().Dx())
	assert.Equal(t, 336, img.Bounds().Dy())

	require.Error(t, WritePNG(path))
}
