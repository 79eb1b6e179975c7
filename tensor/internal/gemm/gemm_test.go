package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinel marks padding that the kernels must never touch.
const sentinel = -12345.0

type shape struct{ m, n, k int }

// testShapes exercises 1×1×1, odd sizes, MR/NR ± 1 for every kernel, k = 1,
// large k, tall/skinny and empty products.
var testShapes = []shape{
	{1, 1, 1}, {0, 5, 3}, {5, 0, 3}, {5, 3, 0}, {0, 0, 0},
	{2, 3, 1}, {3, 5, 7}, {7, 9, 11}, {13, 17, 19},
	{4, 4, 4}, {3, 3, 5}, {5, 5, 3}, // portable MR/NR ± 1
	{5, 7, 9}, {6, 8, 9}, {7, 9, 9}, // f64 asm MR ± 1, NR ± 1
	{5, 15, 4}, {6, 16, 4}, {7, 17, 4}, // f32 asm MR ± 1, NR ± 1; f64 avx512 NR
	{5, 31, 4}, {6, 32, 8}, {7, 33, 9}, {6, 15, 5}, {6, 17, 7}, // avx512 f32/f64 NR ± 1
	{13, 65, 131}, {6, 96, 300}, // several avx512 panels, depth tails
	{12, 32, 1}, {6, 16, 257}, {11, 23, 1000},
	{64, 3, 33}, {3, 64, 33}, {257, 2, 5}, {2, 300, 5}, {1, 100, 60},
	{31, 33, 300}, {145, 20, 10}, {20, 4100, 3}, {70, 70, 520},
}

// testOpts are the alpha/beta combinations; full products for every shape.
var (
	testAlphas = []float64{0, 1, -2.5}
	testBetas  = []float64{0, 1, 0.5}
)

type matrices[T float] struct {
	a, b, c       []T
	lda, ldb, ldc int
}

// makeMatrices builds A, B and C with padded leading dimensions; padding holds
// the sentinel value.
func makeMatrices[T float](rng *rand.Rand, tA, tB bool, m, n, k int, cNaN bool) matrices[T] {
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	mk := func(rows, cols, pad int, nan bool) ([]T, int) {
		ld := cols + pad
		s := make([]T, rows*ld+pad) // trailing padding too
		for i := range s {
			s[i] = sentinel
		}
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				if nan {
					s[i*ld+j] = T(math.NaN())
				} else {
					s[i*ld+j] = T(rng.Float64()*2 - 1)
				}
			}
		}
		return s, ld
	}
	var mt matrices[T]
	mt.a, mt.lda = mk(ar, ac, 3, false)
	mt.b, mt.ldb = mk(br, bc, 1, false)
	mt.c, mt.ldc = mk(m, n, 2, cNaN)
	return mt
}

// reference computes the result and a per-element error scale in float64.
func reference[T float](tA, tB bool, m, n, k int, alpha float64, mt matrices[T], beta float64) (want, scale []float64) {
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			for p := 0; p < k; p++ {
				var av, bv float64
				if tA {
					av = float64(mt.a[p*mt.lda+i])
				} else {
					av = float64(mt.a[i*mt.lda+p])
				}
				if tB {
					bv = float64(mt.b[j*mt.ldb+p])
				} else {
					bv = float64(mt.b[p*mt.ldb+j])
				}
				s += av * bv
				abs += math.Abs(av * bv)
			}
			r := alpha * s
			sc := math.Abs(alpha) * abs
			if beta != 0 {
				cv := float64(mt.c[i*mt.ldc+j])
				r += beta * cv
				sc += math.Abs(beta * cv)
			}
			want[i*n+j] = r
			scale[i*n+j] = sc
		}
	}
	return want, scale
}

func callGemm[T float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch any(alpha).(type) {
	case float32:
		Sgemm(tA, tB, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case float64:
		Dgemm(tA, tB, m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

func epsOf[T float]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-23
	}
	return 0x1p-52
}

// checkCase runs one product and compares against the float64 reference,
// including untouched padding. It returns false on failure.
func checkCase[T float](t *testing.T, rng *rand.Rand, tA, tB bool, s shape, alpha, beta float64, cNaN bool) bool {
	t.Helper()
	mt := makeMatrices[T](rng, tA, tB, s.m, s.n, s.k, cNaN)
	want, scale := reference(tA, tB, s.m, s.n, s.k, alpha, mt, beta)
	origC := append([]T(nil), mt.c...)
	origA := append([]T(nil), mt.a...)
	origB := append([]T(nil), mt.b...)
	callGemm(tA, tB, s.m, s.n, s.k, T(alpha), mt.a, mt.lda, mt.b, mt.ldb, T(beta), mt.c, mt.ldc)
	eps := epsOf[T]()
	ok := assert.Equal(t, origA, mt.a, "A modified") && assert.Equal(t, origB, mt.b, "B modified")
	for idx := range mt.c {
		i, j := idx/mt.ldc, idx%mt.ldc
		if i >= s.m || j >= s.n {
			if mt.c[idx] != origC[idx] {
				return assert.Failf(t, "padding modified", "C[%d] = %v, was %v", idx, mt.c[idx], origC[idx])
			}
			continue
		}
		got := float64(mt.c[idx])
		w := want[i*s.n+j]
		tol := 4*float64(s.k+2)*eps*scale[i*s.n+j] + 1e-30
		if math.IsNaN(got) || math.Abs(got-w) > tol {
			return assert.Failf(t, "wrong value", "C[%d,%d] = %v, want %v (tol %g)", i, j, got, w, tol)
		}
	}
	return ok
}

func runSuite[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range testShapes {
		if (raceEnabled || testing.Short()) && s.m*s.n*s.k > 100_000 {
			continue
		}
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			name := fmt.Sprintf("%dx%dx%d/tA=%v,tB=%v", s.m, s.k, s.n, tr[0], tr[1])
			t.Run(name, func(t *testing.T) {
				for _, alpha := range testAlphas {
					for _, beta := range testBetas {
						if !checkCase[T](t, rng, tr[0], tr[1], s, alpha, beta, false) {
							t.Fatalf("alpha=%v beta=%v", alpha, beta)
						}
					}
				}
				// beta == 0 must not propagate NaNs from C.
				for _, alpha := range testAlphas {
					if !checkCase[T](t, rng, tr[0], tr[1], s, alpha, 0, true) {
						t.Fatalf("NaN C, alpha=%v", alpha)
					}
				}
			})
		}
	}
}

// kernelMode is a choice of micro-kernel made through the test switches.
type kernelMode struct {
	name             string
	portable, narrow bool
}

// kernelModes lists every kernel this machine can run: the AVX-512 one
// (where the CPU has it), the AVX2 or NEON one, and the portable one.
func kernelModes() []kernelMode {
	modes := []kernelMode{{"portable", true, false}}
	if hasAsm {
		modes = append(modes, kernelMode{"asm", false, true})
	}
	if hasWide {
		modes = append(modes, kernelMode{"wide", false, false})
	}
	return modes
}

// use selects the mode's kernel until restore is called.
func (m kernelMode) use() (restore func()) {
	p, n := UsePortable(m.portable), UseNarrow(m.narrow)
	return func() { UsePortable(p); UseNarrow(n) }
}

func TestGemmCorrectness(t *testing.T) {
	for _, mode := range kernelModes() {
		t.Run(mode.name, func(t *testing.T) {
			t.Cleanup(mode.use())
			for _, threads := range []int{1, 2} {
				if mode.portable && threads == 2 {
					continue // the partition is kernel-independent
				}
				t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
					prev := SetThreads(threads)
					defer SetThreads(prev)
					t.Run("f32", runSuite[float32])
					t.Run("f64", runSuite[float64])
				})
			}
		})
	}
}

// TestGemmLarge checks sizes that span several cache blocks in every dimension.
func TestGemmLarge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("short")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	prev := SetThreads(2)
	defer SetThreads(prev)
	for _, s := range []shape{{9, 8300, 20}, {300, 140, 600}, {600, 530, 130}, {30, 1100, 2000}} {
		for _, tr := range [][2]bool{{false, false}, {true, true}} {
			t.Run(fmt.Sprintf("%dx%dx%d/%v", s.m, s.k, s.n, tr), func(t *testing.T) {
				require.True(t, checkCase[float32](t, rng, tr[0], tr[1], s, 1.5, 0.5, false))
				require.True(t, checkCase[float64](t, rng, tr[0], tr[1], s, -1, 0, true))
			})
		}
	}
}

func TestGemmDeterministic(t *testing.T) {
	prev := SetThreads(2)
	defer SetThreads(prev)
	rng := rand.New(rand.NewPCG(5, 6))
	// Rows split ({517, 64, 400}, {400, 390, 380}) and columns split
	// ({64, 517, 400}) between the goroutines.
	for _, s := range []shape{{300, 310, 290}, {517, 64, 400}, {64, 517, 400}, {400, 390, 380}, {400, 390, 800}} {
		mt := makeMatrices[float32](rng, false, true, s.m, s.n, s.k, false)
		c1 := append([]float32(nil), mt.c...)
		c2 := append([]float32(nil), mt.c...)
		Sgemm(false, true, s.m, s.n, s.k, 1.25, mt.a, mt.lda, mt.b, mt.ldb, 0.5, c1, mt.ldc)
		Sgemm(false, true, s.m, s.n, s.k, 1.25, mt.a, mt.lda, mt.b, mt.ldb, 0.5, c2, mt.ldc)
		require.Equal(t, c1, c2)
		// The partition must not change the result either.
		SetThreads(1)
		c3 := append([]float32(nil), mt.c...)
		Sgemm(false, true, s.m, s.n, s.k, 1.25, mt.a, mt.lda, mt.b, mt.ldb, 0.5, c3, mt.ldc)
		SetThreads(2)
		require.Equal(t, c1, c3)

		md := makeMatrices[float64](rng, true, false, s.m, s.n, s.k, false)
		d1 := append([]float64(nil), md.c...)
		d2 := append([]float64(nil), md.c...)
		Dgemm(true, false, s.m, s.n, s.k, -0.75, md.a, md.lda, md.b, md.ldb, 1, d1, md.ldc)
		Dgemm(true, false, s.m, s.n, s.k, -0.75, md.a, md.lda, md.b, md.ldb, 1, d2, md.ldc)
		require.Equal(t, d1, d2)
	}
}

func TestGemmZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage or race instrumentation")
	}
	prev := SetThreads(1)
	defer SetThreads(prev)
	for _, n := range []int{7, 64, 200} {
		a := make([]float32, n*n)
		b := make([]float32, n*n)
		c := make([]float32, n*n)
		ad := make([]float64, n*n)
		bd := make([]float64, n*n)
		cd := make([]float64, n*n)
		for _, tr := range []bool{false, true} {
			allocs := testing.AllocsPerRun(20, func() {
				Sgemm(tr, !tr, n, n, n, 1, a, n, b, n, 0, c, n)
				Dgemm(tr, tr, n, n, n, 1, ad, n, bd, n, 1, cd, n)
			})
			assert.Zero(t, allocs, "n=%d", n)
		}
	}
}

func TestGemmConcurrentCallers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := shape{70, 90, 110}
	mt := makeMatrices[float64](rng, false, false, s.m, s.n, s.k, false)
	want := append([]float64(nil), mt.c...)
	Dgemm(false, false, s.m, s.n, s.k, 1, mt.a, mt.lda, mt.b, mt.ldb, 0, want, mt.ldc)
	done := make(chan []float64)
	for g := 0; g < 8; g++ {
		go func() {
			c := append([]float64(nil), mt.c...)
			for it := 0; it < 5; it++ {
				Dgemm(false, false, s.m, s.n, s.k, 1, mt.a, mt.lda, mt.b, mt.ldb, 0, c, mt.ldc)
			}
			done <- c
		}()
	}
	for g := 0; g < 8; g++ {
		require.Equal(t, want, <-done)
	}
}

func TestGemmPanics(t *testing.T) {
	a := make([]float32, 12)
	b := make([]float32, 12)
	c := make([]float32, 12)
	cases := []struct {
		name, msg string
		f         func()
	}{
		{"negative m", "gemm: negative dimension m=-1", func() { Sgemm(false, false, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2) }},
		{"negative n", "gemm: negative dimension n=-2", func() { Sgemm(false, false, 2, -2, 2, 1, a, 2, b, 2, 0, c, 2) }},
		{"negative k", "gemm: negative dimension k=-3", func() { Sgemm(false, false, 2, 2, -3, 1, a, 2, b, 2, 0, c, 2) }},
		{"lda", "gemm: lda=2 too small", func() { Sgemm(false, false, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2) }},
		{"lda trans", "gemm: lda=3 too small", func() { Sgemm(true, false, 4, 2, 3, 1, a, 3, b, 2, 0, c, 2) }},
		{"ldb", "gemm: ldb=1 too small", func() { Sgemm(false, false, 2, 2, 2, 1, a, 2, b, 1, 0, c, 2) }},
		{"ldb trans", "gemm: ldb=2 too small", func() { Sgemm(false, true, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2) }},
		{"ldc", "gemm: ldc=1 too small", func() { Sgemm(false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 1) }},
		{"len a", "gemm: len(a)=12 too short", func() { Sgemm(false, false, 5, 2, 3, 1, a, 3, b, 2, 0, c, 2) }},
		{"len b", "gemm: len(b)=12 too short", func() { Sgemm(false, false, 2, 4, 4, 1, a, 4, b, 4, 0, c, 4) }},
		{"len c", "gemm: len(c)=12 too short", func() {
			Dgemm(false, false, 4, 4, 1, 1, make([]float64, 4), 1, make([]float64, 4), 4, 0, make([]float64, 12), 4)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r)
				msg, ok := r.(string)
				require.True(t, ok)
				assert.Contains(t, msg, tc.msg)
			}()
			tc.f()
		})
	}
}

func TestSetThreadsAndPortable(t *testing.T) {
	prev := SetThreads(3)
	assert.Equal(t, 3, SetThreads(prev))
	p := UsePortable(true)
	assert.Equal(t, portableName, KernelName())
	assert.True(t, UsePortable(p))
	n := UseNarrow(true)
	if hasAsm {
		assert.Equal(t, asmName, KernelName())
	}
	assert.True(t, UseNarrow(n))
}

func FuzzGemmShapes(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), false, false, 1.0, 0.0, uint8(1))
	f.Add(uint8(7), uint8(17), uint8(5), true, false, -2.5, 0.5, uint8(2))
	f.Add(uint8(6), uint8(16), uint8(33), false, true, 1.0, 1.0, uint8(1))
	f.Add(uint8(13), uint8(9), uint8(0), true, true, 0.0, 0.5, uint8(2))
	f.Add(uint8(65), uint8(70), uint8(66), false, false, 0.5, 0.0, uint8(2))
	f.Add(uint8(200), uint8(3), uint8(100), true, false, 1.0, -1.0, uint8(3))
	f.Fuzz(func(t *testing.T, m, n, k uint8, tA, tB bool, alpha, beta float64, threads uint8) {
		if math.IsNaN(alpha) || math.IsInf(alpha, 0) || math.Abs(alpha) > 1e6 ||
			math.IsNaN(beta) || math.IsInf(beta, 0) || math.Abs(beta) > 1e6 {
			t.Skip()
		}
		prev := SetThreads(int(threads%4) + 1)
		defer SetThreads(prev)
		rng := rand.New(rand.NewPCG(uint64(m), uint64(n)<<8|uint64(k)))
		s := shape{int(m), int(n), int(k)}
		for _, mode := range kernelModes() {
			restore := mode.use()
			ok := checkCase[float32](t, rng, tA, tB, s, alpha, beta, beta == 0) &&
				checkCase[float64](t, rng, tA, tB, s, alpha, beta, beta == 0)
			restore()
			if !ok {
				t.Fatalf("kernel %s", mode.name)
			}
		}
	})
}

// TestPickNarrow: on an AVX-512 machine a product no wider than the AVX2
// tile takes the AVX2 kernel and a wider one the AVX-512 kernel, in both
// precisions; elsewhere the family's own kernel serves every width.
func TestPickNarrow(t *testing.T) {
	for _, n := range []int{1, 9, 16, 17, 32, 1000} {
		s := pick(n, portableParamsS, asmParamsS, wideParamsS)
		d := pick(n, portableParamsD, asmParamsD, wideParamsD)
		switch {
		case family() != wideKernels:
			assert.Same(t, pick(1, portableParamsS, asmParamsS, wideParamsS), s, "n=%d", n)
		case n <= asmParamsS.nr:
			assert.Same(t, asmParamsS, s, "f32 n=%d", n)
		default:
			assert.Same(t, wideParamsS, s, "f32 n=%d", n)
		}
		if family() == wideKernels {
			want := wideParamsD
			if n <= asmParamsD.nr {
				want = asmParamsD
			}
			assert.Same(t, want, d, "f64 n=%d", n)
		}
	}
}
