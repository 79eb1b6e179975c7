package nn

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

type upsamplingCase struct {
	Weight, Bias, X, Y []float64
	Shape              []int
}

func loadUpsampling(t *testing.T) map[string]upsamplingCase {
	t.Helper()
	b, err := os.ReadFile("testdata/upsampling.json")
	require.NoError(t, err)
	var f map[string]upsamplingCase
	require.NoError(t, json.Unmarshal(b, &f))
	return f
}

// ConvTranspose2D against torch.nn.ConvTranspose2d (testdata/
// make_upsampling.py): stride 2 with output padding, and a grouped,
// dilated, rectangular case.
func TestConvTranspose2DMatchesPyTorch(t *testing.T) {
	f := loadUpsampling(t)
	rng := tensor.NewRNG(1)
	layers := map[string]*ConvTranspose2D{
		"plain":   NewConvTranspose2D(rng, 3, 4, [2]int{3, 3}, Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, OutputPadding: [2]int{1, 1}, DType: tensor.Float64}),
		"grouped": NewConvTranspose2D(rng, 4, 6, [2]int{2, 3}, Conv2DOptions{Stride: [2]int{1, 2}, Padding: [2]int{0, 1}, Dilation: [2]int{2, 1}, Groups: 2, DType: tensor.Float64}),
	}
	for name, l := range layers {
		c := f[name]
		copy(l.Weight.Value.Float64s(), c.Weight)
		copy(l.Bias.Value.Float64s(), c.Bias)
		g := graph.New()
		x := g.Const(tensor.FromFloat64s(c.X, 2, l.In, 4, 5))
		y := l.Forward(x)
		require.Equal(t, c.Shape, y.Shape(), name)
		numtest.Close(t, c.Y, y.Value(), 1e-12, name)
	}
}

func TestUpsampleMatchesPyTorch(t *testing.T) {
	f := loadUpsampling(t)
	for name, bilinear := range map[string]bool{"upsample_nearest": false, "upsample_bilinear": true} {
		c := f[name]
		g := graph.New()
		y := Upsample{Scale: [2]int{2, 3}, Bilinear: bilinear}.Forward(g.Const(tensor.FromFloat64s(c.X, 1, 2, 3, 4)))
		require.Equal(t, c.Shape, y.Shape(), name)
		numtest.Close(t, c.Y, y.Value(), 1e-12, name)
	}
}

// The transposed convolution is the adjoint of the convolution with the
// same weight: ⟨Conv2D(x, W), y⟩ = ⟨x, ConvTranspose(y)⟩ (bias-free).
func TestConvTransposeIsTheAdjoint(t *testing.T) {
	rng := tensor.NewRNG(2)
	l := NewConvTranspose2D(rng, 3, 2, [2]int{3, 3}, Conv2DOptions{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}, NoBias: true, OutputPadding: [2]int{1, 1}, DType: tensor.Float64})
	y := rng.Normal(tensor.Float64, 0, 1, 1, 3, 4, 4)
	g := graph.New()
	xt := l.Forward(g.Const(y)) // (1, 2, 8, 8)
	x := rng.Normal(tensor.Float64, 0, 1, xt.Shape()...)
	conv := graph.Conv2D(g.Const(x), g.Const(l.Weight.Value), l.Conv)
	lhs := graph.Sum(graph.Mul(conv, g.Const(y)), nil, false).Item()
	rhs := graph.Sum(graph.Mul(g.Const(x), xt), nil, false).Item()
	assert.InDelta(t, lhs, rhs, 1e-10)
}

func TestConvTransposeAndUpsampleGradients(t *testing.T) {
	rng := tensor.NewRNG(3)
	l := NewConvTranspose2D(rng, 2, 2, [2]int{2, 2}, Conv2DOptions{Stride: [2]int{2, 2}, DType: tensor.Float64})
	gradCheckModule(t, "ConvTranspose2D", l.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 1, 2, 3, 3)},
		func(xs []*graph.Node) *graph.Node { return l.Forward(xs[0]) }, 2)
	gradCheckModule(t, "Upsample", nil, []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 1, 1, 2, 3)},
		func(xs []*graph.Node) *graph.Node {
			return Upsample{Scale: [2]int{2, 2}, Bilinear: true}.Forward(xs[0])
		}, 2)
}
