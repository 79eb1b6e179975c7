package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// outerCase is one outer product: C (m×n, row stride n+padC, starting off
// elements into its slice, so that rows start at every alignment) gets
// x·yᵀ with x read at stride incx.
type outerCase struct{ m, n, incx, padC, off int }

// outerCases cover every vector width's tails (16 and 64 float32 lanes per
// step on AVX-512, 8 and 32 on AVX2; half that in float64), rows that are
// not aligned to a cache line (the streaming stores' scalar head) and
// strided x.
var outerCases = []outerCase{
	{1, 1, 1, 0, 0}, {0, 5, 1, 0, 0}, {5, 0, 1, 0, 0}, {3, 7, 1, 0, 1},
	{2, 15, 1, 1, 3}, {2, 16, 1, 0, 0}, {3, 17, 2, 2, 5}, {4, 31, 1, 0, 7},
	{2, 32, 3, 0, 0}, {3, 33, 1, 3, 2}, {5, 63, 1, 1, 15}, {2, 64, 1, 0, 0},
	{3, 65, 2, 0, 9}, {7, 127, 1, 5, 1}, {2, 128, 1, 0, 0}, {3, 129, 4, 0, 13},
	{11, 784, 1, 0, 0}, {6, 784, 1, 0, 3}, {9, 1000, 3, 7, 11}, {300, 250, 1, 1, 1},
}

// checkOuter runs one case in every mode against a scalar reference that
// rounds the product before adding it, as the kernels do, so it asks for
// the same bits. Padding between and around C's rows must stay untouched.
func checkOuter[T float](t *testing.T, rng *rand.Rand, oc outerCase, threads int) {
	t.Helper()
	ldc := max(1, oc.n+oc.padC)
	x := make([]T, max(0, (oc.m-1)*oc.incx+1)+1)
	y := make([]T, oc.n+1)
	for i := range x {
		x[i] = T(rng.NormFloat64())
	}
	for i := range y {
		y[i] = T(rng.NormFloat64())
	}
	size := oc.off + max(0, (oc.m-1)*ldc+oc.n) + 3
	for _, mode := range []string{"store", "stream", "add"} {
		c := make([]T, size)
		for i := range c {
			c[i] = sentinel
			if i >= oc.off && (i-oc.off)%ldc < oc.n && i-oc.off < oc.m*ldc {
				c[i] = T(rng.NormFloat64())
			}
		}
		want := append([]T(nil), c...)
		for i := range oc.m {
			for j := range oc.n {
				p := T(x[i*oc.incx] * y[j])
				if mode == "add" {
					p = T(want[oc.off+i*ldc+j] + p)
				}
				want[oc.off+i*ldc+j] = p
			}
		}
		acc, stream := mode == "add", mode == "stream"
		switch cs := any(c).(type) {
		case []float32:
			xs, ys := any(x).([]float32), any(y).([]float32)
			if threads == 1 {
				SouterSerial(oc.m, oc.n, xs, oc.incx, ys, cs[oc.off:], ldc, acc, stream)
			} else {
				Souter(oc.m, oc.n, xs, oc.incx, ys, cs[oc.off:], ldc, acc, stream)
			}
		case []float64:
			xs, ys := any(x).([]float64), any(y).([]float64)
			if threads == 1 {
				DouterSerial(oc.m, oc.n, xs, oc.incx, ys, cs[oc.off:], ldc, acc, stream)
			} else {
				Douter(oc.m, oc.n, xs, oc.incx, ys, cs[oc.off:], ldc, acc, stream)
			}
		}
		require.Equal(t, want, c, "%+v %s", oc, mode)
	}
}

func TestOuter(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, mode := range kernelModes() {
		t.Run(mode.name, func(t *testing.T) {
			t.Cleanup(mode.use())
			for _, threads := range []int{1, 2} {
				prev := SetThreads(threads)
				for _, oc := range outerCases {
					t.Run(fmt.Sprintf("%+v/threads=%d", oc, threads), func(t *testing.T) {
						checkOuter[float32](t, rng, oc, threads)
						checkOuter[float64](t, rng, oc, threads)
					})
				}
				SetThreads(prev)
			}
		})
	}
}

// TestGemmRank1 checks that GEMM of depth 1 through the rank-1 kernels
// gives the packed kernels' bits: the same product rounded, then added.
func TestGemmRank1(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, mode := range kernelModes() {
		if mode.portable {
			continue // the portable tile kernel does not round the product first
		}
		t.Run(mode.name, func(t *testing.T) {
			t.Cleanup(mode.use())
			for _, s := range []shape{{3, 50, 1}, {130, 784, 1}, {1, 33, 1}} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					for _, beta := range []float32{0, 1} {
						mt := makeMatrices[float32](rng, tr[0], tr[1], s.m, s.n, 1, false)
						got := append([]float32(nil), mt.c...)
						want := append([]float32(nil), mt.c...)
						Sgemm(tr[0], tr[1], s.m, s.n, 1, 1, mt.a, mt.lda, mt.b, mt.ldb, beta, got, mt.ldc)
						// alpha = 1 + 2⁻²³ takes the packed path; so does a
						// copy with alpha exactly 1 once the product is split
						// in two depths, the second a zero column.
						packed(tr[0], tr[1], s.m, s.n, mt, beta, want)
						require.Equal(t, want, got, "%v %v beta=%v", s, tr, beta)
					}
				}
			}
		})
	}
}

// packed runs the depth-1 product through the packed GEMM: as a depth-2
// product whose second column of op(A) is zero, which adds exactly +0 to
// every first-step product.
func packed(tA, tB bool, m, n int, mt matrices[float32], beta float32, c []float32) {
	a2 := make([]float32, 2*m)
	b2 := make([]float32, 2*n)
	for i := range m {
		if tA {
			a2[2*i] = mt.a[i]
		} else {
			a2[2*i] = mt.a[i*mt.lda]
		}
	}
	for j := range n {
		if tB {
			b2[j] = mt.b[j*mt.ldb]
		} else {
			b2[j] = mt.b[j]
		}
	}
	Sgemm(false, false, m, n, 2, 1, a2, 2, b2, n, beta, c, mt.ldc)
}

func FuzzOuter(f *testing.F) {
	f.Add(uint8(3), uint16(17), uint8(1), uint8(0), uint8(1), uint8(0))
	f.Add(uint8(9), uint16(784), uint8(2), uint8(5), uint8(13), uint8(2))
	f.Add(uint8(1), uint16(1), uint8(1), uint8(0), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, m uint8, n uint16, incx, padC, off, threads uint8) {
		oc := outerCase{int(m), int(n % 2048), int(incx%4) + 1, int(padC % 9), int(off % 17)}
		prev := SetThreads(int(threads%2) + 1)
		defer SetThreads(prev)
		rng := rand.New(rand.NewPCG(uint64(m), uint64(n)))
		for _, mode := range kernelModes() {
			restore := mode.use()
			checkOuter[float32](t, rng, oc, 2)
			checkOuter[float64](t, rng, oc, 2)
			restore()
		}
	})
}

func TestOuterZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage or race instrumentation")
	}
	x, y := make([]float32, 64), make([]float32, 300)
	c := make([]float32, 64*300)
	xd, yd, cd := make([]float64, 64), make([]float64, 300), make([]float64, 64*300)
	allocs := testing.AllocsPerRun(20, func() {
		SouterSerial(64, 300, x, 1, y, c, 300, false, true)
		Sgemm(true, false, 64, 300, 1, 1, x, 64, y, 300, 1, c, 300)
		DouterSerial(64, 300, xd, 1, yd, cd, 300, true, false)
	})
	require.Zero(t, allocs)
}
