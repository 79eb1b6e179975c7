package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A destination that partly overlaps an operand, or is a broadcast view,
// must be refused rather than give a silently wrong result.
func TestDestinationOverlapIsRefused(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		a := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
		requirePanics(t, func() { AddTo(Transpose(a), a, Zeros(dt, 2, 2)) }, "Add")
		assert.Equal(t, []float64{1, 2, 3, 4}, a.Values(), "%v: a untouched", dt)

		run := FromValues(dt, []float64{1, 1, 1, 1, 1})
		requirePanics(t, func() { AddTo(Slice(run, 0, 1, 5, 1), Slice(run, 0, 0, 4, 1), Ones(dt, 4)) }, "Add")

		x := FromValues(dt, []float64{0})
		requirePanics(t, func() { AddTo(Expand(x, 3), FromValues(dt, []float64{1, 2, 3}), Zeros(dt, 3)) }, "broadcast view")
		assert.Equal(t, []float64{0}, x.Values())

		s := FromValues(dt, []float64{1, 2, 3})
		requirePanics(t, func() { ScatterAddTo(s, s, 0, []int{2, 1, 0}) }, "ScatterAddTo")

		// The identical view still works in place: (1,2,3,4) + 1.
		AddTo(a, a, Ones(dt, 2, 2))
		assert.Equal(t, []float64{2, 3, 4, 5}, a.Values(), "%v", dt)
	}
}

// A reduction whose destination lies inside its input reads the input
// before writing: the column sums of [[1, 2], [3, 4]] are [4, 6].
func TestReductionIntoOverlappingDestination(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		a := FromValues(dt, []float64{1, 2, 3, 4}, 2, 2)
		row := Slice(a, 0, 0, 1, 1) // the first row, shape (1, 2)
		SumInto(row, a, []int{0}, true)
		assert.Equal(t, []float64{4, 6, 3, 4}, a.Values(), "%v", dt)
	}
}

// Values 1e6 and 1e6+1 alternate: the population variance is exactly 0.25
// (each is 0.5 from the mean), and every value is exact in float32.
func TestVarianceWithLargeMean(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = 1e6 + float64(i%2)
	}
	for _, dt := range []DType{Float32, Float64} {
		got := Variance(FromValues(dt, v), nil, false, 0).Item()
		assert.InDelta(t, 0.25, got, 1e-3, "%v", dt)
	}
}

func TestArangeRefusesEndlessRanges(t *testing.T) {
	requirePanics(t, func() { Arange(Float64, 0, 1e300, 1) }, "Arange")
	requirePanics(t, func() { Arange(Float64, 0, math.Inf(1), 1) }, "Arange")
	requirePanics(t, func() { Arange(Float64, 0, math.NaN(), 1) }, "Arange")
	assert.Equal(t, []float64{0, 0.5, 1, 1.5}, Arange(Float64, 0, 2, 0.5).Values())
}

// CastTo converts into a given destination, across dtypes or not, and
// refuses a destination of another shape.
func TestCastTo(t *testing.T) {
	x := FromFloat64s([]float64{1, 1.0000001, 3}, 3)
	dst := New(Float32, 3)
	if got := CastTo(dst, x).Values(); got[0] != 1 || got[1] != float64(float32(1.0000001)) || got[2] != 3 {
		t.Errorf("CastTo = %v", got)
	}
	same := New(Float64, 3)
	if got := CastTo(same, x).Values(); got[1] != 1.0000001 {
		t.Errorf("CastTo of one dtype = %v", got)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("CastTo into a (2) destination: no panic")
		}
	}()
	CastTo(New(Float32, 2), x)
}
