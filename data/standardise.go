package data

import (
	"math"

	"github.com/gradus-ml/gradus/tensor"
)

// Stats holds per-column statistics of a (rows, columns) table: the mean
// and the population standard deviation (ddof = 0, as scikit-learn's
// StandardScaler).
type Stats struct {
	Mean []float64
	Std  []float64
}

// Standardise computes each column's mean and population standard deviation
// over the rows of x, a contiguous 2-D float32 or float64 tensor, replaces x
// in place by (x − mean)/std, and returns the statistics, so that held-out
// data can be scaled with the training statistics by Stats.Apply. A column
// whose standard deviation is 0 (a constant column) is centred but not
// scaled, since dividing would make it NaN; its Std is reported as 0. It
// panics if x is not 2-D.
func Standardise(x *tensor.Tensor) Stats {
	rows, cols := matrixDims("data.Standardise", x)
	vals := x.Values() // float64 copy: the sums are accumulated in double precision
	st := Stats{Mean: make([]float64, cols), Std: make([]float64, cols)}
	for i := range rows {
		for j := range cols {
			st.Mean[j] += vals[i*cols+j]
		}
	}
	for j := range cols {
		st.Mean[j] /= float64(rows)
	}
	// Two passes: the textbook one-pass formula cancels badly for columns
	// with a large mean (CO2 in ppm, years).
	for i := range rows {
		for j := range cols {
			d := vals[i*cols+j] - st.Mean[j]
			st.Std[j] += d * d
		}
	}
	for j := range cols {
		st.Std[j] = math.Sqrt(st.Std[j] / float64(rows))
	}
	st.Apply(x)
	return st
}

// Apply replaces x (rows, len(s.Mean)) in place by (x − Mean)/Std column by
// column, leaving columns with Std 0 unscaled (only centred). It panics if x
// is not 2-D with that many columns.
func (s Stats) Apply(x *tensor.Tensor) {
	_, cols := matrixDims("data.Stats.Apply", x)
	if cols != len(s.Mean) || cols != len(s.Std) {
		tensor.Fail("data.Stats.Apply", "x has %d columns, the statistics %d means and %d stds", cols, len(s.Mean), len(s.Std))
	}
	switch x.DType() {
	case tensor.Float32:
		applyStats(x.Float32s(), s)
	default:
		applyStats(x.Float64s(), s)
	}
}

// Invert maps standardised values back in place: x·Std + Mean (columns with
// Std 0 only get the mean added back), e.g. to report predictions in the
// original units.
func (s Stats) Invert(x *tensor.Tensor) {
	_, cols := matrixDims("data.Stats.Invert", x)
	if cols != len(s.Mean) || cols != len(s.Std) {
		tensor.Fail("data.Stats.Invert", "x has %d columns, the statistics %d means and %d stds", cols, len(s.Mean), len(s.Std))
	}
	switch x.DType() {
	case tensor.Float32:
		invertStats(x.Float32s(), s)
	default:
		invertStats(x.Float64s(), s)
	}
}

func applyStats[T float32 | float64](v []T, s Stats) {
	cols := len(s.Mean)
	for i := range v {
		j := i % cols
		d := float64(v[i]) - s.Mean[j]
		if s.Std[j] > 0 {
			d /= s.Std[j]
		}
		v[i] = T(d)
	}
}

func invertStats[T float32 | float64](v []T, s Stats) {
	cols := len(s.Mean)
	for i := range v {
		j := i % cols
		d := float64(v[i])
		if s.Std[j] > 0 {
			d *= s.Std[j]
		}
		v[i] = T(d + s.Mean[j])
	}
}

// matrixDims returns the rows and columns of a contiguous 2-D x, or panics
// naming op.
func matrixDims(op string, x *tensor.Tensor) (rows, cols int) {
	if len(x.Shape()) != 2 {
		tensor.Fail(op, "want a 2-D (rows, columns) tensor, got shape %v", x.Shape())
	}
	if !x.IsContiguous() {
		tensor.Fail(op, "want a contiguous tensor, got shape %v with strides %v", x.Shape(), x.Strides())
	}
	return x.Shape()[0], x.Shape()[1]
}
