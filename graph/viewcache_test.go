package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Views are replayed across Reset when they come from the same tensor with
// the same parameters, and rebuilt otherwise; either way they show the
// current data. x = [[0, 1, 2], [3, 4, 5]]: columns 1..2 are 1, 2, 4, 5.
func TestViewReplayAcrossSteps(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			g := graph.New()
			x1 := tensor.FromValues(dt, []float64{0, 1, 2, 3, 4, 5}, 2, 3)
			x2 := tensor.FromValues(dt, []float64{10, 11, 12, 13, 14, 15}, 2, 3)
			step := func(x *tensor.Tensor, stop int) *tensor.Tensor {
				g.Reset()
				s := graph.Slice(g.Const(x), 1, 1, stop, 1)
				return graph.Reshape(s, -1).Value()
			}
			first := step(x1, 3)
			assert.Equal(t, []float64{1, 2, 4, 5}, first.Values())
			again := step(x1, 3)
			assert.Same(t, first, again, "same source and parameters: the view is replayed")
			assert.Equal(t, []float64{11, 12, 14, 15}, step(x2, 3).Values(), "another source")
			assert.Equal(t, []float64{1, 4}, step(x1, 2).Values(), "other parameters")

			// A replayed view shares storage, so in-place updates show.
			step(x1, 3)
			x1.SetAt(7, 0, 1)
			assert.Equal(t, []float64{7, 2, 4, 5}, step(x1, 3).Values())
		})
	}
}

// AllocInts hands out scratch index buffers that Reset recycles.
func TestAllocIntsRecycled(t *testing.T) {
	g := graph.New()
	a := g.AllocInts(1000)
	require.Len(t, a, 1000)
	a[999] = 42
	g.Reset()
	b := g.AllocInts(1000)
	require.Len(t, b, 1000)
	assert.Same(t, &a[0], &b[0], "the same step's requests reuse the same memory")
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		g.Reset()
		g.AllocInts(1000)
	}))
}

// AllocHost on a CPU graph is Alloc: zeroed, recycled at Reset, with no
// more allocations in a steady loop than Alloc (the tensor's header).
func TestAllocHostRecycledOnCPU(t *testing.T) {
	g := graph.New()
	a := g.AllocHost(tensor.Float32, 4, 5)
	require.Equal(t, []int{4, 5}, a.Shape())
	assert.Equal(t, tensor.CPU, a.Device())
	a.Float32s()[7] = 3
	g.Reset()
	b := g.AllocHost(tensor.Float32, 4, 5)
	assert.Same(t, &a.Float32s()[0], &b.Float32s()[0], "the same step's requests reuse the same memory")
	assert.Zero(t, b.Float32s()[7], "recycled memory comes back zeroed")
	host := testing.AllocsPerRun(10, func() {
		g.Reset()
		g.AllocHost(tensor.Float32, 4, 5)
	})
	pool := testing.AllocsPerRun(10, func() {
		g.Reset()
		g.Alloc(tensor.Float32, 4, 5)
	})
	assert.LessOrEqual(t, host, pool)
	assert.LessOrEqual(t, host, 1.0)
}
