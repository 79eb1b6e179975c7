package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// By hand: x (2, 2, 1, 2) holds 1..8, so channel 0 is {1, 2, 5, 6} and
// channel 1 {3, 4, 7, 8}. With scale (2, −1) and shift (10, 20),
// y = [12 14 17 16 20 22 13 12]. The gradients of Σ y: dx is the channel's
// scale at every element, dscale the channel sums of x (14, 22), dshift the
// element count per channel (4, 4). ChannelDot(x, x) is the channel sums of
// squares: 1 + 4 + 25 + 36 = 66 and 9 + 16 + 49 + 64 = 138.
func TestChannelAffineHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 1, 2))
		s := g.Var(tensor.FromValues(dt, []float64{2, -1}, 2))
		b := g.Var(tensor.FromValues(dt, []float64{10, 20}, 2))
		y := graph.ChannelAffine(x, s, b)
		require.Equal(t, []int{2, 2, 1, 2}, y.Shape())
		assert.Equal(t, []float64{12, 14, 17, 16, 20, 22, 13, 12}, y.Value().Values())
		grads := autodiff.Grad(graph.Sum(y, nil, false), x, s, b)
		assert.Equal(t, []float64{2, 2, -1, -1, 2, 2, -1, -1}, grads[0].Value().Values())
		assert.Equal(t, []float64{14, 22}, grads[1].Value().Values())
		assert.Equal(t, []float64{4, 4}, grads[2].Value().Values())

		scaled := graph.ChannelAffine(x, s, nil)
		assert.Equal(t, []float64{2, 4, -3, -4, 10, 12, -7, -8}, scaled.Value().Values())

		d := graph.ChannelDot(x, x)
		require.Equal(t, []int{2}, d.Shape())
		assert.Equal(t, []float64{66, 138}, d.Value().Values())
		// d/dx Σ_c ChannelDot(x, x)[c] = 2x.
		gx := autodiff.Grad(graph.Sum(d, nil, false), x)[0]
		assert.Equal(t, []float64{2, 4, 6, 8, 10, 12, 14, 16}, gx.Value().Values())

		// A tangent in the shift alone is broadcast over its channel.
		tb := g.Const(tensor.FromValues(dt, []float64{1, -2}, 2))
		jvp := autodiff.JVP([]*graph.Node{y}, []*graph.Node{b}, []*graph.Node{tb})[0]
		assert.Equal(t, []float64{1, 1, -2, -2, 1, 1, -2, -2}, jvp.Value().Values())
	}
}

// By hand: channel 0 of x = 1..8 (2, 2, 1, 2) holds {1, 2, 5, 6}, mean 3.5
// and biased variance (2.5² + 1.5² + 1.5² + 2.5²)/4 = 4.25; channel 1
// {3, 4, 7, 8}, mean 5.5, variance 4.25. The gradient of Σ var is
// 2(x − mean)/4, of Σ mean 1/4 everywhere.
func TestChannelMomentsHand(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		x := g.Var(tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 1, 2))
		m, v := graph.ChannelMoments(x)
		assert.Equal(t, []float64{3.5, 5.5}, m.Value().Values())
		assert.Equal(t, []float64{4.25, 4.25}, v.Value().Values())
		gv := autodiff.Grad(graph.Sum(v, nil, false), x)[0]
		assert.Equal(t, []float64{-1.25, -0.75, -1.25, -0.75, 0.75, 1.25, 0.75, 1.25}, gv.Value().Values())
		gm := autodiff.Grad(graph.Sum(m, nil, false), x)[0]
		assert.Equal(t, []float64{0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, gm.Value().Values())
	}
}

func TestChannelAffineMisuse(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.New(tensor.Float64, 4, 3, 2))
	s := g.Const(tensor.New(tensor.Float64, 3))
	for name, c := range map[string]struct {
		f        func()
		op, want string
	}{
		"scale":   {func() { graph.ChannelAffine(x, g.Const(tensor.New(tensor.Float64, 2)), s) }, "channel_affine", "(4, 3, 2) float64, (2,) float64, (3,) float64 do not fit"},
		"shift":   {func() { graph.ChannelAffine(x, s, g.Const(tensor.New(tensor.Float64, 3, 1))) }, "channel_affine", "do not fit"},
		"vector":  {func() { graph.ChannelAffine(g.Const(tensor.New(tensor.Float64, 3)), s, nil) }, "channel_scale", "do not fit"},
		"dtype":   {func() { graph.ChannelAffine(x, g.Const(tensor.New(tensor.Float32, 3)), nil) }, "channel_scale", "mixed dtypes"},
		"dot":     {func() { graph.ChannelDot(x, g.Const(tensor.New(tensor.Float64, 4, 3))) }, "channel_dot", "must have one shape"},
		"dotType": {func() { graph.ChannelDot(x, g.Const(tensor.New(tensor.Float32, 4, 3, 2))) }, "channel_dot", "mixed dtypes"},
		"moments": {func() { graph.ChannelMoments(s) }, "channel_moments", "must have shape (N, C, ...)"},
		"empty":   {func() { graph.ChannelMoments(g.Const(tensor.New(tensor.Float64, 0, 3))) }, "channel_moments", "no elements per channel"},
	} {
		e := graphError(t, c.f)
		require.NotNil(t, e, name)
		assert.Equal(t, c.op, e.Op, name)
		assert.Contains(t, e.Error(), c.want, name)
	}
}
