package tensor

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The vector sigmoid and tanh, and the derivative rules of both, must match
// the scalar code bit for bit on every length (full blocks and tails), on
// blocks that fall back to the scalar code (|x| > 87, NaN, ±Inf) and on
// signed zeros and subnormals.
func TestSigmoidVectorMatchesScalar(t *testing.T) {
	rng := NewRNG(7)
	forVectorInputs32(rng, func(x []float32) {
		n := len(x)
		got, want := make([]float32, n), make([]float32, n)
		sigmoidRun32(got, x)
		sigmoidScalar32(want, x)
		requireSameBits32(t, x, want, got)
		tanhRun32(got, x)
		tanhScalar32(want, x)
		requireSameBits32(t, x, want, got)
		v := rng.Normal(Float32, 0, 1, n).Float32s()
		sigmoidGradRun32(got, v, x)
		sigmoidGradScalar32(want, v, x)
		requireSameBits32(t, x, want, got)
		// tanh's derivative rule, with x standing in for tanh's output.
		tanhGradRun(got, v, x)
		for i := range want {
			want[i] = tanhGrad(v[i], x[i])
		}
		requireSameBits32(t, x, want, got)
	})
	// σ(0) = 1/2 and σ(ln 3) = 3/4 to within rounding, in a full block.
	x := []float32{0, float32(math.Log(3)), 0, 0, 0, 0, 0, 0}
	y := make([]float32, 8)
	sigmoidRun32(y, x)
	require.Equal(t, float32(0.5), y[0])
	require.InDelta(t, 0.75, float64(y[1]), 1e-7)
}

// A dense grid of [-88, 88] in steps of 2⁻¹⁰, through both branches of
// tanh and up to where the vector kernels hand over to the scalar code.
func TestActivationVectorMatchesScalarGrid(t *testing.T) {
	n := 176 << 10
	x := make([]float32, n)
	for i := range x {
		x[i] = -88 + float32(i)/1024
	}
	got, want := make([]float32, n), make([]float32, n)
	sigmoidRun32(got, x)
	sigmoidScalar32(want, x)
	requireSameBits32(t, x, want, got)
	tanhRun32(got, x)
	tanhScalar32(want, x)
	requireSameBits32(t, x, want, got)
	v := make([]float32, n)
	for i := range v {
		v[i] = 1 - float32(i%7)/3
	}
	sigmoidGradRun32(got, v, x)
	sigmoidGradScalar32(want, v, x)
	requireSameBits32(t, x, want, got)
	// tanh(±0.625) sits on the branch boundary; tanh(x) → ±1 far out.
	y := make([]float32, 8)
	tanhRun32(y, []float32{0.625, -0.625, 40, -40, 0, 0, 0, 0})
	require.InDelta(t, math.Tanh(0.625), float64(y[0]), 1e-7)
	require.InDelta(t, -math.Tanh(0.625), float64(y[1]), 1e-7)
	require.Equal(t, []float32{1, -1}, y[2:4])
}

func requireSameBits32(t *testing.T, x, want, got []float32) {
	t.Helper()
	for i := range want {
		w, g := want[i], got[i]
		if w != w && g != g || math.Float32bits(w) == math.Float32bits(g) {
			continue // testify per element would dominate the test's time
		}
		require.Failf(t, "vector and scalar results differ", "i=%d x=%v: want %v, got %v", i, x[i], w, g)
	}
}

// Add, Sub and Mul on contiguous runs of every length (vector blocks of 32
// and 8 elements and scalar tails), including in place, must give exactly
// the IEEE result of each element's operation.
func TestArithVectorRuns(t *testing.T) {
	rng := NewRNG(11)
	for _, dt := range cvDTypes {
		for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 40, 100, 257} {
			xv := rng.Normal(dt, 0, 3, n).Values()
			yv := rng.Normal(dt, 0, 3, n).Values()
			xv[0], yv[n-1] = math.Inf(1), math.NaN()
			x, y := FromValues(dt, xv, n), FromValues(dt, yv, n)
			for _, c := range []struct {
				name string
				f    func(dst, a, b *Tensor) *Tensor
				op   func(a, b float64) float64
			}{
				{"Add", AddTo, func(a, b float64) float64 { return a + b }},
				{"Sub", SubTo, func(a, b float64) float64 { return a - b }},
				{"Mul", MulTo, func(a, b float64) float64 { return a * b }},
			} {
				got := c.f(nil, x, y).Values()
				inPlace := x.Clone()
				c.f(inPlace, inPlace, y)
				for i := range got {
					want := c.op(xv[i], yv[i])
					if dt == Float32 {
						want = float64(float32(want)) // exact: the float32 operands' result rounded once
					}
					if want != want {
						require.True(t, got[i] != got[i], "%s %v n=%d i=%d", c.name, dt, n, i)
						continue
					}
					require.Equal(t, want, got[i], "%s %v n=%d i=%d", c.name, dt, n, i)
					require.Equal(t, want, inPlace.Values()[i], "%s in place %v n=%d i=%d", c.name, dt, n, i)
				}
			}
		}
	}
}

// Relu and ReluGrad on runs of every length must match the scalar
// definitions bit for bit: max(x, 0) as Go defines it (−0 gives +0, NaN
// stays NaN) and v·sign(y).
func TestReluVectorRuns(t *testing.T) {
	rng := NewRNG(5)
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-310, -1e-310, 1e-42, -1e-42}
	for _, dt := range cvDTypes {
		for _, n := range []int{1, 7, 8, 9, 16, 23, 64, 101} {
			xv := rng.Normal(dt, 0, 1, n).Values()
			vv := rng.Normal(dt, 0, 1, n).Values()
			for i := range xv {
				if i%3 == 1 {
					xv[i] = special[(i/3)%len(special)]
				}
			}
			x, v := FromValues(dt, xv, n), FromValues(dt, vv, n)
			xr, vr := x.Values(), v.Values() // as stored in dt
			relu, grad := Relu(x).Values(), ReluGrad(v, x).Values()
			for i := range xr {
				want := max(xr[i], 0)
				s := xr[i]
				if s > 0 {
					s = 1
				} else if s < 0 {
					s = -1
				}
				wantGrad := vr[i] * s
				if dt == Float32 {
					want, wantGrad = float64(float32(want)), float64(float32(wantGrad))
				}
				sameOrNaN := func(a, b float64) bool {
					return a != a && b != b || math.Float64bits(a) == math.Float64bits(b)
				}
				require.True(t, sameOrNaN(want, relu[i]), "Relu %v n=%d x=%v: want %v, got %v", dt, n, xr[i], want, relu[i])
				require.True(t, sameOrNaN(wantGrad, grad[i]), "ReluGrad %v n=%d v=%v y=%v: want %v, got %v", dt, n, vr[i], xr[i], wantGrad, grad[i])
			}
		}
	}
}

// forVectorInputs32 calls f on normal inputs of every length the vector
// kernels treat differently (full blocks, tails), at three scales, with
// every 13th value replaced by a special one: signed zeros, the ±87 bounds
// where the kernels fall back to scalar code, ±Inf, NaN, subnormals.
func forVectorInputs32(rng *RNG, f func(x []float32)) {
	special := []float32{0, float32(math.Copysign(0, -1)), 87, -87, 87.5, -87.5, 100, -100,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -1e-40, 0.5, -0.5}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 64, 1000, 1003} {
		for _, scale := range []float64{1, 10, 60} {
			x := rng.Normal(Float32, 0, scale, n).Float32s()
			for i := range x {
				if i%13 == 5 {
					x[i] = special[(i/13)%len(special)]
				}
			}
			f(x)
		}
	}
}

// The vector GELU and its derivative must match gelu32 and geluGrad32 bit
// for bit: on random runs with special values (blocks that fall back to
// the scalar code), and on a grid of [−16, 16] in steps of 2⁻¹⁰ through
// both signs of x and across the kernels' limit |x| = 12.
func TestGeluVectorMatchesScalar(t *testing.T) {
	rng := NewRNG(8)
	check := func(x []float32) {
		n := len(x)
		got, want := make([]float32, n), make([]float32, n)
		geluRun32(got, x)
		geluScalar32(want, x)
		requireSameBits32(t, x, want, got)
		v := rng.Normal(Float32, 0, 1, n).Float32s()
		geluGradRun32(got, v, x)
		geluGradScalar32(want, v, x)
		requireSameBits32(t, x, want, got)
	}
	forVectorInputs32(rng, check)
	x := make([]float32, 32<<10)
	for i := range x {
		x[i] = -16 + float32(i)/1024
	}
	check(x)
	// In a full block: gelu(0) = 0, gelu(−0.5) on the left branch's edge.
	y := make([]float32, 8)
	geluRun32(y, []float32{0, -0.5, 1, 0, 0, 0, 0, 0})
	require.Equal(t, float32(0), y[0])
	require.InEpsilon(t, -0.5*0.5*math.Erfc(0.5/math.Sqrt2), float64(y[1]), 1e-6)
	require.InEpsilon(t, 0.5*math.Erfc(-1/math.Sqrt2), float64(y[2]), 1e-6)
}

// Softmax's exponentials, exp32(x − m), must match the scalar exp32 bit
// for bit whether a block went through the vector kernel or not (random
// runs with special values, and shifts that put values on both sides of
// the kernel's limit |x − m| = 87); their sum is sum8's fixed order.
func TestExpShiftVectorMatchesScalar(t *testing.T) {
	rng := NewRNG(9)
	check := func(x []float32) {
		for _, m := range []float32{0, 3, -40, 50} {
			got := make([]float32, len(x))
			s := expShift32(got, x, m)
			want := make([]float32, len(x))
			for i, v := range x {
				want[i] = exp32(v - m)
			}
			requireSameBits32(t, x, want, got)
			require.Equal(t, math.Float32bits(sum8(want)), math.Float32bits(s))
		}
	}
	forVectorInputs32(rng, check)
	// sum8 of 1..20: interleaved partial sums of exact integers.
	x := make([]float32, 20)
	for i := range x {
		x[i] = float32(i + 1)
	}
	require.Equal(t, float32(210), sum8(x))
}

// The vector leaky ReLU and its derivative rule give what the scalar
// leakyRelu and leakyReluGrad give, bit for bit, on both dtypes, in full
// vectors and tails, with signed zeros, NaN, infinities and subnormals.
func TestLeakyVectorRuns(t *testing.T) {
	rng := NewRNG(6)
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-310, -1e-310, 1e-42, -1e-42}
	const slope = 0.2
	for _, dt := range cvDTypes {
		for _, n := range []int{1, 7, 8, 9, 16, 23, 64, 101} {
			xv := rng.Normal(dt, 0, 1, n).Values()
			vv := rng.Normal(dt, 0, 1, n).Values()
			for i := range xv {
				if i%3 == 1 {
					xv[i] = special[(i/3)%len(special)]
				}
			}
			x, v := FromValues(dt, xv, n), FromValues(dt, vv, n)
			fwd, grad := LeakyRelu(x, slope), LeakyReluGrad(v, x, slope)
			for i := range n {
				var want, wantGrad float64
				if dt == Float32 {
					xs, vs := x.Float32s()[i], v.Float32s()[i]
					want, wantGrad = float64(leakyRelu(xs, float32(slope), 0)), float64(leakyReluGrad(vs, xs, float32(slope)))
				} else {
					xs, vs := x.Float64s()[i], v.Float64s()[i]
					want, wantGrad = leakyRelu(xs, slope, 0), leakyReluGrad(vs, xs, slope)
				}
				got, gotGrad := fwd.Values()[i], grad.Values()[i]
				require.True(t, want != want && got != got || math.Float64bits(want) == math.Float64bits(got),
					"LeakyRelu %v n=%d x=%v: want %v, got %v", dt, n, xv[i], want, got)
				require.Equal(t, math.Float64bits(wantGrad), math.Float64bits(gotGrad), "LeakyReluGrad %v n=%d x=%v", dt, n, xv[i])
			}
		}
	}
}

// max8 on float32 rows (vector lane maxima, then the tail) equals the
// plain running maximum: on rows of every length up to 70, with the
// largest value at each position, with −Inf rows, and NaN anywhere giving
// NaN. Of ±0 either may come back, so values compare with ==.
func TestMax8Float32(t *testing.T) {
	rng := NewRNG(4)
	ninf := float32(math.Inf(-1))
	plain := func(x []float32) float32 {
		m := ninf
		for _, v := range x {
			if v != v {
				return v
			}
			m = max(m, v)
		}
		return m
	}
	for n := 0; n <= 70; n++ {
		x := rng.Normal(Float32, 0, 1, max(n, 1)).Values()[:n]
		row := make([]float32, n)
		for i, v := range x {
			row[i] = float32(v)
		}
		require.Equal(t, plain(row), max8(row, ninf), "n=%d", n)
		for at := 0; at < n; at++ {
			r := slices.Clone(row)
			r[at] = 100
			require.Equal(t, float32(100), max8(r, ninf), "n=%d, largest at %d", n, at)
			r[at] = float32(math.NaN())
			require.True(t, math.IsNaN(float64(max8(r, ninf))), "n=%d, NaN at %d", n, at)
		}
		inf := slices.Repeat([]float32{ninf}, n)
		require.Equal(t, ninf, max8(inf, ninf), "n=%d, all −Inf", n)
	}
	require.Equal(t, float32(0), max8([]float32{-1, float32(math.Copysign(0, -1)), 0, -2, -3, -4, -5, -6, -7}, ninf))
}

// sum8, sqDev8, dot8, affineRun and mulScalarRun, whose leading blocks run in vector kernels,
// give the scalar loops' bits: eight partial sums each taking its
// elements in order, combined pairwise; x·s + b as a product then a sum.
// Every length up to 70 in both dtypes, with signed zeros, subnormals,
// infinities and NaN among the values.
func TestRowKernelsMatchScalar(t *testing.T) {
	rng := NewRNG(12)
	special := []float64{0, math.Copysign(0, -1), 1e-310, -1e-42, math.Inf(1), math.Inf(-1), math.NaN(), 3e38}
	for _, dt := range cvDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			for n := 0; n <= 70; n++ {
				vals := rng.Normal(dt, 0, 10, n+1).Values()[:n]
				if n > 5 {
					vals[n/2] = special[n%len(special)]
				}
				if dt == Float32 {
					checkRowKernels(t, toF32(vals), n)
				} else {
					checkRowKernels(t, vals, n)
				}
			}
		})
	}
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func checkRowKernels[T Float](t *testing.T, x []T, n int) {
	t.Helper()
	pairwise := func(p [8]T) T { return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])) }
	var ps, pq [8]T
	m := T(0.375)
	for i, v := range x {
		ps[i%8] += v
		d := v - m
		pq[i%8] += T(d * d) // T(·) rounds: no FMA under GOAMD64=v3
	}
	same := func(want, got T, what string) {
		t.Helper()
		w, g := float64(want), float64(got)
		if !(w == g && math.Signbit(w) == math.Signbit(g)) && !(math.IsNaN(w) && math.IsNaN(g)) {
			t.Fatalf("%s, n=%d: got %v, want %v", what, n, got, want)
		}
	}
	same(pairwise(ps), sum8(x), "sum8")
	same(pairwise(pq), sqDev8(x, m), "sqDev8")
	y := make([]T, len(x))
	var pd [8]T
	for i, v := range x {
		y[i] = T(i%5) - 1.5
		pd[i%8] += T(v * y[i])
	}
	same(pairwise(pd), dot8(x, y), "dot8")
	s, b := T(-1.25), T(0.1)
	d := make([]T, len(x))
	affineRun(d, x, s, b)
	for i, v := range x {
		same(T(v*s)+b, d[i], "affineRun")
	}
	mulScalarRun(d, x, s, 0)
	for i, v := range x {
		same(v*s, d[i], "mulScalarRun")
	}
}
