package tensor_test

// Shape sizes used to be multiplied without an overflow check: absurd shapes
// wrapped around to a small size (a (2³², 2³²) tensor with no storage) or
// reached make as a runtime panic. Each call below must now panic with a
// *tensor.Error naming the op and the offending shape.

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

// fixTensorError runs f and returns the *tensor.Error it panics with,
// failing the test for no panic or any other panic.
func fixTensorError(t *testing.T, f func()) (e *tensor.Error) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "expected a panic")
		err, ok := r.(error)
		require.True(t, ok, "panic value %v (%T) is not an error", r, r)
		require.True(t, errors.As(err, &e), "panic %v (%T) is not a *tensor.Error", r, r)
	}()
	f()
	return nil
}

func TestShapeOverflowFails(t *testing.T) {
	const big = 1 << 32
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		one := func() *tensor.Tensor { return tensor.Ones(dt, 1, 1) }
		cases := []struct {
			name, op, shape string
			f               func()
		}{
			{"New 2^50", "New", "(1125899906842624,)", func() { tensor.New(dt, 1<<50) }},
			{"New 2^32 x 2^32", "New", "(4294967296, 4294967296)", func() { tensor.New(dt, big, big) }},
			{"Zeros wraps to 0", "New", "(4294967296, 4294967296, 2)", func() { tensor.Zeros(dt, big, big, 2) }},
			{"Full", "New", "(4294967296, 4294967296)", func() { tensor.Full(dt, 1, big, big) }},
			{"Expand", "Expand", "(4294967296, 4294967296)", func() { tensor.Expand(one(), big, big) }},
			{"Reshape size 0", "Reshape", "(4611686018427387904, 4)", func() { tensor.Reshape(tensor.New(dt, 0), 1<<62, 4) }},
			{"Add broadcast", "", "(4294967296, 4294967296)", func() {
				tensor.Add(tensor.Expand(one(), big, 1), tensor.Expand(one(), 1, big))
			}},
			{"BroadcastShapes", "probe", "(4294967296, 4294967296)", func() {
				tensor.BroadcastShapes("probe", []int{big, 1}, []int{1, big})
			}},
			{"OneHot", "OneHot", "(1, 4611686018427387904)", func() { tensor.OneHot(dt, []int{0}, 1<<62) }},
			{"Pad", "Pad", "(1,)", func() { tensor.Pad(tensor.Ones(dt, 1), [][2]int{{1 << 62, 1 << 62}}, 0) }},
			{"Pad sum", "Pad", "(562949953421313,)", func() { tensor.Pad(tensor.Ones(dt, 1), [][2]int{{1 << 48, 1 << 48}}, 0) }},
		}
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				e := fixTensorError(t, c.f)
				if c.op != "" {
					assert.Equal(t, c.op, e.Op)
				}
				assert.NotContains(t, e.Msg, "negative", "an overflow is not a negative dimension")
				assert.Contains(t, e.Msg, c.shape)
			})
		}
	}
}

// Shapes at the cap's scale that do fit are still accepted: a view does
// not allocate, and a size-0 shape has no storage to size.
func TestShapeLargeViewsStillWork(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		v := tensor.Expand(tensor.Ones(dt, 1, 1), 1<<20, 1<<20)
		assert.Equal(t, 1<<40, v.Size())
		assert.Equal(t, 1.0, v.At(1<<20-1, 1<<20-1))
		z := tensor.New(dt, 0, 1<<40)
		assert.Equal(t, 0, z.Size())
		assert.Equal(t, []int{0, 7}, tensor.Reshape(tensor.New(dt, 0), 0, 7).Shape())
	}
}
