package tensor

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expected values in this file were computed independently with mpmath at
// 30 digits, or follow from textbook identities.

var (
	ewInf  = math.Inf(1)
	ewNaN  = math.NaN()
	ewBoth = []DType{Float32, Float64}
)

// ewTols holds tolerances: relative tolerance per dtype, plus an absolute floor for
// values near zero.
type ewTols struct{ rel32, rel64, abs float64 }

var ewDefTol = ewTols{rel32: 2e-6, rel64: 1e-13}

func (tl ewTols) rel(dt DType) float64 {
	if dt == Float32 {
		return tl.rel32
	}
	return tl.rel64
}

// ewAssertValues checks got against want elementwise: NaN must match NaN,
// infinities must match exactly, others within abs + rel·|want|.
func ewAssertValues(t *testing.T, dt DType, tl ewTols, want []float64, got *Tensor, msg string) {
	t.Helper()
	require.Equal(t, dt, got.DType(), msg)
	vals := got.Values()
	require.Len(t, vals, len(want), msg)
	for i, w := range want {
		g := vals[i]
		switch {
		case math.IsNaN(w):
			assert.True(t, math.IsNaN(g), "%s [%d]: want NaN, got %v", msg, i, g)
		case math.IsInf(w, 0) || w == 0 && tl.abs == 0:
			assert.Equal(t, w, g, "%s [%d]", msg, i)
		default:
			assert.InDelta(t, w, g, tl.abs+tl.rel(dt)*math.Abs(w), "%s [%d]", msg, i)
		}
	}
}

// ewStrided returns a 1-D view of vals with stride 2 (every other storage
// element), so kernels take their non-contiguous path.
func ewStrided(dt DType, vals []float64) *Tensor {
	buf := make([]float64, 2*len(vals))
	for i := range buf {
		buf[i] = -777
	}
	for i, v := range vals {
		buf[2*i+1] = v
	}
	t := FromValues(dt, buf)
	return &Tensor{dtype: dt, shape: []int{len(vals)}, strides: []int{2}, offset: 1, f32: t.f32, f64: t.f64}
}

// ewTransposed returns the transpose of a 2-D tensor as a view.
func ewTransposed(a *Tensor) *Tensor {
	v := *a
	v.shape = []int{a.shape[1], a.shape[0]}
	v.strides = []int{a.strides[1], a.strides[0]}
	return &v
}

// ewRequireOpError runs f, requires it to panic with a *Error for op whose
// message contains every part.
func ewRequireOpError(t *testing.T, op string, f func(), parts ...string) {
	t.Helper()
	var got any
	func() {
		defer func() { got = recover() }()
		f()
	}()
	require.NotNil(t, got, "%s did not panic", op)
	err, ok := got.(error)
	require.True(t, ok, "panic value %v is not an error", got)
	var e *Error
	require.True(t, errors.As(err, &e), "panic %v is not a *Error", err)
	assert.Equal(t, op, e.Op)
	for _, p := range parts {
		assert.Contains(t, err.Error(), p)
	}
}

type ewUnaryCase struct {
	name string
	f    func(a *Tensor) *Tensor
	fTo  func(dst, a *Tensor) *Tensor
	in   []float64
	want []float64
	tol  ewTols
}

func ewWithParam(f func(*Tensor, float64) *Tensor, fTo func(*Tensor, *Tensor, float64) *Tensor, p float64) (func(*Tensor) *Tensor, func(*Tensor, *Tensor) *Tensor) {
	return func(a *Tensor) *Tensor { return f(a, p) }, func(d, a *Tensor) *Tensor { return fTo(d, a, p) }
}

func ewUnaryCases() []ewUnaryCase {
	leaky, leakyTo := ewWithParam(LeakyRelu, LeakyReluTo, 0.1)
	elu, eluTo := ewWithParam(Elu, EluTo, 1.5)
	addS, addSTo := ewWithParam(AddScalar, AddScalarTo, 2.5)
	mulS, mulSTo := ewWithParam(MulScalar, MulScalarTo, -2)
	pow2, pow2To := ewWithParam(PowScalar, PowScalarTo, 2)
	powHalf, powHalfTo := ewWithParam(PowScalar, PowScalarTo, 0.5)
	powM1, powM1To := ewWithParam(PowScalar, PowScalarTo, -1)
	pow3, pow3To := ewWithParam(PowScalar, PowScalarTo, 3)
	pow15, pow15To := ewWithParam(PowScalar, PowScalarTo, 1.5)
	clamp := func(a *Tensor) *Tensor { return Clamp(a, -1, 2) }
	clampTo := func(d, a *Tensor) *Tensor { return ClampTo(d, a, -1, 2) }
	clampInf := func(a *Tensor) *Tensor { return Clamp(a, math.Inf(-1), 0) }
	clampInfTo := func(d, a *Tensor) *Tensor { return ClampTo(d, a, math.Inf(-1), 0) }

	// ψ(−10.5) = ψ(0.5) + Σ_{j=1}^{11} 1/(j − 1/2) by the recurrence.
	psiNeg := -1.9635100260214235
	for j := 1; j <= 11; j++ {
		psiNeg += 1 / (float64(j) - 0.5)
	}
	return []ewUnaryCase{
		{"Neg", Neg, NegTo, []float64{1.5, -2, 0, ewInf}, []float64{-1.5, 2, 0, -ewInf}, ewDefTol},
		{"Abs", Abs, AbsTo, []float64{-3, 2.5, 0, -ewInf, ewNaN}, []float64{3, 2.5, 0, ewInf, ewNaN}, ewDefTol},
		{"Sign", Sign, SignTo, []float64{-2, 0, 3.5, ewNaN, -ewInf, 1e-30}, []float64{-1, 0, 1, ewNaN, -1, 1}, ewDefTol},
		{"Exp", Exp, ExpTo, []float64{0, 1, -1, 2, 10, -20, 80, -ewInf, ewInf, ewNaN},
			[]float64{1, 2.7182818284590452, 0.36787944117144232, 7.3890560989306502, 22026.465794806717,
				2.0611536224385578e-9, 5.5406223843935101e+34, 0, ewInf, ewNaN}, ewDefTol},
		{"Expm1", Expm1, Expm1To, []float64{1e-10, 1, -1, 0, -ewInf, 1000},
			[]float64{1.00000000005e-10, 1.7182818284590452, -0.63212055882855768, 0, -1, ewInf}, ewDefTol},
		{"Log", Log, LogTo, []float64{1, 2, 0.5, 10, 0, -1, ewInf},
			[]float64{0, 0.69314718055994531, -0.69314718055994531, 2.302585092994046, -ewInf, ewNaN, ewInf}, ewDefTol},
		{"Log1p", Log1p, Log1pTo, []float64{1e-10, 1, -0.5, -1, 0},
			[]float64{9.9999999995e-11, 0.69314718055994531, -0.69314718055994531, -ewInf, 0}, ewDefTol},
		{"Sqrt", Sqrt, SqrtTo, []float64{4, 2, 0, -1, ewInf}, []float64{2, 1.4142135623730951, 0, ewNaN, ewInf}, ewDefTol},
		{"Square", Square, SquareTo, []float64{3, -1.5, 0, ewNaN}, []float64{9, 2.25, 0, ewNaN}, ewDefTol},
		{"Reciprocal", Reciprocal, ReciprocalTo, []float64{4, -0.5, 0, ewInf}, []float64{0.25, -2, ewInf, 0}, ewDefTol},
		{"Sin", Sin, SinTo, []float64{0, 0.5, 1, -2}, []float64{0, 0.479425538604203, 0.84147098480789651, -0.9092974268256817}, ewDefTol},
		{"Cos", Cos, CosTo, []float64{0, 0.5, 1, -2}, []float64{1, 0.87758256189037272, 0.54030230586813972, -0.41614683654714239}, ewDefTol},
		{"Tanh", Tanh, TanhTo, []float64{0, 0.5, 1, -2, 20, -1000, 1000, 0.25, ewNaN},
			[]float64{0, 0.46211715726000976, 0.76159415595576489, -0.96402758007581688, 1, -1, 1, 0.24491866240370913, ewNaN}, ewDefTol},
		{"Sigmoid", Sigmoid, SigmoidTo, []float64{0, 1, -1, 20, -20, 1000, -1000, ewInf, -ewInf, ewNaN},
			[]float64{0.5, 0.73105857863000488, 0.26894142136999512, 0.99999999793884638, 2.0611536181902036e-9, 1, 0, 1, 0, ewNaN}, ewDefTol},
		{"Softplus", Softplus, SoftplusTo, []float64{0, 1, -1, 30, -30, 1000, -1000, ewNaN},
			[]float64{0.69314718055994531, 1.3132616875182228, 0.31326168751822283, 30.000000000000094, 9.3576229688397368e-14, 1000, 0, ewNaN}, ewDefTol},
		{"Relu", Relu, ReluTo, []float64{-1, 0, 2.5, ewNaN, -ewInf, ewInf}, []float64{0, 0, 2.5, ewNaN, 0, ewInf}, ewDefTol},
		{"Erf", Erf, ErfTo, []float64{0, 0.5, 1, -1, 3, ewInf, -ewInf},
			[]float64{0, 0.52049987781304654, 0.84270079294971487, -0.84270079294971487, 0.99997790950300141, 1, -1}, ewDefTol},
		{"Lgamma", Lgamma, LgammaTo, []float64{0.5, 1, 2, 3, 10, -0.5, -2.5, 0},
			[]float64{0.57236494292470009, 0, 0, 0.69314718055994531, 12.80182748008147, 1.2655121234846454, -0.056243716497674051, ewInf},
			ewTols{rel32: 2e-6, rel64: 1e-13, abs: 1e-7}},
		{"Digamma", Digamma, DigammaTo, []float64{1, 0.5, 10, 2, -0.5, -1.5, 100, -10.5, 1e-3, 0, -1, -3, ewInf, ewNaN},
			[]float64{-0.57721566490153286, -1.9635100260214235, 2.2517525890667211, 0.42278433509846714, 0.036489973978576521,
				0.70315664064524319, 4.6001618527380874, psiNeg, -1000.5755719318103, -ewInf, ewNaN, ewNaN, ewInf, ewNaN},
			ewTols{rel32: 1e-5, rel64: 1e-13}},
		{"Gelu", Gelu, GeluTo, []float64{0, 1, -1, 2, -3, -10, ewInf, -ewInf},
			[]float64{0, 0.84134474606854295, -0.15865525393145705, 1.9544997361036416, -0.0040496940948902836, -7.6198530241605261e-23, ewInf, 0},
			ewTols{rel32: 1e-5, rel64: 1e-13}},
		{"LeakyRelu", leaky, leakyTo, []float64{-2, 0, 3, ewNaN, -ewInf}, []float64{-0.2, 0, 3, ewNaN, -ewInf}, ewDefTol},
		{"Elu", elu, eluTo, []float64{1, 0, -1, -1000, ewNaN}, []float64{1, 0, -0.94818083824283652, -1.5, ewNaN}, ewDefTol},
		{"Clamp", clamp, clampTo, []float64{-5, 0.5, 3, ewNaN, -1, 2}, []float64{-1, 0.5, 2, ewNaN, -1, 2}, ewDefTol},
		{"ClampInf", clampInf, clampInfTo, []float64{-5, 0.5, -ewInf, ewInf}, []float64{-5, 0, -ewInf, 0}, ewDefTol},
		{"AddScalar", addS, addSTo, []float64{1, -2.5, ewInf}, []float64{3.5, 0, ewInf}, ewDefTol},
		{"MulScalar", mulS, mulSTo, []float64{1.5, 0, -ewInf}, []float64{-3, 0, ewInf}, ewDefTol},
		{"PowScalar2", pow2, pow2To, []float64{3, -2, 0}, []float64{9, 4, 0}, ewDefTol},
		{"PowScalarHalf", powHalf, powHalfTo, []float64{4, 0, -ewInf, -4, ewInf}, []float64{2, 0, ewInf, ewNaN, ewInf}, ewDefTol},
		{"PowScalarMinus1", powM1, powM1To, []float64{2, 0, -4}, []float64{0.5, ewInf, -0.25}, ewDefTol},
		{"PowScalar3", pow3, pow3To, []float64{-2, 1.5}, []float64{-8, 3.375}, ewDefTol},
		{"PowScalar1.5", pow15, pow15To, []float64{-1, 4}, []float64{ewNaN, 8}, ewDefTol},
	}
}

// TestUnaryValues checks every unary op, in both dtypes, on a contiguous
// input, a strided input (the per-element path), with an allocated result
// and into a provided dst, and in place.
func TestUnaryValues(t *testing.T) {
	for _, c := range ewUnaryCases() {
		for _, dt := range ewBoth {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				a := FromValues(dt, c.in)
				ewAssertValues(t, dt, c.tol, c.want, c.f(a), "contiguous")
				ewAssertValues(t, dt, c.tol, c.want, c.f(ewStrided(dt, c.in)), "strided")

				dst := New(dt, len(c.in))
				got := c.fTo(dst, a)
				assert.Same(t, dst, got, "To form must return dst")
				ewAssertValues(t, dt, c.tol, c.want, dst, "dst")

				sdst := ewStrided(dt, make([]float64, len(c.in)))
				c.fTo(sdst, a)
				ewAssertValues(t, dt, c.tol, c.want, sdst, "strided dst")
				assert.Equal(t, -777.0, ewRawAt(sdst, 0), "strided dst must not touch the gaps")

				ewAssertValues(t, dt, c.tol, c.want, c.fTo(nil, a), "nil dst")

				c.fTo(a, a) // in place
				ewAssertValues(t, dt, c.tol, c.want, a, "in place")
			})
		}
	}
}

// ewRawAt reads storage element i directly, ignoring the view.
func ewRawAt(t *Tensor, i int) float64 {
	if t.dtype == Float32 {
		return float64(t.f32[i])
	}
	return t.f64[i]
}

// TestUnaryShapes checks n-d, transposed, scalar, size-0 and broadcast
// (stride-0) inputs keep their shape and map every element.
func TestUnaryShapes(t *testing.T) {
	for _, dt := range ewBoth {
		t.Run(dt.String(), func(t *testing.T) {
			// (2, 3) stored as the transpose of a (3, 2) tensor.
			base := FromValues(dt, []float64{0, 3, 1, 4, 2, 5}, 3, 2)
			tr := ewTransposed(base) // logically [[0 1 2] [3 4 5]]
			require.False(t, tr.IsContiguous())
			got := AddScalar(tr, 1)
			assert.Equal(t, []int{2, 3}, got.Shape())
			assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, got.Values())
			got = Relu(AddScalar(tr, -2))
			assert.Equal(t, []float64{0, 0, 0, 1, 2, 3}, got.Values())

			s := Scalar(dt, -4)
			got = Abs(s)
			assert.Equal(t, 0, got.Dim())
			assert.Equal(t, 4.0, got.Item())

			z := New(dt, 2, 0, 3)
			got = Exp(z)
			assert.Equal(t, []int{2, 0, 3}, got.Shape())
			assert.Equal(t, 0, got.Size())

			one := FromValues(dt, []float64{2}, 1, 1, 1)
			assert.Equal(t, []float64{4}, Square(one).Values())

			// A stride-0 view: row [1 2 3] repeated twice.
			row := FromValues(dt, []float64{1, 2, 3}, 3)
			bc := &Tensor{dtype: dt, shape: []int{2, 3}, strides: []int{0, 1}, f32: row.f32, f64: row.f64}
			assert.Equal(t, []float64{2, 4, 6, 2, 4, 6}, MulScalar(bc, 2).Values())

			// Transposed dst.
			dstBase := New(dt, 3, 2)
			MulScalarTo(ewTransposed(dstBase), tr, 10)
			assert.Equal(t, []float64{0, 30, 10, 40, 20, 50}, dstBase.Values())
		})
	}
}

// TestUnaryErrors checks wrong destinations and bad parameters.
func TestUnaryErrors(t *testing.T) {
	for _, dt := range ewBoth {
		other := Float64
		if dt == Float64 {
			other = Float32
		}
		a := New(dt, 2, 3)
		ewRequireOpError(t, "Exp", func() { ExpTo(New(dt, 3, 2), a) }, "(3, 2)", "(2, 3)")
		ewRequireOpError(t, "Sigmoid", func() { SigmoidTo(New(other, 2, 3), a) }, other.String(), dt.String())
		ewRequireOpError(t, "AddScalar", func() { AddScalarTo(New(dt, 6), a, 1) }, "(6,)", "(2, 3)")
		ewRequireOpError(t, "Clamp", func() { Clamp(a, 2, 1) }, "(2, 3)")
	}
}

// TestSpecialFloat32Accuracy compares the float32 kernels written in this
// package against the float64 standard library over their whole range.
func TestSpecialFloat32Accuracy(t *testing.T) {
	cases := []struct {
		name   string
		op     func(*Tensor) *Tensor // the tensor op, which uses the run kernel
		ref    func(float64) float64
		lo, hi float64
		ulps   float64
	}{
		{"exp", Exp, math.Exp, -104, 89, 1.5},
		{"tanh", Tanh, math.Tanh, -12, 12, 2},
		{"sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, -100, 40, 3},
		{"softplus", Softplus, func(x float64) float64 { return math.Log1p(math.Exp(x)) }, -80, 80, 3},
		{"expm1", Expm1, math.Expm1, -20, 88.8, 3},
		// For negative x, rounding x/√2 to float32 alone costs up to
		// x²·2⁻²⁴ relative (erfc's conditioning); the tail is checked below.
		{"gelu", Gelu, func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }, -2, 12, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const steps = 20011
			xs := make([]float32, steps+1)
			for i := range xs {
				xs[i] = float32(c.lo + (c.hi-c.lo)*float64(i)/steps)
			}
			x := FromFloat32s(xs)
			for _, layout := range []string{"contiguous", "strided"} {
				in := x
				if layout == "strided" {
					in = ewStrided(Float32, x.Values())
				}
				got := c.op(in).Float32s()
				worst, at := 0.0, 0.0
				for i, xi := range xs {
					want := c.ref(float64(xi))
					w32 := float32(want)
					if math.IsInf(float64(w32), 0) {
						assert.Equal(t, w32, got[i], "x=%v", xi)
						continue
					}
					// one ulp of the float32 result, at least the smallest subnormal
					aw := math.Abs(float64(w32))
					ulp := math.Max(float64(math.Nextafter32(float32(aw), float32(math.Inf(1))))-aw, 0x1p-149)
					if e := math.Abs(float64(got[i])-want) / ulp; e > worst {
						worst, at = e, float64(xi)
					}
				}
				assert.LessOrEqual(t, worst, c.ulps, "%s: worst error %.2f ulp at x=%v", layout, worst, at)
			}
		})
	}
	for x := float32(-12); x < -2; x += 0.01 {
		want := 0.5 * float64(x) * math.Erfc(-float64(x)/math.Sqrt2)
		assert.InEpsilon(t, want, float64(gelu32(x)), (16+2*float64(x*x))*0x1p-24, "gelu(%v)", x)
	}
	// Subnormal and overflow edges of exp.
	assert.InDelta(t, 3.720075976020836e-44, float64(exp32(-100)), 0x1p-149)
	assert.InDelta(t, 2.7230878250681116e+38, float64(exp32(88.5)), 2.7230878250681116e+38*2e-7)
	assert.True(t, math.IsInf(float64(exp32(88.75)), 1))
	assert.Equal(t, float32(0), exp32(-105))
}

// TestSpecialDigammaIdentities checks ψ(x+1) − ψ(x) = 1/x and the
// reflection ψ(1−x) − ψ(x) = π·cot(πx) over a sweep, in both dtypes.
func TestSpecialDigammaIdentities(t *testing.T) {
	for _, dt := range ewBoth {
		t.Run(dt.String(), func(t *testing.T) {
			// Multiples of 1/8, so x+1 and 1−x are exact in float32 too.
			var xs []float64
			for x := -7.875; x < 40; x += 0.375 {
				if x == math.Floor(x) {
					continue // ψ(x) or ψ(1−x) is at a pole
				}
				xs = append(xs, x)
			}
			x := FromValues(dt, xs)
			psi := Digamma(x).Values()
			psi1 := Digamma(AddScalar(x, 1)).Values()
			psiRefl := Digamma(MulScalar(AddScalar(x, -1), -1)).Values()
			xv := x.Values() // the inputs as rounded to dt
			tol := 1e-12
			if dt == Float32 {
				tol = 2e-5
			}
			for i, v := range xv {
				scale := math.Max(1, math.Abs(psi[i])) + math.Abs(1/v)
				assert.InDelta(t, 1/v, psi1[i]-psi[i], tol*scale, "recurrence at %v", v)
				cot := math.Cos(math.Pi*v) / math.Sin(math.Pi*v)
				assert.InDelta(t, math.Pi*cot, psiRefl[i]-psi[i], tol*(scale+math.Abs(math.Pi*cot)), "reflection at %v", v)
			}
		})
	}
}

// TestSpecialPowMatchesMathPow checks float32 Pow follows math.Pow's special
// cases, which math32.Pow does not for ±0.5 and huge exponents.
func TestSpecialPowMatchesMathPow(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5, 3, ewInf, -ewInf, ewNaN}
	ys := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, 3, -3, 2.5, ewInf, -ewInf, ewNaN, 1e10, -1e10, 1 << 31}
	for _, dt := range ewBoth {
		var av, bv, want []float64
		for _, x := range xs {
			for _, y := range ys {
				av = append(av, x)
				bv = append(bv, y)
				w := math.Pow(x, y)
				if dt == Float32 {
					w = float64(float32(w))
				}
				want = append(want, w)
			}
		}
		got := Pow(FromValues(dt, av), FromValues(dt, bv))
		ewAssertValues(t, dt, ewDefTol, want, got, "Pow "+dt.String())
		// Signs of zero matter for 1/x downstream.
		for i, w := range want {
			if w == 0 {
				assert.Equal(t, math.Signbit(w), math.Signbit(got.Values()[i]), "sign of Pow(%v, %v)", av[i], bv[i])
			}
		}
	}
}

type ewBinaryCase struct {
	name    string
	f       func(a, b *Tensor) *Tensor
	fTo     func(dst, a, b *Tensor) *Tensor
	ref     func(x, y float64) float64 // scalar reference, for the broadcast tests
	a, b    []float64
	want    []float64
	hasNaNs bool
}

func ewB2F(c bool) float64 {
	if c {
		return 1
	}
	return 0
}

func ewBinaryCases() []ewBinaryCase {
	a := []float64{1, 2, 3, ewNaN, -ewInf, 0}
	b := []float64{2, 2, 2, ewNaN, -ewInf, ewNaN}
	return []ewBinaryCase{
		{"Pow", Pow, PowTo, math.Pow, []float64{2, 2, -8, 0, -2, 4, 9}, []float64{3, -1, 1.5, 0, 0.5, 0.5, -0.5},
			[]float64{8, 0.5, ewNaN, 1, ewNaN, 2, 1.0 / 3}, true},
		{"Maximum", Maximum, MaximumTo, math.Max, []float64{1, 5, ewNaN, -ewInf, 2}, []float64{2, 3, 1, -7, ewNaN},
			[]float64{2, 5, ewNaN, -7, ewNaN}, true},
		{"Minimum", Minimum, MinimumTo, math.Min, []float64{1, 5, ewNaN, ewInf, 2}, []float64{2, 3, 1, 7, ewNaN},
			[]float64{1, 3, ewNaN, 7, ewNaN}, true},
		{"CompareEqual", Equal, EqualTo, func(x, y float64) float64 { return ewB2F(x == y) }, a, b, []float64{0, 1, 0, 0, 1, 0}, false},
		{"CompareNotEqual", NotEqual, NotEqualTo, func(x, y float64) float64 { return ewB2F(x != y) }, a, b, []float64{1, 0, 1, 1, 0, 1}, false},
		{"CompareLess", Less, LessTo, func(x, y float64) float64 { return ewB2F(x < y) }, a, b, []float64{1, 0, 0, 0, 0, 0}, false},
		{"CompareLessEqual", LessEqual, LessEqualTo, func(x, y float64) float64 { return ewB2F(x <= y) }, a, b, []float64{1, 1, 0, 0, 1, 0}, false},
		{"CompareGreater", Greater, GreaterTo, func(x, y float64) float64 { return ewB2F(x > y) }, a, b, []float64{0, 0, 1, 0, 0, 0}, false},
		{"CompareGreaterEqual", GreaterEqual, GreaterEqualTo, func(x, y float64) float64 { return ewB2F(x >= y) }, a, b, []float64{0, 1, 1, 0, 1, 0}, false},
	}
}

// TestBinaryValues checks each op elementwise in both dtypes, allocating,
// into dst, with dst aliasing either input, and on strided inputs.
func TestBinaryValues(t *testing.T) {
	for _, c := range ewBinaryCases() {
		for _, dt := range ewBoth {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				mk := func() (*Tensor, *Tensor) { return FromValues(dt, c.a), FromValues(dt, c.b) }
				a, b := mk()
				ewAssertValues(t, dt, ewDefTol, c.want, c.f(a, b), "allocating")
				ewAssertValues(t, dt, ewDefTol, c.want, c.f(ewStrided(dt, c.a), ewStrided(dt, c.b)), "strided")
				dst := New(dt, len(c.a))
				assert.Same(t, dst, c.fTo(dst, a, b))
				ewAssertValues(t, dt, ewDefTol, c.want, dst, "dst")
				a, b = mk()
				c.fTo(a, a, b)
				ewAssertValues(t, dt, ewDefTol, c.want, a, "dst aliases a")
				a, b = mk()
				c.fTo(b, a, b)
				ewAssertValues(t, dt, ewDefTol, c.want, b, "dst aliases b")
			})
		}
	}
}

// ewRefBroadcast computes f over the broadcast of a and b element by element
// with index arithmetic of its own, as an oracle for the kernels.
func ewRefBroadcast(a, b *Tensor, shape []int, f func(x, y float64) float64) []float64 {
	n := shapeSize(shape)
	out := make([]float64, 0, n)
	idx := make([]int, len(shape))
	src := func(t *Tensor) []int {
		lead := len(shape) - t.Dim()
		j := make([]int, t.Dim())
		for d := range j {
			if t.Shape()[d] != 1 {
				j[d] = idx[lead+d]
			}
		}
		return j
	}
	for i := 0; i < n; i++ {
		rem := i
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		out = append(out, f(a.At(src(a)...), b.At(src(b)...)))
	}
	return out
}

// TestBinaryBroadcast checks every binary op over broadcasts of each side,
// rank extension, size-1 and size-0 dimensions and a transposed operand.
func TestBinaryBroadcast(t *testing.T) {
	shapes := []struct{ a, b, out []int }{
		{[]int{3}, []int{2, 4, 3}, []int{2, 4, 3}},
		{[]int{2, 4, 3}, []int{3}, []int{2, 4, 3}},
		{[]int{2, 1, 3}, []int{4, 1}, []int{2, 4, 3}},
		{[]int{1, 3}, []int{2, 1}, []int{2, 3}},
		{[]int{}, []int{2, 3}, []int{2, 3}},
		{[]int{2, 3}, []int{}, []int{2, 3}},
		{[]int{0, 3}, []int{3}, []int{0, 3}},
		{[]int{2, 0}, []int{1, 1}, []int{2, 0}},
		{[]int{1}, []int{1, 1, 1}, []int{1, 1, 1}},
	}
	for _, c := range ewBinaryCases() {
		for _, dt := range ewBoth {
			for _, s := range shapes {
				a := ewReshape(Arange(dt, 0, float64(shapeSize(s.a)), 1), s.a)
				b := ewReshape(MulScalar(AddScalar(Arange(dt, 0, float64(shapeSize(s.b)), 1), -2), 0.5), s.b)
				got := c.f(a, b)
				require.Equal(t, s.out, got.Shape(), "%s %v %v", c.name, s.a, s.b)
				want := ewRefBroadcast(a, b, s.out, c.ref)
				ewAssertValues(t, dt, ewDefTol, want, got, c.name+" "+fmtShape(s.a)+" with "+fmtShape(s.b))
				dst := New(dt, s.out...)
				c.fTo(dst, a, b)
				ewAssertValues(t, dt, ewDefTol, want, dst, c.name+" dst")
			}
			// A transposed (non-contiguous) operand broadcast against a row.
			base := FromValues(dt, []float64{1, 4, 2, 5, 3, 6}, 3, 2)
			tr := ewTransposed(base) // [[1 2 3] [4 5 6]]
			row := FromValues(dt, []float64{3, 0.5, 2}, 3)
			want := ewRefBroadcast(tr, row, []int{2, 3}, c.ref)
			ewAssertValues(t, dt, ewDefTol, want, c.f(tr, row), c.name+" transposed")
			ewAssertValues(t, dt, ewDefTol, ewRefBroadcast(row, tr, []int{2, 3}, c.ref), c.f(row, tr), c.name+" transposed rhs")
		}
	}
}

// ewReshape returns a contiguous copy of t with the given shape (a
// test-local stand-in for Reshape, which lives in another file).
func ewReshape(t *Tensor, shape []int) *Tensor {
	v := *t.Clone()
	v.shape = cloneInts(shape)
	v.strides = rowMajorStrides(shape)
	return &v
}

// TestBinaryErrors checks that misuse names the op, shapes and dtypes.
func TestBinaryErrors(t *testing.T) {
	for _, c := range ewBinaryCases() {
		op := strings.TrimPrefix(c.name, "Compare")
		for _, dt := range ewBoth {
			other := Float64
			if dt == Float64 {
				other = Float32
			}
			ewRequireOpError(t, op, func() { c.f(New(dt, 2, 3), New(dt, 4)) }, "(2, 3)", "(4,)")
			ewRequireOpError(t, op, func() { c.f(New(dt, 3), New(other, 3)) }, "(3,)", "float32", "float64")
			ewRequireOpError(t, op, func() { c.fTo(New(dt, 3, 2), New(dt, 2, 3), New(dt, 3)) }, "(3, 2)", "(2, 3)")
			ewRequireOpError(t, op, func() { c.fTo(New(other, 2, 3), New(dt, 2, 3), New(dt, 3)) }, other.String())
		}
	}
}

// TestWhere checks selection, NaN conditions, three-way broadcasting,
// aliasing and errors in both dtypes.
func TestWhere(t *testing.T) {
	for _, dt := range ewBoth {
		t.Run(dt.String(), func(t *testing.T) {
			cond := FromValues(dt, []float64{1, 0, ewNaN, -2, 0})
			a := FromValues(dt, []float64{1, 2, 3, 4, 5})
			b := FromValues(dt, []float64{10, 20, 30, 40, 50})
			want := []float64{1, 20, 3, 4, 50}
			ewAssertValues(t, dt, ewDefTol, want, Where(cond, a, b), "Where")
			ewAssertValues(t, dt, ewDefTol, want, Where(ewStrided(dt, cond.Values()), ewStrided(dt, a.Values()), b), "strided")
			dst := New(dt, 5)
			assert.Same(t, dst, WhereTo(dst, cond, a, b))
			ewAssertValues(t, dt, ewDefTol, want, dst, "dst")
			WhereTo(b, cond, a, b)
			ewAssertValues(t, dt, ewDefTol, want, b, "dst aliases b")
			c2 := cond.Clone()
			WhereTo(c2, c2, a, FromValues(dt, []float64{10, 20, 30, 40, 50}))
			ewAssertValues(t, dt, ewDefTol, want, c2, "dst aliases cond")

			// cond (2, 1), a (3,), b scalar -> (2, 3).
			cb := FromValues(dt, []float64{0, 1}, 2, 1)
			ab := FromValues(dt, []float64{1, 2, 3}, 3)
			bb := Scalar(dt, -1)
			got := Where(cb, ab, bb)
			assert.Equal(t, []int{2, 3}, got.Shape())
			assert.Equal(t, []float64{-1, -1, -1, 1, 2, 3}, got.Values())
			// cond (3,), a (2, 1), b (1, 3), transposed a.
			base := FromValues(dt, []float64{7, 8}, 1, 2)
			got = Where(FromValues(dt, []float64{1, 0, 1}), ewTransposed(base), FromValues(dt, []float64{-1, -2, -3}, 1, 3))
			assert.Equal(t, []float64{7, -2, 7, 8, -2, 8}, got.Values())
			// size-0
			got = Where(New(dt, 0, 3), New(dt, 3), New(dt, 1))
			assert.Equal(t, []int{0, 3}, got.Shape())

			other := Float64
			if dt == Float64 {
				other = Float32
			}
			ewRequireOpError(t, "Where", func() { Where(New(other, 3), New(dt, 3), New(dt, 3)) }, "float32", "float64")
			ewRequireOpError(t, "Where", func() { Where(New(dt, 3), New(dt, 3), New(other, 3)) }, "float32", "float64")
			ewRequireOpError(t, "Where", func() { Where(New(dt, 2), New(dt, 3), New(dt, 3)) }, "(2,)", "(3,)")
			ewRequireOpError(t, "Where", func() { WhereTo(New(dt, 2), New(dt, 3), New(dt, 3), New(dt, 3)) }, "(2,)", "(3,)")
		})
	}
}

// TestElementwiseToFormsDoNotAllocate checks the destination forms of the
// hot kernels allocate nothing when shapes already match, so a steady
// training loop can reuse its buffers.
func TestElementwiseToFormsDoNotAllocate(t *testing.T) {
	for _, dt := range ewBoth {
		a, c, dst := New(dt, 16, 16), New(dt, 16, 16), New(dt, 16, 16)
		forms := map[string]func(){
			"ExpTo":       func() { ExpTo(dst, a) },
			"SigmoidTo":   func() { SigmoidTo(dst, a) },
			"TanhTo":      func() { TanhTo(dst, a) },
			"ReluTo":      func() { ReluTo(dst, a) },
			"LogTo":       func() { LogTo(dst, a) },
			"AddScalarTo": func() { AddScalarTo(dst, a, 1) },
			"MulScalarTo": func() { MulScalarTo(dst, a, 2) },
			"ClampTo":     func() { ClampTo(dst, a, 0, 1) },
			"MaximumTo":   func() { MaximumTo(dst, a, c) },
			"LessTo":      func() { LessTo(dst, a, c) },
			"WhereTo":     func() { WhereTo(dst, c, a, a) },
		}
		for name, f := range forms {
			assert.Zero(t, testing.AllocsPerRun(20, f), "%s %v", name, dt)
		}
	}
}
