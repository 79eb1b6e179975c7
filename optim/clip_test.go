package optim

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

func TestClipByValue(t *testing.T) {
	for _, dt := range numtest.DTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a := vals(dt, 0.5, -3, 2, -0.1)
			b := tensor.FromValues(dt, []float64{1, -1, 1.5, math.NaN()}, 2, 2)
			ClipByValue([]*tensor.Tensor{a, b}, 1)
			require.Equal(t, roundTo(dt, []float64{0.5, -1, 1, -0.1}), a.Values())
			got := b.Values()
			require.Equal(t, []float64{1, -1, 1}, got[:3])
			require.True(t, math.IsNaN(got[3]), "NaN stays NaN")
			require.Zero(t, testing.AllocsPerRun(10, func() { ClipByValue([]*tensor.Tensor{a, b}, 1) }))
		})
	}
}

// roundTo rounds expected float64 literals the way a float32 tensor stores
// them, so exact comparisons are fair.
func roundTo(dt tensor.DType, v []float64) []float64 {
	if dt == tensor.Float64 {
		return v
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}

func TestClipByGlobalNorm(t *testing.T) {
	cases := []struct {
		name    string
		maxNorm float64
		want    []float64 // (a, b) after clipping
	}{
		// ‖(3, 4, 12)‖ = √(9 + 16 + 144) = 13; 6.5/(13 + 1e-6) = 0.49999996153846
		{"clipped", 6.5, []float64{1.4999998846153937, 1.9999998461538582, 5.999999538461575}},
		// 20/(13 + 1e-6) > 1: unchanged
		{"below", 20, []float64{3, 4, 12}},
		// 13/(13 + 1e-6) < 1: PyTorch scales even at the limit
		{"at the limit", 13, []float64{3 * 13 / 13.000001, 4 * 13 / 13.000001, 12 * 13 / 13.000001}},
	}
	for _, c := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(fmt.Sprintf("%s/%v", c.name, dt), func(t *testing.T) {
				a := vals(dt, 3, 4)
				b := tensor.FromValues(dt, []float64{12}, 1, 1)
				norm := ClipByGlobalNorm([]*tensor.Tensor{a, b}, c.maxNorm)
				require.InDelta(t, 13, norm, 1e-12)
				got := append(a.Values(), b.Values()...)
				require.InDeltaSlice(t, c.want, got, 4*numtest.Tol(dt))
			})
		}
	}
}

func TestClipByGlobalNormMixedAndEdgeCases(t *testing.T) {
	// Mixed numtest.DTypes in one call: ‖(0.6, 0.8)‖ = 1, clipped to 0.5.
	a := vals(tensor.Float32, 0.6)
	b := vals(tensor.Float64, 0.8)
	require.InDelta(t, 1, ClipByGlobalNorm([]*tensor.Tensor{a, b}, 0.5), 1e-7)
	require.InDelta(t, 0.3, a.Item(), 1e-6)
	require.InDelta(t, 0.4, b.Item(), 1e-6)
	require.Zero(t, testing.AllocsPerRun(10, func() { ClipByGlobalNorm([]*tensor.Tensor{a, b}, 0.5) }))

	for _, dt := range numtest.DTypes {
		// A non-finite norm leaves the gradients alone for Step to refuse.
		c := vals(dt, math.Inf(1), 1)
		require.True(t, math.IsInf(ClipByGlobalNorm([]*tensor.Tensor{c}, 1), 1))
		require.Equal(t, 1.0, c.At(1))
		// No gradients: norm 0.
		require.Equal(t, 0.0, ClipByGlobalNorm(nil, 1))
	}
	require.Panics(t, func() { ClipByGlobalNorm([]*tensor.Tensor{a}, -1) })
	require.Panics(t, func() { ClipByValue([]*tensor.Tensor{tensor.Transpose(tensor.Zeros(tensor.Float64, 2, 3))}, 1) })
}
