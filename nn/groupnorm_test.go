package nn

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

type normCase struct {
	X, W, B, Y []float64
	Shape      []int
}

// GroupNorm, InstanceNorm and Conv1D against PyTorch, RMSNorm against its
// formula evaluated by NumPy (testdata/make_norms.py).
func TestNormsAndConv1DMatchReferences(t *testing.T) {
	b, err := os.ReadFile("testdata/norms.json")
	require.NoError(t, err)
	var f map[string]normCase
	require.NoError(t, json.Unmarshal(b, &f))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s(f["group"].X, 2, 6, 3, 4))

	gn := NewGroupNorm(3, 6, 1e-5, true, tensor.Float64)
	copy(gn.Weight.Value.Float64s(), f["group"].W)
	copy(gn.Bias.Value.Float64s(), f["group"].B)
	numtest.Close(t, f["group"].Y, gn.Forward(x).Value(), 1e-12, "group")

	in := NewInstanceNorm(6, 1e-5, true, tensor.Float64)
	copy(in.Weight.Value.Float64s(), f["group"].W)
	copy(in.Bias.Value.Float64s(), f["group"].B)
	numtest.Close(t, f["instance"].Y, in.Forward(x).Value(), 1e-12, "instance")

	rms := NewRMSNorm([]int{5}, 1e-6, true, tensor.Float64)
	copy(rms.Weight.Value.Float64s(), f["rms"].W)
	numtest.Close(t, f["rms"].Y, rms.Forward(g.Const(tensor.FromFloat64s(f["rms"].X, 3, 5))).Value(), 1e-12, "rms")

	c := NewConv1D(tensor.NewRNG(1), 4, 6, 3, Conv1DOptions{Stride: 2, Padding: 1, Dilation: 2, Groups: 2, DType: tensor.Float64})
	copy(c.Weight.Value.Float64s(), f["conv1d"].W)
	copy(c.Bias.Value.Float64s(), f["conv1d"].B)
	y := c.Forward(g.Const(tensor.FromFloat64s(f["conv1d"].X, 2, 4, 9)))
	require.Equal(t, f["conv1d"].Shape, y.Shape())
	numtest.Close(t, f["conv1d"].Y, y.Value(), 1e-12, "conv1d")
}

func TestNormGradients(t *testing.T) {
	rng := tensor.NewRNG(5)
	gn := NewGroupNorm(2, 4, 1e-5, true, tensor.Float64)
	gradCheckModule(t, "GroupNorm", gn.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 4, 3)},
		func(xs []*graph.Node) *graph.Node { return gn.Forward(xs[0]) }, 2)
	rms := NewRMSNorm([]int{4}, 1e-6, true, tensor.Float64)
	gradCheckModule(t, "RMSNorm", rms.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3, 4)},
		func(xs []*graph.Node) *graph.Node { return rms.Forward(xs[0]) }, 2)
	c := NewConv1D(rng, 2, 3, 2, Conv1DOptions{DType: tensor.Float64})
	gradCheckModule(t, "Conv1D", c.Params(), []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 1, 2, 5)},
		func(xs []*graph.Node) *graph.Node { return c.Forward(xs[0]) }, 2)
}
