package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gt "gorgonia.org/tensor"
)

// cvBacking returns 1, 2, ..., n as a []float32 or []float64 for gorgonia.
func cvBacking(dt DType, n int) any {
	if dt == Float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(i + 1)
		}
		return s
	}
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}

// cvGtValue converts v to the Go type gorgonia expects for dt.
func cvGtValue(dt DType, v float64) any {
	if dt == Float32 {
		return float32(v)
	}
	return v
}

func TestFromDenseLayouts(t *testing.T) {
	cases := []struct {
		name   string
		make   func(dt DType) *gt.Dense
		shape  []int
		want   []float64
		shared bool
	}{
		{"row-major 2x3", func(dt DType) *gt.Dense {
			return gt.New(gt.WithShape(2, 3), gt.WithBacking(cvBacking(dt, 6)))
		}, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}, true},
		{"1-D", func(dt DType) *gt.Dense {
			return gt.New(gt.WithShape(4), gt.WithBacking(cvBacking(dt, 4)))
		}, []int{4}, []float64{1, 2, 3, 4}, true},
		{"scalar", func(dt DType) *gt.Dense {
			return gt.New(gt.FromScalar(cvGtValue(dt, 2.5)))
		}, []int{}, []float64{2.5}, true},
		{"3-D", func(dt DType) *gt.Dense {
			return gt.New(gt.WithShape(2, 2, 2), gt.WithBacking(cvBacking(dt, 8)))
		}, []int{2, 2, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8}, true},
		// Rows 1..2 of a 4×3 matrix are contiguous in the parent's storage.
		{"row-slice view", func(dt DType) *gt.Dense {
			d := gt.New(gt.WithShape(4, 3), gt.WithBacking(cvBacking(dt, 12)))
			v, err := d.Slice(gt.S(1, 3))
			require.NoError(t, err)
			return v.(*gt.Dense)
		}, []int{2, 3}, []float64{4, 5, 6, 7, 8, 9}, true},
		// Columns 1..2 of a 3×4 matrix skip elements: copied.
		{"column-slice view", func(dt DType) *gt.Dense {
			d := gt.New(gt.WithShape(3, 4), gt.WithBacking(cvBacking(dt, 12)))
			v, err := d.Slice(nil, gt.S(1, 3))
			require.NoError(t, err)
			return v.(*gt.Dense)
		}, []int{3, 2}, []float64{2, 3, 6, 7, 10, 11}, false},
		// A lazy transpose only permutes gorgonia's strides.
		{"transposed", func(dt DType) *gt.Dense {
			d := gt.New(gt.WithShape(2, 3), gt.WithBacking(cvBacking(dt, 6)))
			require.NoError(t, d.T())
			return d
		}, []int{3, 2}, []float64{1, 4, 2, 5, 3, 6}, false},
		// AsFortran takes row-major values and stores them column-major.
		{"column-major", func(dt DType) *gt.Dense {
			return gt.New(gt.WithShape(2, 3), gt.AsFortran(cvBacking(dt, 6)))
		}, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}, false},
	}
	for _, dt := range cvDTypes {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				d := c.make(dt)
				x, err := FromDense(d)
				require.NoError(t, err)
				require.Equal(t, dt, x.DType())
				require.Equal(t, c.shape, x.Shape())
				require.Equal(t, c.want, x.Values())

				// Write through gorgonia at the first element and look for it.
				idx := make([]int, len(c.shape))
				require.NoError(t, d.SetAt(cvGtValue(dt, -100), idx...))
				if c.shared {
					assert.Equal(t, -100.0, x.At(idx...), "gorgonia write visible")
					x.SetAt(-200, idx...)
					v, err := d.At(idx...)
					require.NoError(t, err)
					assert.Equal(t, cvGtValue(dt, -200), v, "gradus write visible")
				} else {
					assert.Equal(t, c.want[0], x.At(idx...), "copy must not follow gorgonia writes")
				}
			})
		}
	}
}

func TestFromDenseErrors(t *testing.T) {
	_, err := FromDense(gt.New(gt.WithShape(2), gt.WithBacking([]int{1, 2})))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tensor.FromDense: dtype int")

	_, err = FromDense(nil)
	require.Error(t, err)

	masked := gt.New(gt.WithShape(2), gt.WithBacking([]float64{1, 2}, []bool{false, true}))
	_, err = FromDense(masked)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "masked")
}

func TestToDense(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String()+"/contiguous", func(t *testing.T) {
			x := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
			d := x.ToDense()
			require.Equal(t, gt.Shape{2, 3}, d.Shape())
			for i := 0; i < 2; i++ {
				for j := 0; j < 3; j++ {
					v, err := d.At(i, j)
					require.NoError(t, err)
					assert.Equal(t, cvGtValue(dt, float64(3*i+j+1)), v)
				}
			}
			require.NoError(t, d.SetAt(cvGtValue(dt, 9), 1, 2))
			assert.Equal(t, 9.0, x.At(1, 2), "gorgonia write visible")
			x.SetAt(8, 0, 1)
			v, _ := d.At(0, 1)
			assert.Equal(t, cvGtValue(dt, 8), v, "gradus write visible")
		})
		t.Run(dt.String()+"/offset view", func(t *testing.T) {
			// Row 1 of a 3×2 matrix: contiguous with a non-zero offset.
			base := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
			row := &Tensor{dtype: dt, shape: []int{2}, strides: []int{1}, offset: 2, f32: base.f32, f64: base.f64}
			d := row.ToDense()
			require.Equal(t, gt.Shape{2}, d.Shape())
			v, _ := d.At(1)
			assert.Equal(t, cvGtValue(dt, 4), v)
			require.NoError(t, d.SetAt(cvGtValue(dt, 0), 0))
			assert.Equal(t, 0.0, base.At(1, 0), "shared with the parent")
		})
		t.Run(dt.String()+"/strided copy", func(t *testing.T) {
			// Column 1 of a 3×2 matrix: stride 2, so ToDense copies.
			base := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 3, 2)
			col := &Tensor{dtype: dt, shape: []int{3}, strides: []int{2}, offset: 1, f32: base.f32, f64: base.f64}
			d := col.ToDense()
			require.Equal(t, gt.Shape{3}, d.Shape())
			for i, want := range []float64{2, 4, 6} {
				v, _ := d.At(i)
				assert.Equal(t, cvGtValue(dt, want), v)
			}
			require.NoError(t, d.SetAt(cvGtValue(dt, 0), 0))
			assert.Equal(t, 2.0, base.At(0, 1), "copy is independent")
		})
		t.Run(dt.String()+"/scalar", func(t *testing.T) {
			x := Scalar(dt, 3.5)
			d := x.ToDense()
			assert.True(t, d.IsScalar())
			assert.Equal(t, cvGtValue(dt, 3.5), d.ScalarValue())
			x.SetAt(4.5)
			assert.Equal(t, cvGtValue(dt, 4.5), d.ScalarValue(), "shared")
			back, err := FromDense(d)
			require.NoError(t, err)
			assert.Equal(t, 0, back.Dim())
			assert.Equal(t, 4.5, back.Item())
		})
		t.Run(dt.String()+"/round trip shares", func(t *testing.T) {
			x := FromValues(dt, []float64{1, 2, 3}, 3)
			y, err := FromDense(x.ToDense())
			require.NoError(t, err)
			y.SetAt(7, 2)
			assert.Equal(t, 7.0, x.At(2))
		})
	}
}
