package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// NonFinite finds every NaN and ±Inf, in either dtype, at the start, the
// end and in the tail that the four-way loop leaves, and through a
// transposed view in row-major order.
func TestNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, dt := range []DType{Float32, Float64} {
		for _, c := range []struct {
			name         string
			vals         []float64
			count, first int
			value        float64
		}{
			{"finite", []float64{1, -2, 3e30, 0, 5, 6, 7}, 0, -1, 0},
			{"empty", nil, 0, -1, 0},
			{"NaN first", []float64{nan, 1, 2, 3, 4}, 1, 0, nan},
			{"-Inf in the tail", []float64{1, 2, 3, 4, 5, -inf}, 1, 5, -inf},
			{"three", []float64{1, inf, 2, nan, 3, 4, 5, 6, -inf}, 3, 1, inf},
		} {
			x := FromValues(dt, c.vals, len(c.vals))
			count, first, value := NonFinite(x)
			assert.Equal(t, c.count, count, "%v %s", dt, c.name)
			assert.Equal(t, c.first, first, "%v %s", dt, c.name)
			if math.IsNaN(c.value) {
				assert.True(t, math.IsNaN(value), "%v %s: %g", dt, c.name, value)
			} else {
				assert.Equal(t, c.value, value, "%v %s", dt, c.name)
			}
		}
		// (2, 3) transposed: row-major order of the view is 0 3 1 4 2 5.
		m := Transpose(FromValues(dt, []float64{0, 1, 2, 3, inf, 5}, 2, 3))
		count, first, _ := NonFinite(m)
		assert.Equal(t, 1, count, "%v view", dt)
		assert.Equal(t, 3, first, "%v view: element (1, 1) of the (3, 2) view", dt)
	}
	x := Ones(Float32, 1000)
	assert.Zero(t, testing.AllocsPerRun(10, func() { NonFinite(x) }), "a contiguous tensor is read in place")
}

// NonFinite finds a single NaN or ±Inf wherever it sits in long tensors:
// in each lane of each of the vector kernel's four accumulators, in the
// last full block and in the scalar tail after it, with the largest
// finite values elsewhere (whose x − x is still 0).
func TestNonFiniteEveryPosition(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		big := math.MaxFloat64
		if dt == Float32 {
			big = math.MaxFloat32
		}
		for _, n := range []int{31, 32, 33, 64, 100, 1000} {
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = big * float64(1-2*(i%2))
			}
			x := FromValues(dt, vals, n)
			count, first, _ := NonFinite(x)
			assert.Equal(t, 0, count, "%v n=%d all finite", dt, n)
			assert.Equal(t, -1, first)
			for p := range n {
				for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
					y := x.Clone()
					y.SetAt(bad, p)
					count, first, value := NonFinite(y)
					if count != 1 || first != p || !(math.IsNaN(bad) && math.IsNaN(value) || value == bad) {
						t.Fatalf("%v n=%d: %g at %d: got count %d first %d value %g", dt, n, bad, p, count, first, value)
					}
				}
			}
		}
	}
}

// AllFinite is false as soon as one tensor holds a NaN or an infinity.
func TestAllFinite(t *testing.T) {
	a, b := Full(Float32, 1.5, 3, 4), Full(Float64, -2, 5)
	if !AllFinite(a, b) || !AllFinite() {
		t.Fatal("AllFinite of finite tensors is false")
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		c := b.Clone()
		c.SetAt(v, 4)
		if AllFinite(a, c) || AllFinite(Transpose(a), c) {
			t.Errorf("AllFinite with %v = true", v)
		}
	}
}
