package tensor

import (
	"math"
	"math/big"
	"testing"

	"github.com/gradus-ml/gradus/internal/parallel"
	"github.com/stretchr/testify/require"
)

// exp64Ulps is the distance in units in the last place between two
// non-negative finite float64 values: for those, the bit patterns are
// ordered like the values, so it is the difference of the patterns.
func exp64Ulps(a, b float64) uint64 {
	ia, ib := math.Float64bits(a), math.Float64bits(b)
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

// exp64SweepPoints returns well over 10⁶ arguments: a jittered grid over
// the whole of [exp64Min, exp64Max], powers of two down to the smallest
// subnormal and a dense grid around 0, dense grids at both ends of the
// range, and the points (j+½)·ln2 where the reduction switches k.
func exp64SweepPoints() []float64 {
	rng := NewRNG(64)
	var xs []float64
	const n = 1 << 20
	for i := range n {
		x := exp64Min + (float64(i)+rng.Float64())*(exp64Max-exp64Min)/n
		xs = append(xs, min(x, exp64Max))
	}
	for e := 1; e <= 1074; e++ {
		v := math.Ldexp(1, -e)
		xs = append(xs, v, -v)
	}
	for i := -1 << 15; i <= 1<<15; i++ {
		xs = append(xs, float64(i)*0x1p-25)
	}
	for i := range 1 << 16 {
		f := float64(i) / (1 << 16)
		xs = append(xs, exp64Min+f, exp64Max-f)
	}
	for j := -1022; j <= 1022; j++ {
		c := (float64(j) + 0.5) * math.Ln2
		if c >= exp64Min && c <= exp64Max {
			xs = append(xs, c, math.Nextafter(c, math.Inf(1)), math.Nextafter(c, math.Inf(-1)))
		}
	}
	return append(xs, exp64Min, exp64Max, math.Nextafter(exp64Min, 0), math.Nextafter(exp64Max, 0), 0, math.Copysign(0, -1))
}

// Over the whole fast range tensor.Exp equals exp64Core bit for bit and
// stays within 2 ulp of math.Exp. Not 1: Go's amd64 math.Exp (assembly,
// not the FreeBSD code) is itself up to about 1.4 ulp from the exact value
// (TestExp64AgainstExact logs it), so wherever the two differ by more than
// 1 ulp the exact value decides, and exp64Core must be under 1 ulp from it.
func TestExp64AccuracySweep(t *testing.T) {
	xs := exp64SweepPoints()
	require.Greater(t, len(xs), 1_000_000)
	got := ExpTo(nil, FromFloat64s(xs, len(xs))).Float64s()
	var worst uint64
	var worstX, worstExact float64
	var differ, over1 int
	for i, x := range xs {
		want := math.Exp(x)
		core := exp64Core(x)
		require.Equal(t, math.Float64bits(core), math.Float64bits(got[i]), "x=%v: tensor.Exp and exp64Core differ", x)
		d := exp64Ulps(core, want)
		if d > worst {
			worst, worstX = d, x
		}
		if d > 0 {
			differ++
		}
		if d > 1 || d == 1 && differ%64 == 0 {
			e := math.Abs(exp64UlpError(core, exp64Exact(x)))
			require.Less(t, e, 1.0, "x=%v: %d ulp from math.Exp, %.3f ulp from exact", x, d, e)
			worstExact = max(worstExact, e)
		}
		if d > 1 {
			over1++
		}
	}
	t.Logf("%d points: max %d ulp from math.Exp (at x=%v); %d differ, %d by 2 ulp; exact error where checked ≤ %.3f ulp",
		len(xs), worst, worstX, differ, over1, worstExact)
	require.LessOrEqual(t, worst, uint64(2), "at x=%v", worstX)
}

// exp64Prec is the precision of the reference exp: far more than the 53
// bits being checked, so its own error is negligible.
const exp64Prec = 320

// exp64Ln2 is ln 2 = 2·atanh(1/3) = 2·Σ 3^-(2j+1)/(2j+1) to exp64Prec bits.
var exp64Ln2 = func() *big.Float {
	f := func() *big.Float { return new(big.Float).SetPrec(exp64Prec) }
	sum, pow := f(), f().Quo(f().SetInt64(1), f().SetInt64(3))
	ninth := f().Quo(f().SetInt64(1), f().SetInt64(9))
	for j := range 220 {
		sum.Add(sum, f().Quo(pow, f().SetInt64(int64(2*j+1))))
		pow.Mul(pow, ninth)
	}
	return sum.Add(sum, sum)
}()

// exp64Exact is eˣ to exp64Prec bits: x = n·ln2 + r with |r| ≤ ln2/2, the
// Taylor series of eʳ, then the exact scale by 2ⁿ.
func exp64Exact(x float64) *big.Float {
	f := func() *big.Float { return new(big.Float).SetPrec(exp64Prec) }
	n := math.Round(x / math.Ln2)
	r := f().Sub(f().SetFloat64(x), f().Mul(f().SetFloat64(n), exp64Ln2))
	sum, term := f().SetInt64(1), f().SetInt64(1)
	for i := int64(1); term.Sign() != 0 && term.MantExp(nil) > -exp64Prec-8; i++ {
		term.Quo(term.Mul(term, r), f().SetInt64(i))
		sum.Add(sum, term)
	}
	return sum.SetMantExp(sum, int(n))
}

// exp64UlpError is (got − exact) in units of the last place of exact's
// binade (exact positive and normal).
func exp64UlpError(got float64, exact *big.Float) float64 {
	e := exact.MantExp(nil) // exact = m·2ᵉ, m in [½, 1): one ulp is 2^(e−53)
	d := new(big.Float).SetPrec(exp64Prec).Sub(new(big.Float).SetFloat64(got), exact)
	v, _ := d.SetMantExp(d, 53-e).Float64()
	return v
}

// The reference values come from an independent multi-precision exp; the
// reference itself is checked on e (math.E is e correctly rounded) and on
// exact powers of two.
func TestExp64AgainstExact(t *testing.T) {
	e, _ := exp64Exact(1).Float64()
	require.Equal(t, math.E, e)
	for _, k := range []float64{-1000, -1, 1, 1000} {
		v, _ := exp64Exact(k * math.Ln2).Float64() // k·ln2 is rounded, so 2ᵏ to ~1e-13
		require.InEpsilon(t, math.Ldexp(1, int(k)), v, 1e-12)
	}

	rng := NewRNG(65)
	xs := []float64{exp64Min, exp64Max, 1, -1, 0.5 * math.Ln2, -0.5 * math.Ln2, 1e-300, 700.5, -700.5}
	for range 3000 {
		xs = append(xs, exp64Min+rng.Float64()*(exp64Max-exp64Min))
	}
	for range 1000 {
		xs = append(xs, (rng.Float64()-0.5)*2) // [-1, 1], where most workloads live
	}
	var worstCore, worstStd, worstX float64
	for _, x := range xs {
		exact := exp64Exact(x)
		ec := math.Abs(exp64UlpError(exp64Core(x), exact))
		es := math.Abs(exp64UlpError(math.Exp(x), exact))
		if ec > worstCore {
			worstCore, worstX = ec, x
		}
		worstStd = max(worstStd, es)
	}
	t.Logf("%d points: exp64Core max %.3f ulp (at x=%v), math.Exp max %.3f ulp", len(xs), worstCore, worstX, worstStd)
	require.Less(t, worstCore, 1.0, "at x=%v", worstX)
}

// The vector kernel performs exp64Core's operations, so it must agree bit
// for bit on every block it writes, and stop at the first block holding an
// argument outside [exp64Min, exp64Max] or a NaN.
func TestExp64VectorMatchesCore(t *testing.T) {
	rng := NewRNG(66)
	if !hasSIMD {
		// Without the AVX2 kernel (purego, other arch, old CPU) nothing
		// is written and expRun64 is all scalar.
		require.Zero(t, expBlocks64(make([]float64, 8), make([]float64, 8)))
		t.Skip("no vector exp kernel here (hasSIMD is false)")
	}
	edge := []float64{0, math.Copysign(0, -1), exp64Min, exp64Max, 1e-310, -1e-310,
		0.5 * math.Ln2, -0.5 * math.Ln2, 1022.5 * math.Ln2}
	for _, tc := range []struct {
		name   string
		lo, hi float64
	}{
		{"full range", exp64Min, exp64Max},
		{"unit", -1, 1},
		{"gp kernel", -50, 0},
		{"near ends", 700, exp64Max},
		{"near low end", exp64Min, -700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{4, 8, 12, 1000, 1003} {
				x := rng.Uniform(Float64, tc.lo, tc.hi, n).Float64s()
				for i := range x {
					if i%11 == 3 {
						x[i] = edge[(i/11)%len(edge)]
					}
				}
				got := make([]float64, n)
				require.Equal(t, n&^3, expBlocks64(got, x))
				for i := range n &^ 3 {
					require.Equal(t, math.Float64bits(exp64Core(x[i])), math.Float64bits(got[i]), "x=%v", x[i])
				}
			}
		})
	}
	// A bad argument anywhere in block b stops the kernel after b blocks,
	// with nothing written past them.
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 709.5, -708.5, 1e300, -1e300} {
		for p := range 16 {
			x := rng.Uniform(Float64, -5, 5, 16).Float64s()
			x[p] = bad
			got := make([]float64, 16)
			for i := range got {
				got[i] = -1
			}
			require.Equal(t, p&^3, expBlocks64(got, x), "bad %v at %d", bad, p)
			for i := p &^ 3; i < 16; i++ {
				require.Equal(t, -1.0, got[i], "bad %v at %d: element %d written", bad, p, i)
			}
		}
	}
}

// Special values through tensor.Exp, alone and filling a run long enough
// for the vector kernel, in both dtypes. Results outside exp64Core's range
// come from math.Exp unchanged.
func TestExp64SpecialValues(t *testing.T) {
	sub := math.Exp(-740)
	require.True(t, sub > 0 && sub < 0x1p-1022, "e^-740 is subnormal")
	for _, tc := range []struct {
		name  string
		x     float64
		want  float64
		exact bool // float64 result must match want bit for bit
	}{
		{"zero", 0, 1, true},
		{"negative zero", math.Copysign(0, -1), 1, true},
		{"one", 1, math.E, false},
		{"minus one", -1, 1 / math.E, false},
		{"ln2", math.Ln2, 2, false},
		{"-Inf", math.Inf(-1), 0, true},
		{"+Inf", math.Inf(1), math.Inf(1), true},
		{"NaN", math.NaN(), math.NaN(), true},
		{"overflow 710", 710, math.Inf(1), true},
		{"underflow -746", -746, 0, true},
		{"subnormal -740", -740, sub, true},
		{"below range -708.2", -708.2, math.Exp(-708.2), true},
		// Above exp64Max the result is still finite up to exp64Overflow
		// (Go's amd64 math.Exp gives +Inf from about 709.44).
		{"above range 709.5", 709.5, 1.3549863193146328e308, false},
		{"largest finite", exp64Overflow, 1.7976931348622732e308, false},
		{"just past it", math.Nextafter(exp64Overflow, 800), math.Inf(1), true},
		{"upper end 709", exp64Max, 8.218407461554972e307, false},
		{"lower end -708", exp64Min, 3.307553003638408e-308, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 8, 13} {
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = tc.x
				}
				got := Exp(FromFloat64s(xs, n)).Float64s()
				for _, g := range got {
					switch {
					case math.IsNaN(tc.want):
						require.True(t, math.IsNaN(g), "got %v", g)
					case tc.exact:
						require.Equal(t, math.Float64bits(tc.want), math.Float64bits(g), "got %v", g)
					default: // under 1 ulp from the exact value, and near the quoted one
						require.Less(t, math.Abs(exp64UlpError(g, exp64Exact(tc.x))), 1.0, "got %v", g)
						require.LessOrEqual(t, exp64Ulps(tc.want, g), uint64(1), "got %v want %v", g, tc.want)
					}
				}
				x32 := make([]float32, n)
				for i := range x32 {
					x32[i] = float32(tc.x)
				}
				want32 := float32(math.Exp(float64(float32(tc.x))))
				for _, g := range Exp(FromFloat32s(x32, n)).Float32s() {
					if math.IsNaN(tc.want) {
						require.True(t, g != g, "float32 got %v", g)
						continue
					}
					d := int64(math.Float32bits(g)) - int64(math.Float32bits(want32))
					require.LessOrEqual(t, max(d, -d), int64(1), "float32 got %v want %v", g, want32)
				}
			}
		})
	}
}

// An out-of-range value at every position of runs of several lengths: it
// gets math.Exp's result, every other element exp64Core's, and the vector
// kernel resumes after the block holding it.
func TestExp64MixedBlocks(t *testing.T) {
	rng := NewRNG(67)
	for _, bad := range []float64{710, -746, -740, math.NaN(), math.Inf(1), math.Inf(-1), 709.5, -708.2} {
		for _, n := range []int{4, 5, 8, 9, 12, 17} {
			for p := range n {
				x := rng.Uniform(Float64, -30, 30, n).Float64s()
				x[p] = bad
				got := ExpTo(nil, FromFloat64s(x, n)).Float64s()
				for i, g := range got {
					if i == p {
						want := exp64(bad) // math.Exp except in (exp64Max, exp64Overflow]
						if math.IsNaN(bad) {
							require.True(t, math.IsNaN(g))
						} else {
							require.Equal(t, math.Float64bits(want), math.Float64bits(g), "bad %v at %d of %d", bad, p, n)
						}
						continue
					}
					require.Less(t, math.Abs(exp64UlpError(g, exp64Exact(x[i]))), 1.0, "x=%v (bad %v at %d of %d)", x[i], bad, p, n)
					require.Equal(t, math.Float64bits(exp64Core(x[i])), math.Float64bits(g), "x=%v", x[i])
				}
			}
		}
	}
}

// Lengths 0..17 cover no block, whole blocks and every tail length, into
// a fresh dst and in place.
func TestExp64Lengths(t *testing.T) {
	rng := NewRNG(68)
	for n := 0; n <= 17; n++ {
		x := rng.Uniform(Float64, -30, 30, n).Float64s()
		orig := append([]float64(nil), x...)
		got := ExpTo(nil, FromFloat64s(x, n)).Float64s()
		a := FromFloat64s(x, n)
		ExpTo(a, a)
		for i := range n {
			require.Less(t, math.Abs(exp64UlpError(got[i], exp64Exact(orig[i]))), 1.0, "n=%d i=%d", n, i)
			require.Equal(t, math.Float64bits(got[i]), math.Float64bits(x[i]), "in place, n=%d i=%d", n, i)
		}
	}
}

// BenchmarkExpF64 times tensor.ExpTo on a 2000×2000 float64 matrix (the
// GP workload) against the math.Exp loop it replaced, split over the same
// goroutines as ExpTo does, and both kernels on one goroutine.
func BenchmarkExpF64(b *testing.B) {
	const n = 2000 * 2000
	x := NewRNG(69).Uniform(Float64, -20, 20, 2000, 2000)
	dst := ZerosLike(x)
	xs, ds := x.Float64s(), dst.Float64s()
	perElem := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
	}
	b.Run("ExpTo", func(b *testing.B) {
		for b.Loop() {
			ExpTo(dst, x)
		}
		perElem(b)
	})
	b.Run("mathExpLoop", func(b *testing.B) {
		for b.Loop() {
			parallel.Range(n, 0, parallelElemMin, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					ds[i] = math.Exp(xs[i])
				}
			})
		}
		perElem(b)
	})
	b.Run("expRun64/serial", func(b *testing.B) {
		for b.Loop() {
			expRun64(ds, xs)
		}
		perElem(b)
	})
	b.Run("mathExpLoop/serial", func(b *testing.B) {
		for b.Loop() {
			for i := range ds {
				ds[i] = math.Exp(xs[i])
			}
		}
		perElem(b)
	})
}

// Around the underflow bound exp64 returns what math.Exp does (0 below it,
// the smallest subnormals above) without calling it.
func TestExp64UnderflowBound(t *testing.T) {
	for _, x := range []float64{math.Nextafter(exp64Underflow, -800), exp64Underflow, math.Nextafter(exp64Underflow, 0), -745, -1000, -math.MaxFloat64} {
		require.Equal(t, math.Float64bits(math.Exp(x)), math.Float64bits(exp64(x)), "x = %v", x)
	}
	require.Zero(t, exp64(math.Nextafter(exp64Underflow, -800)))
	// Just above the bound Go's amd64 math.Exp (assembly) returns the
	// smallest subnormal and its arm64 one (pure Go) still 0 (it stays 0 up
	// to about −744.9), so exp64, which defers to math.Exp there, follows
	// each; from −744.5 up both are positive.
	require.Positive(t, exp64(-744.5))
}
