package tensor_test

// Value tests of the four arithmetic ops (and their To forms), Cast,
// Linspace, Zeros, ZerosLike, MatMulTTo, DType.Size and Fill on a strided
// view. Every expected value below is worked out by hand.

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/tensor"
)

var reviewDTypes = []tensor.DType{tensor.Float32, tensor.Float64}

// reviewClose compares got's values with want: NaN must match NaN,
// infinities exactly, others within a relative tolerance per dtype.
func reviewClose(t *testing.T, want []float64, got *tensor.Tensor, msg string) {
	t.Helper()
	tol := 1e-13
	if got.DType() == tensor.Float32 {
		tol = 1e-6
	}
	g := got.Values()
	require.Len(t, g, len(want), msg)
	for i, w := range want {
		switch {
		case math.IsNaN(w):
			assert.True(t, math.IsNaN(g[i]), "%s [%d]: want NaN, got %v", msg, i, g[i])
		case math.IsInf(w, 0):
			assert.Equal(t, w, g[i], "%s [%d]", msg, i)
		default:
			assert.InDelta(t, w, g[i], tol*math.Max(1, math.Abs(w)), "%s [%d]", msg, i)
		}
	}
}

func TestArithmeticValues(t *testing.T) {
	inf := math.Inf(1)
	a := []float64{6, -1.5, 0, 2, inf, 1}
	b := []float64{4, 0.5, -3, 0, 1, 0}
	cases := []struct {
		name string
		f    func(a, b *tensor.Tensor) *tensor.Tensor
		fTo  func(dst, a, b *tensor.Tensor) *tensor.Tensor
		want []float64
	}{
		{"Add", tensor.Add, tensor.AddTo, []float64{10, -1, -3, 2, inf, 1}},
		{"Sub", tensor.Sub, tensor.SubTo, []float64{2, -2, 3, 2, inf, 1}},
		{"Mul", tensor.Mul, tensor.MulTo, []float64{24, -0.75, 0, 0, inf, 0}},
		// IEEE division: 2/0 = +Inf, 1/0 = +Inf, 0/-3 = -0.
		{"Div", tensor.Div, tensor.DivTo, []float64{1.5, -3, 0, inf, inf, inf}},
	}
	for _, c := range cases {
		for _, dt := range reviewDTypes {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				x, y := tensor.FromValues(dt, a, 2, 3), tensor.FromValues(dt, b, 2, 3)
				reviewClose(t, c.want, c.f(x, y), "allocating")
				dst := tensor.New(dt, 2, 3)
				assert.Same(t, dst, c.fTo(dst, x, y))
				reviewClose(t, c.want, dst, "dst")
				reviewClose(t, c.want, c.fTo(nil, x, y), "nil dst allocates")
				// dst may be an input itself.
				x2 := tensor.FromValues(dt, a, 2, 3)
				c.fTo(x2, x2, y)
				reviewClose(t, c.want, x2, "dst is a")
				y2 := tensor.FromValues(dt, b, 2, 3)
				c.fTo(y2, x, y2)
				reviewClose(t, c.want, y2, "dst is b")
				// Non-contiguous operands: transposed views of the
				// transposed data give the same logical values.
				xt := tensor.Transpose(tensor.FromValues(dt, reviewTransposeData(a, 2, 3), 3, 2))
				yt := tensor.Transpose(tensor.FromValues(dt, reviewTransposeData(b, 2, 3), 3, 2))
				require.False(t, xt.IsContiguous())
				reviewClose(t, c.want, c.f(xt, yt), "strided operands")
				// A strided destination.
				dt2 := tensor.Transpose(tensor.New(dt, 3, 2))
				c.fTo(dt2, x, y)
				reviewClose(t, c.want, dt2, "strided dst")
			})
		}
	}
}

// reviewTransposeData returns the row-major data of the transpose of the
// r×c matrix v.
func reviewTransposeData(v []float64, r, c int) []float64 {
	out := make([]float64, len(v))
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = v[i*c+j]
		}
	}
	return out
}

// TestArithmeticBroadcast broadcasts each side in turn, including a
// scalar, rank extension and a size-0 dimension.
func TestArithmeticBroadcast(t *testing.T) {
	for _, dt := range reviewDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			m := tensor.FromValues(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
			row := tensor.FromValues(dt, []float64{10, 20, 30}, 3)
			col := tensor.FromValues(dt, []float64{1, 2}, 2, 1)
			s := tensor.Scalar(dt, 2)

			reviewClose(t, []float64{11, 22, 33, 14, 25, 36}, tensor.Add(m, row), "m + row")
			reviewClose(t, []float64{11, 22, 33, 14, 25, 36}, tensor.Add(row, m), "row + m")
			reviewClose(t, []float64{9, 18, 27, 6, 15, 24}, tensor.Sub(row, m), "row - m")
			reviewClose(t, []float64{0, 1, 2, 2, 3, 4}, tensor.Sub(m, col), "m - col")
			reviewClose(t, []float64{1, 2, 3, 8, 10, 12}, tensor.Mul(col, m), "col * m")
			reviewClose(t, []float64{0.5, 1, 1.5, 2, 2.5, 3}, tensor.Div(m, s), "m / scalar")
			reviewClose(t, []float64{2, 1, 2.0 / 3, 0.5, 0.4, 1.0 / 3}, tensor.Div(s, m), "scalar / m")
			// (2,1) and (3,) broadcast to (2,3) with neither side full.
			reviewClose(t, []float64{11, 21, 31, 12, 22, 32}, tensor.Add(col, row), "col + row")

			z := tensor.Add(tensor.New(dt, 0, 3), row)
			assert.Equal(t, []int{0, 3}, z.Shape())
			assert.Equal(t, 0, z.Size())

			// A broadcast into an explicit destination.
			dst := tensor.New(dt, 2, 3)
			tensor.MulTo(dst, col, row)
			reviewClose(t, []float64{10, 20, 30, 20, 40, 60}, dst, "MulTo col*row")
		})
	}
}

func TestArithmeticErrors(t *testing.T) {
	m32 := tensor.New(tensor.Float32, 2, 3)
	m64 := tensor.New(tensor.Float64, 2, 3)
	for _, c := range []struct {
		op string
		f  func()
		in []string
	}{
		{"Sub", func() { tensor.Sub(m32, m64) }, []string{"Sub", "(2, 3) float32", "(2, 3) float64"}},
		{"Div", func() { tensor.Div(m64, tensor.New(tensor.Float64, 2)) }, []string{"Div", "(2, 3)", "(2,)"}},
		{"Mul", func() { tensor.MulTo(tensor.New(tensor.Float64, 3, 2), m64, m64) }, []string{"Mul", "(3, 2)", "(2, 3)"}},
		{"Add", func() { tensor.AddTo(tensor.New(tensor.Float32, 2, 3), m64, m64) }, []string{"Add", "float32", "float64"}},
	} {
		err := reviewPanicErr(c.f)
		require.Error(t, err, c.op)
		var te *tensor.Error
		require.ErrorAs(t, err, &te, c.op)
		assert.Equal(t, c.op, te.Op)
		for _, s := range c.in {
			assert.Contains(t, err.Error(), s, c.op)
		}
		assert.Contains(t, te.Caller, "arith_test.go", c.op)
	}
}

// reviewPanicErr runs f and returns the error it panicked with, if any.
func reviewPanicErr(f func()) (err error) {
	defer tensor.Recover(&err)
	f()
	return nil
}

func TestCreationAndCast(t *testing.T) {
	for _, dt := range reviewDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			z := tensor.Zeros(dt, 2, 2)
			assert.Equal(t, dt, z.DType())
			assert.Equal(t, []float64{0, 0, 0, 0}, z.Values())

			src := tensor.Full(dt, 7, 3, 1)
			zl := tensor.ZerosLike(tensor.Transpose(src))
			assert.Equal(t, []int{1, 3}, zl.Shape())
			assert.Equal(t, []float64{0, 0, 0}, zl.Values())
			assert.Equal(t, []float64{7, 7, 7}, src.Values(), "ZerosLike must not touch its argument")

			reviewClose(t, []float64{-1, -0.5, 0, 0.5, 1}, tensor.Linspace(dt, -1, 1, 5), "Linspace")
			reviewClose(t, []float64{3}, tensor.Linspace(dt, 3, 9, 1), "Linspace n=1")
			assert.Equal(t, 0, tensor.Linspace(dt, 0, 1, 0).Size())

			// Fill through a strided view touches only the view.
			a := tensor.Zeros(dt, 2, 3)
			tensor.Slice(a, 1, 0, 3, 2).Fill(7)
			assert.Equal(t, []float64{7, 0, 7, 7, 0, 7}, a.Values())
		})
	}
	assert.Equal(t, 4, tensor.Float32.Size())
	assert.Equal(t, 8, tensor.Float64.Size())

	// Cast: the same dtype returns the receiver; a strided view converts in
	// logical order; float64 → float32 rounds to nearest and overflows to Inf.
	a32 := tensor.FromFloat32s([]float32{1, 2, 3, 4}, 2, 2)
	assert.Same(t, a32, a32.Cast(tensor.Float32))
	c := tensor.Transpose(a32).Cast(tensor.Float64)
	assert.Equal(t, tensor.Float64, c.DType())
	assert.Equal(t, []float64{1, 3, 2, 4}, c.Values())
	d := tensor.FromFloat64s([]float64{0.1, 1e40, -1e40, 1 + 1.0/(1<<30)}).Cast(tensor.Float32)
	assert.Equal(t, []float32{0.1, float32(math.Inf(1)), float32(math.Inf(-1)), 1}, d.Float32s())
}

func TestMatMulTTo(t *testing.T) {
	// A (2×3), B (2×3): A·Bᵀ (2×2) and Aᵀ·B (3×3), worked by hand.
	av := []float64{1, 2, 3, 4, 5, 6}
	bv := []float64{1, 0, -1, 2, 1, 0}
	for _, dt := range reviewDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			a, b := tensor.FromValues(dt, av, 2, 3), tensor.FromValues(dt, bv, 2, 3)
			dst := tensor.New(dt, 2, 2)
			dst.Fill(math.NaN()) // every element must be overwritten
			assert.Same(t, dst, tensor.MatMulTTo(dst, a, b, false, true))
			reviewClose(t, []float64{-2, 4, -2, 13}, dst, "A·Bᵀ")
			// Aᵀ·B: column sums of outer products of the rows.
			reviewClose(t, []float64{9, 4, -1, 12, 5, -2, 15, 6, -3},
				tensor.MatMulTTo(nil, a, b, true, false), "Aᵀ·B")
			// Both transposed: Aᵀ (3×2) · Bᵀ... needs B (3×k): use Bᵀᵀ.
			bt := tensor.FromValues(dt, []float64{1, 2, 0, 1, -1, 0}, 3, 2) // = Bᵀ as data
			reviewClose(t, []float64{9, 4, -1, 12, 5, -2, 15, 6, -3},
				tensor.MatMulTTo(nil, a, bt, true, true), "Aᵀ·(Bᵀ)ᵀ")
		})
	}
}
