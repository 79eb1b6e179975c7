package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shReduceFn adapts the reductions to one signature for table tests.
type shReduceFn func(a *Tensor, axes []int, keepdims bool) *Tensor

var shReductions = map[string]shReduceFn{
	"Sum":  Sum,
	"Mean": Mean,
	"Max":  Max,
	"Min":  Min,
	"Prod": Prod,
	"LSE":  LogSumExp,
	"Var0": func(a *Tensor, axes []int, k bool) *Tensor { return Variance(a, axes, k, 0) },
	"Var1": func(a *Tensor, axes []int, k bool) *Tensor { return Variance(a, axes, k, 1) },
}

// shInputs gives the same logical matrix m = [[1,2,3],[4,5,6]] in several
// layouts, so every reduction is checked on contiguous and strided data.
func shInputs(dt DType) map[string]*Tensor {
	return map[string]*Tensor{
		"contiguous": FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3),
		"transposed": Transpose(FromValues(dt, []float64{1, 4, 2, 5, 3, 6}, 3, 2)),
		// Every other column of [[1,9,2,9,3],[4,9,5,9,6]].
		"strided": Slice(FromValues(dt, []float64{1, 9, 2, 9, 3, 4, 9, 5, 9, 6}, 2, 5), 1, 0, 5, 2),
		// Columns reversed from [[3,2,1],[6,5,4]].
		"reversed": Slice(FromValues(dt, []float64{3, 2, 1, 6, 5, 4}, 2, 3), -1, math.MaxInt, math.MinInt, -1),
		// Rows 1..2 of a (4,3) matrix, via Unsqueeze/Squeeze round trip.
		"unsqueezed": Squeeze(Unsqueeze(Slice(FromValues(dt, []float64{0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0}, 4, 3), 0, 1, 3, 1), 1), 1),
	}
}

func TestReduceHandWorked(t *testing.T) {
	ln := math.Log
	// Values for m = [[1,2,3],[4,5,6]] worked out by hand.
	lse3 := func(a, b, c float64) float64 { return c + ln(math.Exp(a-c)+math.Exp(b-c)+1) }
	cases := []struct {
		op    string
		axes  []int
		shape []int // without keepdims
		want  []float64
	}{
		{"Sum", []int{1}, []int{2}, []float64{6, 15}},
		{"Sum", []int{-1}, []int{2}, []float64{6, 15}},
		{"Sum", []int{0}, []int{3}, []float64{5, 7, 9}},
		{"Sum", []int{-2}, []int{3}, []float64{5, 7, 9}},
		{"Sum", nil, []int{}, []float64{21}},
		{"Sum", []int{1, 0}, []int{}, []float64{21}},
		{"Sum", []int{}, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"Mean", []int{1}, []int{2}, []float64{2, 5}},
		{"Mean", []int{0}, []int{3}, []float64{2.5, 3.5, 4.5}},
		{"Mean", nil, []int{}, []float64{3.5}},
		{"Max", []int{1}, []int{2}, []float64{3, 6}},
		{"Max", []int{0}, []int{3}, []float64{4, 5, 6}},
		{"Max", nil, []int{}, []float64{6}},
		{"Min", []int{1}, []int{2}, []float64{1, 4}},
		{"Min", []int{0}, []int{3}, []float64{1, 2, 3}},
		{"Min", nil, []int{}, []float64{1}},
		{"Prod", []int{1}, []int{2}, []float64{6, 120}},
		{"Prod", []int{0}, []int{3}, []float64{4, 10, 18}},
		{"Prod", nil, []int{}, []float64{720}},
		{"LSE", []int{1}, []int{2}, []float64{lse3(1, 2, 3), lse3(4, 5, 6)}},
		{"LSE", []int{0}, []int{3}, []float64{4 + ln(1+math.Exp(-3)), 5 + ln(1+math.Exp(-3)), 6 + ln(1+math.Exp(-3))}},
		{"LSE", []int{}, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		// Variance of (1,2,3): mean 2, squared deviations 1,0,1.
		{"Var0", []int{1}, []int{2}, []float64{2.0 / 3, 2.0 / 3}},
		{"Var1", []int{1}, []int{2}, []float64{1, 1}},
		// Variance of (1,4): mean 2.5, deviations² 2.25, 2.25.
		{"Var0", []int{0}, []int{3}, []float64{2.25, 2.25, 2.25}},
		{"Var1", []int{0}, []int{3}, []float64{4.5, 4.5, 4.5}},
		// All six: mean 3.5, Σ(x−3.5)² = 2·(6.25+2.25+0.25) = 17.5.
		{"Var0", nil, []int{}, []float64{17.5 / 6}},
		{"Var1", nil, []int{}, []float64{3.5}},
	}
	for _, dt := range shDTypes {
		for name, in := range shInputs(dt) {
			for _, c := range cases {
				for _, keep := range []bool{false, true} {
					got := shReductions[c.op](in, c.axes, keep)
					msg := []any{dt, name, c.op, c.axes, keep}
					wantShape := c.shape
					if keep {
						wantShape = []int{2, 3}
						if c.axes == nil {
							wantShape = []int{1, 1}
						}
						for _, ax := range c.axes {
							wantShape[(ax+2)%2] = 1
						}
					}
					assert.Equal(t, wantShape, got.Shape(), msg...)
					assert.Equal(t, dt, got.DType(), msg...)
					shAssertValues(t, c.want, got, shTol(dt), msg...)
				}
			}
		}
	}
}

func TestReduceThreeD(t *testing.T) {
	// a[i,j,k] = 12i + 4j + k over shape (2,3,4).
	cases := []struct {
		op         string
		axes       []int
		keepShape  []int
		want       []float64
		transposed bool
	}{
		// Σ_i Σ_k (12i+4j+k) = 48 + 32j + 12.
		{"Sum", []int{0, 2}, []int{1, 3, 1}, []float64{60, 92, 124}, false},
		{"Sum", []int{2, -3}, []int{1, 3, 1}, []float64{60, 92, 124}, false},
		// Σ_j (12i+4j+k) = 36i + 12 + 3k.
		{"Sum", []int{1}, []int{2, 1, 4}, []float64{12, 15, 18, 21, 48, 51, 54, 57}, false},
		{"Max", []int{1}, []int{2, 1, 4}, []float64{8, 9, 10, 11, 20, 21, 22, 23}, false},
		{"Min", []int{0, 2}, []int{1, 3, 1}, []float64{0, 4, 8}, false},
		// Σ_i (12i+4j+k) = 12 + 8j + 2k.
		{"Sum", []int{0}, []int{1, 3, 4}, []float64{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34}, false},
		{"Mean", []int{1, 2}, []int{2, 1, 1}, []float64{5.5, 17.5}, false},
		// Over k only: values 12i+4j+{0,1,2,3}: variance (ddof 0) 1.25 each.
		{"Var0", []int{2}, []int{2, 3, 1}, []float64{1.25, 1.25, 1.25, 1.25, 1.25, 1.25}, false},
		// Over i only: values v, v+12: variance (ddof 1) 72.
		{"Var1", []int{0}, []int{1, 3, 4}, []float64{72, 72, 72, 72, 72, 72, 72, 72, 72, 72, 72, 72}, false},
	}
	for _, dt := range shDTypes {
		for _, layout := range []string{"contiguous", "permuted"} {
			a := shSeq(dt, 2, 3, 4)
			if layout == "permuted" {
				// Same logical tensor stored as (4,2,3) and permuted back.
				s := New(dt, 4, 2, 3)
				CopyInto(Permute(s, 1, 2, 0), a)
				a = Permute(s, 1, 2, 0)
				require.False(t, a.IsContiguous())
			}
			for _, c := range cases {
				msg := []any{dt, layout, c.op, c.axes}
				got := shReductions[c.op](a, c.axes, true)
				assert.Equal(t, c.keepShape, got.Shape(), msg...)
				shAssertValues(t, c.want, got, shTol(dt), msg...)
			}
		}
	}
}

func TestReduceExpandedInput(t *testing.T) {
	for _, dt := range shDTypes {
		e := Expand(FromValues(dt, []float64{1, 2, 3}, 3), 4, 3)
		shAssertValues(t, []float64{4, 8, 12}, Sum(e, []int{0}, false), 0, dt)
		shAssertValues(t, []float64{6, 6, 6, 6}, Sum(e, []int{1}, false), 0, dt)
		shAssertValues(t, []float64{24}, Sum(e, nil, false), 0, dt)
		shAssertValues(t, []float64{0, 0, 0}, Variance(e, []int{0}, false, 1), 0, dt)
		shAssertValues(t, []float64{1, 8, 27, 64}, Prod(Expand(FromValues(dt, []float64{1, 2, 3, 4}, 4, 1), 4, 3), []int{1}, false), shTol(dt), dt)
	}
}

func TestReduceSizeZeroAndOne(t *testing.T) {
	for _, dt := range shDTypes {
		z := New(dt, 0, 3)
		shAssertValues(t, []float64{0, 0, 0}, Sum(z, []int{0}, false), 0)
		shAssertValues(t, []float64{1, 1, 1}, Prod(z, []int{0}, false), 0)
		shAssertValues(t, []float64{math.NaN(), math.NaN(), math.NaN()}, Mean(z, []int{0}, false), 0)
		shAssertValues(t, []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}, LogSumExp(z, []int{0}, false), 0)
		shAssertValues(t, []float64{0}, Sum(z, nil, false), 0)
		assert.Equal(t, []int{0}, Sum(z, []int{1}, false).Shape())
		assert.Equal(t, []int{0, 1}, Max(z, []int{1}, true).Shape())
		requireOpPanics(t, "Max", func() { Max(z, []int{0}, false) }, "size-0", "(0, 3)", "[0]")
		requireOpPanics(t, "Min", func() { Min(z, nil, false) }, "size-0", "(0, 3)")
		requireOpPanics(t, "ArgMax", func() { ArgMax(z, 0) }, "size 0", "(0, 3)")
		assert.Empty(t, ArgMax(z, 1))

		// Size-1 axes: reducing them is the identity map.
		o := FromValues(dt, []float64{1, 2, 3}, 1, 3, 1)
		shAssertValues(t, []float64{1, 2, 3}, Sum(o, []int{0, 2}, false), 0)
		shAssertValues(t, []float64{1, 2, 3}, Max(o, []int{2}, false), 0)
		shAssertValues(t, []float64{0, 0, 0}, Variance(o, []int{0}, false, 0), 0)
		shAssertValues(t, []float64{math.NaN(), math.NaN(), math.NaN()}, Variance(o, []int{0}, false, 1), 0)
		assert.Equal(t, []int{1, 3, 1}, Sum(o, []int{0, 2}, true).Shape())
		s := Sum(Scalar(dt, 5), nil, false)
		assert.Equal(t, []int{}, s.Shape())
		assert.Equal(t, 5.0, s.Item())
	}
}

func TestReduceVarianceHand(t *testing.T) {
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, 2, 3, 4}, 4)
		assert.InDelta(t, 1.25, Variance(a, nil, false, 0).Item(), shTol(dt))
		assert.InDelta(t, 5.0/3, Variance(a, nil, false, 1).Item(), shTol(dt))
		assert.InDelta(t, 5.0/3, Variance(a, []int{0}, true, 1).At(0), shTol(dt))
		// Large offset: two-pass variance stays exact where E[x²]−E[x]² would not.
		b := FromValues(dt, []float64{1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4}, 4)
		assert.InDelta(t, 1.25, Variance(b, nil, false, 0).Item(), 1e-3)
	}
}

func TestReduceNaNAndInf(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, nan, 3, 4, 5, 6}, 2, 3)
		shAssertValues(t, []float64{nan, 6}, Max(a, []int{1}, false), 0)
		shAssertValues(t, []float64{nan, 4}, Min(a, []int{1}, false), 0)
		shAssertValues(t, []float64{4, nan, 6}, Max(a, []int{0}, false), 0)
		shAssertValues(t, []float64{1, nan, 3}, Min(a, []int{0}, false), 0)
		shAssertValues(t, []float64{nan}, Max(a, nil, false), 0)
		shAssertValues(t, []float64{4, nan, 6}, Max(Transpose(Transpose(a)), []int{0}, false), 0)
		shAssertValues(t, []float64{nan, 6}, Max(Transpose(a), []int{0}, false), 0)
		// NaN first in its run too.
		shAssertValues(t, []float64{nan}, Max(FromValues(dt, []float64{nan, 1}, 2), nil, false), 0)

		// LogSumExp: huge values, all −Inf, +Inf.
		l := FromValues(dt, []float64{1000, 1000, -inf, -inf, 0, math.Log(3)}, 3, 2)
		shAssertValues(t, []float64{1000 + math.Ln2, -inf, math.Log(4)}, LogSumExp(l, []int{1}, false), shTol(dt))
		lt := Transpose(l) // same rows as columns
		shAssertValues(t, []float64{1000 + math.Ln2, -inf, math.Log(4)}, LogSumExp(lt, []int{0}, false), shTol(dt))
		lc := FromValues(dt, []float64{1000, -inf, 0, 1000, -inf, math.Log(3)}, 2, 3)
		shAssertValues(t, []float64{1000 + math.Ln2, -inf, math.Log(4)}, LogSumExp(lc, []int{0}, false), shTol(dt))
		shAssertValues(t, []float64{inf}, LogSumExp(FromValues(dt, []float64{1, inf}, 2), nil, false), 0)
		shAssertValues(t, []float64{-1000 + math.Ln2}, LogSumExp(FromValues(dt, []float64{-1000, -1000}, 2), nil, false), shTol(dt))
	}
}

func TestReduceLargeAccuracy(t *testing.T) {
	const n = 1_000_000
	ones := Ones(Float32, n)
	assert.Equal(t, float64(n), Sum(ones, nil, false).Item())

	// 0.1 is not representable: a naive float32 running sum of 10⁶ copies
	// drifts by about 1%; pairwise summation keeps the relative error ~1e-7.
	tenth := Full(Float32, 0.1, n)
	exact := float64(n) * float64(float32(0.1))
	assert.InEpsilon(t, exact, Sum(tenth, nil, false).Item(), 1e-6)
	assert.InEpsilon(t, float64(float32(0.1)), Mean(tenth, nil, false).Item(), 1e-6)
	assert.InDelta(t, 0, Variance(tenth, nil, false, 0).Item(), 1e-9)

	// The same along axis 0 (column path) and through a transposed view (walk path).
	m := Full(Float32, 0.1, n/4, 4)
	for _, v := range Sum(m, []int{0}, false).Values() {
		assert.InEpsilon(t, exact/4, v, 1e-6)
	}
	for _, v := range Sum(Transpose(m), []int{1}, false).Values() {
		assert.InEpsilon(t, exact/4, v, 1e-6)
	}
	for _, v := range Mean(Transpose(m), []int{-1}, false).Values() {
		assert.InEpsilon(t, float64(float32(0.1)), v, 1e-6)
	}
}

func TestReduceAxisErrors(t *testing.T) {
	a := shSeq(Float64, 2, 3)
	for name, f := range map[string]shReduceFn{"Sum": Sum, "Mean": Mean, "Max": Max, "LogSumExp": LogSumExp} {
		requireOpPanics(t, name, func() { f(a, []int{2}, false) }, "axis 2", "[2]", "(2, 3)")
		requireOpPanics(t, name, func() { f(a, []int{-3}, false) }, "axis -3", "(2, 3)")
		requireOpPanics(t, name, func() { f(a, []int{1, -1}, false) }, "repeated", "[1 -1]", "(2, 3)")
	}
	requireOpPanics(t, "Variance", func() { Variance(a, []int{0, 0}, false, 0) }, "repeated")
	requireOpPanics(t, "ArgMin", func() { ArgMin(a, 2) }, "axis 2", "(2, 3)")
	requireOpPanics(t, "Softmax", func() { Softmax(a, -3) }, "axis -3", "(2, 3)")
	requireOpPanics(t, "Sum", func() { SumInto(New(Float64, 3), a, []int{1}, false) }, "(3,)", "(2,)")
	requireOpPanics(t, "Sum", func() { SumInto(New(Float32, 2), a, []int{1}, false) }, "float32", "float64")
}

func TestReduceArgMaxMin(t *testing.T) {
	nan := math.NaN()
	for _, dt := range shDTypes {
		a := FromValues(dt, []float64{1, 3, 3, 7, 0, 2}, 2, 3)
		assert.Equal(t, []int{1, 0}, ArgMax(a, 1))
		assert.Equal(t, []int{1, 0}, ArgMax(a, -1))
		assert.Equal(t, []int{0, 1}, ArgMin(a, 1))
		assert.Equal(t, []int{1, 0, 0}, ArgMax(a, 0))
		assert.Equal(t, []int{0, 1, 1}, ArgMin(a, 0))
		// Transposed: axis 0 of aᵀ is axis 1 of a.
		assert.Equal(t, []int{1, 0}, ArgMax(Transpose(a), 0))
		assert.Equal(t, []int{0, 1, 1}, ArgMin(Transpose(a), 1))
		// NaN wins, first one.
		b := FromValues(dt, []float64{1, nan, 5, nan, 2, 0, nan, 1, 9}, 3, 3)
		assert.Equal(t, []int{1, 0, 0}, ArgMax(b, 1))
		assert.Equal(t, []int{1, 0, 0}, ArgMin(b, 1))
		// 3-D, row-major over the remaining axes: c[i,j,k] = 12i+4j+k is
		// increasing along every axis.
		c := shSeq(dt, 2, 3, 4)
		assert.Equal(t, []int{2, 2, 2, 2, 2, 2, 2, 2}, ArgMax(c, 1))
		assert.Equal(t, []int{3, 3, 3, 3, 3, 3}, ArgMax(c, 2))
		assert.Equal(t, []int{0, 0, 0, 0, 0, 0}, ArgMin(c, 2))
		// Reversed along the last axis: the max moves to index 0.
		r := Slice(c, 2, math.MaxInt, math.MinInt, -1)
		assert.Equal(t, []int{0, 0, 0, 0, 0, 0}, ArgMax(r, -1))
		assert.Equal(t, []int{0}, ArgMax(FromValues(dt, []float64{4}, 1), 0))
	}
}

func TestSoftmaxHand(t *testing.T) {
	want := []float64{0.09003057, 0.24472847, 0.66524096}
	lse := 3 + math.Log(1+math.Exp(-1)+math.Exp(-2)) // 3.40760596
	wantLog := []float64{1 - lse, 2 - lse, 3 - lse}
	for _, dt := range shDTypes {
		tol := math.Max(shTol(dt), 1e-8)
		for _, shift := range []float64{0, 1000, -1000} {
			x := FromValues(dt, []float64{1 + shift, 2 + shift, 3 + shift}, 3)
			shAssertValues(t, want, Softmax(x, 0), tol, dt, shift)
			if shift == 0 {
				shAssertValues(t, wantLog, LogSoftmax(x, -1), tol, dt)
			}
		}
		// Rows of a matrix, last axis; and the same numbers as columns.
		m := FromValues(dt, []float64{1, 2, 3, 1001, 1002, 1003}, 2, 3)
		shAssertValues(t, append(append([]float64{}, want...), want...), Softmax(m, 1), tol, dt)
		mt := FromValues(dt, []float64{1, 1001, 2, 1002, 3, 1003}, 3, 2)
		shAssertValues(t, []float64{want[0], want[0], want[1], want[1], want[2], want[2]}, Softmax(mt, 0), tol, dt)
		shAssertValues(t, []float64{wantLog[0], wantLog[0], wantLog[1], wantLog[1], wantLog[2], wantLog[2]}, LogSoftmax(mt, -2), tol, dt)
		// Transposed (non-contiguous) input along its last axis.
		st := Softmax(Transpose(mt), 1)
		assert.Equal(t, []int{2, 3}, st.Shape())
		shAssertValues(t, append(append([]float64{}, want...), want...), st, tol, dt)
		// A middle axis of a 3-D tensor: (1,3,2) with columns [1,2,3].
		x3 := FromValues(dt, []float64{1, 3, 2, 2, 3, 1}, 1, 3, 2)
		shAssertValues(t, []float64{want[0], want[2], want[1], want[1], want[2], want[0]}, Softmax(x3, 1), tol, dt)
		// Size-1 axis: softmax is 1, log-softmax 0.
		shAssertValues(t, []float64{1, 1}, Softmax(FromValues(dt, []float64{5, -7}, 2, 1), 1), 0)
		shAssertValues(t, []float64{0, 0}, LogSoftmax(FromValues(dt, []float64{5, -7}, 2, 1), 1), 0)
		// Size-0 tensors work.
		assert.Equal(t, []int{0, 3}, Softmax(New(dt, 0, 3), 1).Shape())
		// In place.
		y := FromValues(dt, []float64{1, 2, 3}, 3)
		SoftmaxInto(y, y, 0)
		shAssertValues(t, want, y, tol)
		// Into a non-contiguous destination.
		d := New(dt, 3, 2)
		LogSoftmaxInto(Transpose(d), m, 1)
		shAssertValues(t, []float64{wantLog[0], wantLog[0], wantLog[1], wantLog[1], wantLog[2], wantLog[2]}, d, tol)
		requireOpPanics(t, "Softmax", func() { SoftmaxInto(New(dt, 3), m, 1) }, "(2, 3)", "(3,)")
	}
}

func TestReduceInto(t *testing.T) {
	for _, dt := range shDTypes {
		m := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
		d := Full(dt, 99, 3)
		got := SumInto(d, m, []int{0}, false)
		assert.Same(t, d, got)
		shAssertValues(t, []float64{5, 7, 9}, d, 0)
		k := New(dt, 2, 1)
		MeanInto(k, m, []int{1}, true)
		shAssertValues(t, []float64{2, 5}, k, 0)
		// Non-contiguous destination: a column of a bigger matrix.
		big := Full(dt, -1, 3, 2)
		col := Transpose(Slice(big, 1, 1, 2, 1)) // shape (1,3), strides (1,2)
		require.False(t, col.IsContiguous())
		SumInto(col, m, []int{0}, true)
		shAssertValues(t, []float64{-1, 5, -1, 7, -1, 9}, big, 0)
		// The other Into forms, each on m = [[1,2,3],[4,5,6]] along axis 1.
		into := []struct {
			name string
			f    func(dst *Tensor) *Tensor
			want []float64
		}{
			{"MaxInto", func(d *Tensor) *Tensor { return MaxInto(d, m, []int{1}, false) }, []float64{3, 6}},
			{"MinInto", func(d *Tensor) *Tensor { return MinInto(d, m, []int{1}, false) }, []float64{1, 4}},
			{"ProdInto", func(d *Tensor) *Tensor { return ProdInto(d, m, []int{1}, false) }, []float64{6, 120}},
			{"LogSumExpInto", func(d *Tensor) *Tensor { return LogSumExpInto(d, m, []int{-1}, false) },
				[]float64{3 + math.Log(1+math.Exp(-1)+math.Exp(-2)), 6 + math.Log(1+math.Exp(-1)+math.Exp(-2))}},
			{"VarianceInto", func(d *Tensor) *Tensor { return VarianceInto(d, m, []int{1}, false, 1) }, []float64{1, 1}},
		}
		for _, c := range into {
			d := Full(dt, 99, 2)
			assert.Same(t, d, c.f(d), c.name)
			shAssertValues(t, c.want, d, shTol(dt), dt, c.name)
		}
	}
}

func TestReduceSumTo(t *testing.T) {
	for _, dt := range shDTypes {
		m := FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
		cases := []struct {
			shape []int
			want  []float64
		}{
			{[]int{3}, []float64{5, 7, 9}},
			{[]int{1, 3}, []float64{5, 7, 9}},
			{[]int{2, 1}, []float64{6, 15}},
			{[]int{1, 1}, []float64{21}},
			{[]int{}, []float64{21}},
			{[]int{1}, []float64{21}},
			{[]int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		}
		for _, c := range cases {
			for name, in := range shInputs(dt) {
				got := SumTo(in, c.shape...)
				assert.Equal(t, c.shape, got.Shape(), dt, name, c.shape)
				shAssertValues(t, c.want, got, 0, dt, name, c.shape)
				assert.False(t, shSameStorage(got, in), "SumTo must not alias its input")
			}
		}
		// Rank extension: (2,3,4) to (3,1) sums axis 0 and axis 2.
		a := shSeq(dt, 2, 3, 4)
		shAssertValues(t, []float64{60, 92, 124}, SumTo(a, 3, 1), 0)
		// Into a destination, including a strided one.
		d := New(dt, 3, 1)
		SumToInto(d, a)
		shAssertValues(t, []float64{60, 92, 124}, d, 0)
		big := New(dt, 3, 2)
		SumToInto(Slice(big, 1, 1, 2, 1), a)
		shAssertValues(t, []float64{0, 60, 0, 92, 0, 124}, big, 0)
		requireOpPanics(t, "SumTo", func() { SumTo(m, 2) }, "(2,)", "(2, 3)")
		requireOpPanics(t, "SumTo", func() { SumTo(m, 1, 2, 3) }, "(1, 2, 3)", "(2, 3)")
		requireOpPanics(t, "SumTo", func() { SumTo(m, 3, 1) }, "(3, 1)", "(2, 3)")
	}
}

// A column sum split over goroutines (the halves of the pairwise tree on
// goroutines of their own) is the serial sum bit for bit, for an even and
// an odd number of rows.
func TestColReduceParallelMatchesSerial(t *testing.T) {
	rng := NewRNG(12)
	for _, r := range []int{4096, 3001} {
		n := 256
		x := rng.Normal(Float32, 0, 1, r, n).Float32s()
		k := sumKernel[float32]()
		serial, par := make([]float32, n), make([]float32, n)
		colReduceOn(serial, x, r, nil, k, make([]float32, n*pairDepth(r)), 1)
		colReduceOn(par, x, r, nil, k, make([]float32, n*pairDepth(r)), 4)
		for j := range serial {
			require.Equal(t, math.Float32bits(serial[j]), math.Float32bits(par[j]), "r=%d column %d", r, j)
		}
		// And what Sum over the rows gives.
		got := Sum(FromFloat32s(x, r, n), []int{0}, false).Float32s()
		require.Equal(t, serial, got)
	}
}
