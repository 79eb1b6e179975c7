package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packedShapes cover one and several depth blocks (kc is 256-512), column
// counts off the panel width, the narrow tile (n ≤ 16), several column
// blocks (n above nc), and the rows and columns splits of two threads.
var packedShapes = []shape{
	{1, 1, 2}, {3, 5, 7}, {7, 9, 11}, {6, 32, 8}, {7, 33, 9}, {13, 65, 131},
	{32, 512, 128}, {32, 128, 512}, {11, 23, 1000}, {5, 10, 600},
	{145, 20, 10}, {60, 50, 600}, {20, 4100, 3}, {0, 5, 3}, {5, 0, 3},
	{64, 520, 130}, {300, 40, 400}, // split over two threads: columns, rows
	{7, 1100, 600}, // several column blocks and several depth blocks at once
}

// packedProduct runs SgemmPacked or DgemmPacked on B packed from mt.
func packedProduct[T float](tA, tB bool, s shape, alpha T, mt matrices[T], beta T, c []T) {
	switch a := any(mt.a).(type) {
	case []float32:
		var pk Packed[float32]
		PackS(&pk, tB, s.k, s.n, any(mt.b).([]float32), mt.ldb)
		SgemmPacked(tA, s.m, float32(alpha), a, mt.lda, &pk, float32(beta), any(c).([]float32), mt.ldc)
	case []float64:
		var pk Packed[float64]
		PackD(&pk, tB, s.k, s.n, any(mt.b).([]float64), mt.ldb)
		DgemmPacked(tA, s.m, float64(alpha), a, mt.lda, &pk, float64(beta), any(c).([]float64), mt.ldc)
	}
}

// checkPacked compares a packed product with the float64 reference and
// with Sgemm or Dgemm on the same operands, which it must equal bit for
// bit, padding of C included.
func checkPacked[T float](t *testing.T, rng *rand.Rand, tA, tB bool, s shape, alpha, beta float64) {
	t.Helper()
	mt := makeMatrices[T](rng, tA, tB, s.m, s.n, s.k, false)
	want, scale := reference(tA, tB, s.m, s.n, s.k, alpha, mt, beta)
	plain := slices.Clone(mt.c)
	callGemm(tA, tB, s.m, s.n, s.k, T(alpha), mt.a, mt.lda, mt.b, mt.ldb, T(beta), plain, mt.ldc)
	got := slices.Clone(mt.c)
	packedProduct(tA, tB, s, T(alpha), mt, T(beta), got)
	for idx := range got {
		if math.Float64bits(float64(got[idx])) != math.Float64bits(float64(plain[idx])) {
			require.Failf(t, "packed differs from the plain product", "C[%d] = %v, plain %v", idx, got[idx], plain[idx])
		}
		i, j := idx/mt.ldc, idx%mt.ldc
		if i >= s.m || j >= s.n {
			continue
		}
		tol := 4*float64(s.k+2)*epsOf[T]()*scale[i*s.n+j] + 1e-30
		if d := math.Abs(float64(got[idx]) - want[i*s.n+j]); !(d <= tol) {
			require.Failf(t, "wrong value", "C[%d,%d] = %v, want %v (tol %g)", i, j, got[idx], want[i*s.n+j], tol)
		}
	}
}

func TestPackedEqualsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, mode := range kernelModes() {
		t.Run(mode.name, func(t *testing.T) {
			t.Cleanup(mode.use())
			for _, threads := range []int{1, 2} {
				if mode.portable && threads == 2 {
					continue // the partition is kernel-independent
				}
				prev := SetThreads(threads)
				for _, s := range packedShapes {
					work := s.m * s.n * s.k
					if raceEnabled && work > 100_000 || (mode.portable || testing.Short()) && work > 1_000_000 {
						continue
					}
					for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
						t.Run(fmt.Sprintf("threads=%d/%dx%dx%d/%v", threads, s.m, s.k, s.n, tr), func(t *testing.T) {
							checkPacked[float32](t, rng, tr[0], tr[1], s, 1, 0)
							checkPacked[float32](t, rng, tr[0], tr[1], s, -2.5, 0.5)
							checkPacked[float64](t, rng, tr[0], tr[1], s, 1, 1)
						})
					}
				}
				SetThreads(prev)
			}
		})
	}
}

// TestPackedReuse packs two matrices of different shapes into one Packed
// in turn: the second packing must not keep anything of the first.
func TestPackedReuse(t *testing.T) {
	var pk Packed[float32]
	b1 := []float32{1, 2, 3, 4, 5, 6} // 3×2
	PackS(&pk, false, 3, 2, b1, 2)
	a := []float32{1, 1, 1}
	c := make([]float32, 2)
	SgemmPacked(false, 1, 1, a, 3, &pk, 0, c, 2)
	assert.Equal(t, []float32{9, 12}, c)
	b2 := []float32{1, 0, 2, 1} // 2×2, read transposed: [[1 2] [0 1]]
	PackS(&pk, true, 2, 2, b2, 2)
	k, n := pk.Dims()
	assert.Equal(t, [2]int{2, 2}, [2]int{k, n})
	SgemmPacked(false, 1, 1, []float32{3, 4}, 2, &pk, 0, c, 2)
	assert.Equal(t, []float32{3, 10}, c) // [3 4]·[[1 2] [0 1]]
}

func TestPackedErrors(t *testing.T) {
	var pk Packed[float32]
	assert.PanicsWithValue(t, "gemm: product with an empty Packed", func() {
		SgemmPacked(false, 1, 1, []float32{1}, 1, &pk, 0, []float32{0}, 1)
	})
	assert.PanicsWithValue(t, "gemm: packing a depth of 1; a packed product needs k >= 2", func() {
		PackS(&pk, false, 1, 2, []float32{1, 2}, 2)
	})
	assert.Panics(t, func() { PackS(&pk, false, 3, 2, []float32{1, 2}, 2) }, "short B")
	PackS(&pk, false, 2, 2, []float32{1, 2, 3, 4}, 2)
	assert.Panics(t, func() { SgemmPacked(false, 2, 1, []float32{1, 2}, 2, &pk, 0, make([]float32, 4), 2) }, "short A")
	assert.Panics(t, func() { SgemmPacked(false, 1, 1, []float32{1, 2}, 2, &pk, 0, make([]float32, 4), 1) }, "ldc below n")
}
