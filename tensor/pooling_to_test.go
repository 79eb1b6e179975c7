package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The To forms must overwrite whatever dst holds (a recycled buffer) and
// reuse argmax's storage. Expected values are the hand-worked 2×2 case of
// TestPool2DHandWorked: windows {1,5,3,4}, {2,0,8,−7}, {−9,6,2,0}, {1,1,3,−4}.
func TestPool2DToReusesBuffers(t *testing.T) {
	p := PoolParams{Kernel: [2]int{2, 2}}
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := FromValues(dt, cvPoolX, 1, 1, 4, 4)
			dst := Full(dt, 99, 1, 1, 2, 2)
			buf := make([]int, 10)
			y, argmax := MaxPool2DTo(dst, buf, x, p)
			require.Same(t, dst, y)
			require.Equal(t, []int{1, 6, 9, 14}, argmax)
			require.Same(t, &buf[0], &argmax[0])
			cvAssertClose(t, []float64{5, 8, 6, 3}, y)

			dx := Full(dt, 7, 1, 1, 4, 4)
			dy := FromValues(dt, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
			require.Same(t, dx, MaxPool2DGradTo(dx, dy, argmax, x.Shape()))
			cvAssertClose(t, []float64{0, 1, 0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4, 0}, dx)

			a := Full(dt, -3, 1, 1, 2, 2)
			require.Same(t, a, AvgPool2DTo(a, x, p))
			cvAssertClose(t, []float64{13.0 / 4, 3.0 / 4, -1.0 / 4, 1.0 / 4}, a)

			// Each dy value spreads a quarter of itself over its window.
			ga := Full(dt, 5, 1, 1, 4, 4)
			require.Same(t, ga, AvgPool2DGradTo(ga, FromValues(dt, []float64{4, 8, 12, 16}, 1, 1, 2, 2), x.Shape(), p))
			cvAssertClose(t, []float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, ga)

			// A strided (transposed) destination is written through.
			tdst := Transpose(Zeros(dt, 1, 1, 2, 2))
			MaxPool2DTo(tdst, nil, x, p)
			cvAssertClose(t, []float64{5, 8, 6, 3}, tdst)

			require.Panics(t, func() { MaxPool2DTo(Zeros(dt, 1, 1, 3, 2), nil, x, p) })
		})
	}
}
