package nn_test

// A layer's misuse panics where the user called the layer: the message
// names the layer (or, where the layer leaves the check to graph, the
// graph op), the shapes, and the caller's file:line.

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/nn"
	"github.com/gradus-ml/gradus/tensor"
)

// here returns the file:line it is called from.
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

// misuse runs f and returns the *tensor.Error it panics with.
func misuse(t *testing.T, f func()) (e *tensor.Error) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "expected a panic")
		var ok bool
		e, ok = r.(*tensor.Error)
		require.True(t, ok, "panic value %v (%T) is not a *tensor.Error", r, r)
	}()
	f()
	return nil
}

func requireNames(t *testing.T, e *tensor.Error, op, site string, fragments ...string) {
	t.Helper()
	assert.Equal(t, op, e.Op)
	assert.Equal(t, site, e.Caller, "the caller's file:line")
	for _, f := range fragments {
		assert.Contains(t, e.Msg, f)
	}
}

func TestLinearMisuseNamesLayerShapesAndCaller(t *testing.T) {
	l := nn.NewLinear(tensor.NewRNG(1), 784, 256, true, tensor.Float32)
	g := graph.New()
	e, site := misuse(t, func() { l.Forward(g.Const(tensor.Zeros(tensor.Float32, 32, 100))) }), here()
	requireNames(t, e, "Linear(784→256)", site, "(32, 100)", "(..., 784)")
	e, site = misuse(t, func() { l.Forward(g.Const(tensor.Zeros(tensor.Float64, 32, 784))) }), here()
	requireNames(t, e, "Linear(784→256)", site, "(32, 784)", "float64", "float32")
	e, site = misuse(t, func() { l.Forward(nil) }), here()
	requireNames(t, e, "Linear(784→256)", site, "nil input")
}

func TestConv2DMisuseNamesShapesAndCaller(t *testing.T) {
	c := nn.NewConv2D(tensor.NewRNG(1), 3, 2, [2]int{3, 3}, nn.Conv2DOptions{})
	g := graph.New()
	e, site := misuse(t, func() { c.Forward(g.Const(tensor.Zeros(tensor.Float32, 1, 4, 5, 5))) }), here()
	requireNames(t, e, c.String(), site, "(1, 4, 5, 5)", "(N, 3, H, W)")
	// An input smaller than the kernel: graph.Conv2D's check, in its terms.
	e, site = misuse(t, func() { c.Forward(g.Const(tensor.Zeros(tensor.Float32, 1, 3, 2, 2))) }), here()
	requireNames(t, e, "conv2d", site, "smaller than", "(1, 3, 2, 2) float32", "(2, 3, 3, 3) float32")
}

func TestPoolingMisuseNamesShapesAndCaller(t *testing.T) {
	g := graph.New()
	p := tensor.PoolParams{Kernel: [2]int{2, 2}}
	x3 := g.Const(tensor.Zeros(tensor.Float32, 3, 4, 4))
	e, site := misuse(t, func() { nn.NewMaxPool2D(p).Forward(x3) }), here()
	requireNames(t, e, "maxpool2d", site, "4-D", "(3, 4, 4) float32")
	e, site = misuse(t, func() { nn.NewAvgPool2D(p).Forward(x3) }), here()
	requireNames(t, e, "avgpool2d", site, "4-D", "(3, 4, 4) float32")
	tiny := g.Const(tensor.Zeros(tensor.Float32, 1, 1, 1, 1))
	e, site = misuse(t, func() { nn.NewMaxPool2D(p).Forward(tiny) }), here()
	requireNames(t, e, "maxpool2d", site, "smaller than the 2×2 window", "(1, 1, 1, 1) float32")
	e, site = misuse(t, func() { nn.NewAvgPool2D(p).Forward(nil) }), here()
	requireNames(t, e, "avgpool2d", site, "nil")
}
