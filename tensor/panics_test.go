package tensor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicError runs f and returns the *Error it panics with, failing the
// test if it does not panic with one.
func panicError(t *testing.T, f func()) (got *Error) {
	t.Helper()
	func() {
		defer func() {
			r := recover()
			require.NotNil(t, r, "expected a panic")
			err, ok := r.(error)
			require.True(t, ok, "panic value %v is not an error", r)
			require.True(t, errors.As(err, &got), "panic %v is not a *Error", r)
		}()
		f()
	}()
	return got
}

// requirePanics checks that f panics with a *Error whose message contains
// every fragment.
func requirePanics(t *testing.T, f func(), fragments ...string) {
	t.Helper()
	e := panicError(t, f)
	for _, s := range fragments {
		assert.Contains(t, e.Error(), s)
	}
}

// requireOpPanics is requirePanics for a *Error of op.
func requireOpPanics(t *testing.T, op string, f func(), fragments ...string) {
	t.Helper()
	e := panicError(t, f)
	assert.Equal(t, op, e.Op)
	for _, s := range fragments {
		assert.Contains(t, e.Error(), s)
	}
}

// Broadcastable agrees with BroadcastShapes: true exactly where the latter
// returns a shape instead of panicking.
func TestBroadcastable(t *testing.T) {
	for _, c := range []struct {
		shapes [][]int
		ok     bool
		want   []int
	}{
		{[][]int{{2, 1, 3}, {4, 1}}, true, []int{2, 4, 3}},
		{[][]int{{}, {5}}, true, []int{5}},
		{[][]int{{3}, {1, 3}, {2, 1}}, true, []int{2, 3}},
		{[][]int{{2, 3}, {3, 2}}, false, nil},
		{[][]int{{4}, {1}, {3}}, false, nil},
	} {
		assert.Equal(t, c.ok, Broadcastable(c.shapes...), "%v", c.shapes)
		if c.ok {
			assert.Equal(t, c.want, BroadcastShapes("test", c.shapes...))
		} else {
			requireOpPanics(t, "test", func() { BroadcastShapes("test", c.shapes...) }, "do not broadcast")
		}
	}
}
