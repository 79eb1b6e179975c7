package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// By hand: y = (0.2, 0.3, 0.5), v = (1, 2, 3): Σ v·y = 2.3, so
// y ⊙ (v − 2.3) = (−0.26, −0.09, 0.35); the same numbers as the columns of
// a matrix along axis 0 (the strided kernel) and through a transposed view.
func TestSoftmaxGradHand(t *testing.T) {
	want := []float64{-0.26, -0.09, 0.35}
	for _, dt := range shDTypes {
		tol := max(shTol(dt), 1e-12)
		y := FromValues(dt, []float64{0.2, 0.3, 0.5}, 3)
		v := FromValues(dt, []float64{1, 2, 3}, 3)
		shAssertValues(t, want, SoftmaxGrad(y, v, 0), tol, dt)
		ym := FromValues(dt, []float64{0.2, 0.2, 0.3, 0.3, 0.5, 0.5}, 3, 2)
		vm := FromValues(dt, []float64{1, 1, 2, 2, 3, 3}, 3, 2)
		col := []float64{want[0], want[0], want[1], want[1], want[2], want[2]}
		shAssertValues(t, col, SoftmaxGrad(ym, vm, 0), tol, dt)
		rows := append(append([]float64{}, want...), want...)
		shAssertValues(t, rows, SoftmaxGrad(Transpose(ym), Transpose(vm), -1), tol, dt)
	}
}

// The kernel split over goroutines gives each slice what a serial call on
// that slice alone gives, bit for bit.
func TestSoftmaxGradSplitMatchesSerial(t *testing.T) {
	rng := NewRNG(10)
	for _, dt := range cvDTypes {
		y := Softmax(rng.Normal(dt, 0, 3, 600, 4, 64), 2) // 153,600 elements: split
		v := rng.Normal(dt, 0, 1, 600, 4, 64)
		for _, axis := range []int{2, 1} {
			got := SoftmaxGrad(y, v, axis)
			for _, o := range []int{0, 301, 599} {
				ys, vs := Slice(y, 0, o, o+1, 1).Contiguous(), Slice(v, 0, o, o+1, 1).Contiguous()
				assertSameBits(t, SoftmaxGrad(ys, vs, axis), Slice(got, 0, o, o+1, 1).Contiguous())
			}
		}
	}
}

func TestSoftmaxGradRejectsBadOperands(t *testing.T) {
	y := New(Float64, 2, 3)
	requireOpPanics(t, "SoftmaxGrad", func() { SoftmaxGrad(y, New(Float64, 3, 2), 1) }, "one shape", "(3, 2)")
	requireOpPanics(t, "SoftmaxGrad", func() { SoftmaxGrad(y, New(Float32, 2, 3), 1) }, "float32")
	requireOpPanics(t, "SoftmaxGrad", func() { SoftmaxGrad(y, y, 2) }, "axis 2")
	require.NotPanics(t, func() { SoftmaxGrad(y, y, -1) })
}
