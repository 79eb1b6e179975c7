package tensor

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// σ'(x) = σ(x)σ(−x): σ'(0) = 1/4, σ'(ln 3) = σ'(−ln 3) = (3/4)(1/4) = 3/16,
// and far out it is e^−|x| to within rounding (σ'(−100) = e⁻¹⁰⁰ in float64).
func TestSigmoidGradHandValues(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := FromValues(dt, []float64{0, math.Log(3), -math.Log(3), 0}, 4)
			v := FromValues(dt, []float64{1, 2, -16, 4}, 4)
			tol := 1e-6
			if dt == Float64 {
				tol = 1e-14
			}
			assert.InDeltaSlice(t, []float64{0.25, 0.375, -3, 1}, SigmoidGrad(v, x).Values(), tol)

			dst := Full(dt, 7, 2, 4)
			vb := FromValues(dt, []float64{1, 1, 1, 1, 2, 2, 2, 2}, 2, 4)
			require.Same(t, dst, SigmoidGradTo(dst, vb, x))
			assert.InDeltaSlice(t, []float64{0.25, 0.1875, 0.1875, 0.25, 0.5, 0.375, 0.375, 0.5}, dst.Values(), tol)
		})
	}
	far := SigmoidGrad(Scalar(Float64, 1), Scalar(Float64, -100)).Item()
	assert.InDelta(t, 1, far/math.Exp(-100), 1e-12)
	assert.Equal(t, 0.0, SigmoidGrad(Scalar(Float32, 1), Scalar(Float32, 200)).Item())
}

// The fused kernels must equal the unfused rules op for op, bit for bit,
// on long runs (the run kernels), strided views (the element kernels) and
// at the edges: ±0, beyond the exponential's range, NaN.
func TestActivationGradsMatchUnfusedRules(t *testing.T) {
	rng := NewRNG(3)
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			xv := rng.Normal(dt, 0, 6, 500).Values()
			xv = append(xv, 0, math.Copysign(0, -1), 88, -88, 100, -100, 1e-30, math.NaN())
			n := len(xv)
			x := FromValues(dt, xv, n)
			v := rng.Normal(dt, 0, 1, n)
			assertSameBits(t, Mul(v, Mul(Sigmoid(x), Sigmoid(Neg(x)))), SigmoidGrad(v, x))

			y := Tanh(x)
			assertSameBits(t, Mul(v, AddScalar(Neg(Square(y)), 1)), TanhGrad(v, y))

			// Strided operands take the element-at-a-time kernels.
			xs := Slice(x, 0, 0, n, 2)
			vs := Slice(v, 0, 0, n, 2)
			assertSameBits(t, Mul(vs, Mul(Sigmoid(xs), Sigmoid(Neg(xs)))), SigmoidGrad(vs, xs))
			ys := Slice(y, 0, 0, n, 2)
			assertSameBits(t, Mul(vs, AddScalar(Neg(Square(ys)), 1)), TanhGrad(vs, ys))
		})
	}
	// tanh'(x) = 1 − tanh²(x): at y = 0.5 it is 0.75.
	assert.Equal(t, 1.5, TanhGrad(Scalar(Float32, 2), Scalar(Float32, 0.5)).Item())
}

func assertSameBits(t *testing.T, want, got *Tensor) {
	t.Helper()
	w, g := want.Values(), got.Values()
	require.Equal(t, len(w), len(g))
	for i := range w {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
			continue
		}
		require.Equal(t, math.Float64bits(w[i]), math.Float64bits(g[i]), "element %d: want %v, got %v", i, w[i], g[i])
	}
}

// assertSameBitsAnyProcs runs f with GOMAXPROCS 1 and then with at least
// 2, and requires every tensor it returns to have the same bits both times.
func assertSameBitsAnyProcs(t *testing.T, f func() []*Tensor) {
	t.Helper()
	var got [2][]*Tensor
	for i, procs := range []int{1, max(2, runtime.NumCPU())} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			got[i] = f()
		}()
	}
	require.Len(t, got[1], len(got[0]))
	for k := range got[0] {
		assertSameBits(t, got[0][k], got[1][k])
	}
}

// ReluGrad(v, y) passes v where y > 0 and gives v·0 (a signed zero) where
// y = 0; a NaN in y propagates; y < 0 flips the sign, as sign(y) does.
func TestReluGrad(t *testing.T) {
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			v := FromValues(dt, []float64{1.5, -2, 3, -4, 5, 6}, 2, 3)
			y := FromValues(dt, []float64{0.5, 2, 0, 0, math.NaN(), -1}, 2, 3)
			got := ReluGrad(v, y).Values()
			assert.Equal(t, []float64{1.5, -2, 0, 0}, got[:4])
			assert.False(t, math.Signbit(got[2]))
			assert.True(t, math.Signbit(got[3]), "−4·0 is −0")
			assert.True(t, math.IsNaN(got[4]))
			assert.Equal(t, -6.0, got[5])

			// Broadcasting y over rows, into a reused destination.
			dst := Full(dt, 9, 2, 3)
			yb := FromValues(dt, []float64{1, 0, 2}, 3)
			require.Same(t, dst, ReluGradTo(dst, v, yb))
			assert.Equal(t, []float64{1.5, 0, 3, -4, 0, 6}, dst.Values())

			// A long run takes the vectorised loop.
			n := 1000
			vv, yy, want := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range vv {
				vv[i] = float64(i + 1)
				if i%3 == 0 {
					yy[i] = float64(i%7) + 0.5
					want[i] = vv[i]
				}
			}
			assert.Equal(t, want, ReluGrad(FromValues(dt, vv, n), FromValues(dt, yy, n)).Values())
		})
	}
}

// gelu'(x) = Φ(x) + x·φ(x): gelu'(0) = 1/2, gelu'(1) = Φ(1) + φ(1) =
// 0.8413447460685429 + 0.24197072451914337, gelu'(−1) = Φ(−1) − φ(−1) =
// 0.15865525393145707 − 0.24197072451914337; 1 and 0 at ±Inf; and far
// left it is x·φ(x)·(1 − 1/x² + …) → 0 without cancelling.
func TestGeluGradHandValues(t *testing.T) {
	inf := math.Inf(1)
	want := []float64{0.5, 0.8413447460685429 + 0.24197072451914337, 0.15865525393145707 - 0.24197072451914337, 1, 0}
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := FromValues(dt, []float64{0, 1, -1, inf, -inf}, 5)
			v := FromValues(dt, []float64{2, 1, 1, 1, 1}, 5)
			w := append([]float64{1}, want[1:]...)
			tol := 1e-6
			if dt == Float64 {
				tol = 1e-15
			}
			assert.InDeltaSlice(t, w, GeluGrad(v, x).Values(), tol)
			dst := Full(dt, 7, 2, 5)
			require.Same(t, dst, GeluGradTo(dst, FromValues(dt, []float64{1, 3}, 2, 1), x))
			assert.InDelta(t, 3*want[1], dst.Values()[6], 3*tol)
		})
	}
	// x = −10: Φ(−10) = 7.61985302416e−24, −10·φ(−10) = −7.69459862671e−22.
	far := GeluGrad(Scalar(Float64, 1), Scalar(Float64, -10)).Item()
	assert.InDelta(t, 1, far/(7.619853024160527e-24-10*7.69459862670642e-23), 1e-12)
}

// The float32 GELU derivative (a fitted erfc and exp32) against the
// float64 one: within 1e−6 absolutely where it is of order one, and
// within 1e−5 relatively in the left tail, where it is tiny.
func TestGeluGrad32Accuracy(t *testing.T) {
	worst := 0.0
	for x := -4.0; x < 10; x += 1e-3 {
		worst = math.Max(worst, math.Abs(float64(geluGrad32(1, float32(x)))-geluDeriv64(float64(float32(x)))))
	}
	assert.Less(t, worst, 1e-6)
	for x := -13.0; x < -4; x += 1e-3 { // below −13 the values turn subnormal in float32
		want := geluDeriv64(float64(float32(x)))
		assert.InEpsilon(t, want, float64(geluGrad32(1, float32(x))), 1e-5, "x=%v", x)
	}
	assert.Equal(t, float32(0), geluGrad32(1, -100))
	assert.Equal(t, float32(2), geluGrad32(2, 100))
	assert.True(t, math.IsNaN(float64(geluGrad32(1, float32(math.NaN())))))
}

// A softmax large enough to be split over goroutines equals, bit for bit,
// the softmax of each of its slices computed alone (serially), along the
// last axis and along a middle one, for both dtypes and LogSoftmax.
func TestSoftmaxSplitMatchesSerial(t *testing.T) {
	rng := NewRNG(9)
	for _, dt := range cvDTypes {
		x := rng.Normal(dt, 0, 3, 300, 4, 64) // 76,800 elements: split
		for _, axis := range []int{2, 1} {
			for _, f := range []func(*Tensor, int) *Tensor{Softmax, LogSoftmax} {
				got := f(x, axis)
				for _, o := range []int{0, 151, 299} {
					slice := Slice(x, 0, o, o+1, 1).Contiguous() // 256 elements: serial
					assertSameBits(t, f(slice, axis), Slice(got, 0, o, o+1, 1).Contiguous())
				}
			}
		}
	}
}

// twoPhi32 against erfc(−x/√2) in float64 on [−12, 12]: for x < 0 (the
// erfc branch) within 5e−7 relatively (the fit's 1.2e−7 and float32
// rounding of t and of the polynomial's steps) plus 3·|h|·2⁻²⁴ for the roundings of h = −x²/2 and of the
// exponent h − 1.26551223 + P(t), which exp turns into relative errors;
// from 0 up (2 − erfc(|z|)) within 6.5e−7 absolutely: e's 5e−7 with
// e ≤ 1, plus the rounding of 2 − e in [1, 2).
func TestTwoPhi32(t *testing.T) {
	for x := -12.0; x <= 12; x += 1e-3 {
		xf := float32(x)
		h := float32(float32(-0.5*xf) * xf)
		got := float64(twoPhi32(xf, h))
		want := math.Erfc(-float64(xf) / math.Sqrt2)
		if xf < 0 {
			tol := 5e-7 + 3*math.Abs(float64(h))*0x1p-24
			require.InEpsilon(t, want, got, tol, "x=%v", xf)
		} else {
			require.InDelta(t, want, got, 6.5e-7, "x=%v", xf)
		}
	}
}

// The leaky ReLU's derivative is 1 for x > 0 and the slope elsewhere
// (x = 0 and NaN included), applied to v: with slope 0.25 (exact in
// binary) the products are exact.
func TestLeakyReluGradHandValues(t *testing.T) {
	nan := math.NaN()
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			x := FromValues(dt, []float64{2, -3, 0, 1e-30, -1e-30, nan}, 6)
			v := FromValues(dt, []float64{4, 4, 8, -2, -2, 1}, 6)
			assert.Equal(t, []float64{4, 1, 2, -2, -0.5, 0.25}, LeakyReluGrad(v, x, 0.25).Values())
			// Broadcasting v of shape (2, 1) against x of shape (6): rows 3, −1.
			dst := Full(dt, 7, 2, 6)
			require.Same(t, dst, LeakyReluGradTo(dst, FromValues(dt, []float64{3, -1}, 2, 1), x, 0.25))
			assert.Equal(t, []float64{3, 0.75, 0.75, 3, 0.75, 0.75, -1, -0.25, -0.25, -1, -0.25, -0.25}, dst.Values())
		})
	}
	require.Panics(t, func() { LeakyReluGrad(Zeros(Float64, 2), Zeros(Float64, 3), 0.2) })
}
