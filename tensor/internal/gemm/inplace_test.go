package gemm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Reading A in place issues the packed kernel's operations in its order,
// so every product equals, bit for bit, the one that packs A: both
// layouts of A, padded strides, whole and short panels (m not a multiple
// of 6), short column tiles, depths across the kc block, alpha and beta,
// on one goroutine and on the default thread count. Transposed A with
// rows over inPlaceMaxRowT bytes is packed either way.
func TestInPlaceMatchesPacked(t *testing.T) {
	if !hasAsm {
		t.Skip("no in-place kernels on this CPU")
	}
	t.Run("f32", func(t *testing.T) { checkInPlace[float32](t) })
	t.Run("f64", func(t *testing.T) { checkInPlace[float64](t) })
}

func checkInPlace[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	defer func() { useInPlace = true }()
	for _, tA := range []bool{false, true} {
		for _, s := range []shape{{6, 16, 1}, {13, 40, 7}, {61, 128, 300}, {150, 200, 64}, {200, 256, 700}, {96, 72, 33}} {
			for _, ab := range [][2]float64{{1, 0}, {-0.5, 1.25}} {
				mt := makeMatrices[T](rng, tA, false, s.m, s.n, s.k, false)
				for _, threads := range []int{1, 2} {
					run := func(on bool) []T {
						useInPlace = on
						c := slices.Clone(mt.c)
						old := SetThreads(threads)
						callGemm(tA, false, s.m, s.n, s.k, T(ab[0]), mt.a, mt.lda, mt.b, mt.ldb, T(ab[1]), c, mt.ldc)
						SetThreads(old)
						return c
					}
					packed, inPlace := run(false), run(true)
					for i := range packed {
						if packed[i] != inPlace[i] {
							t.Fatalf("tA=%v %dx%dx%d alpha %v beta %v threads %d: element %d is %v in place, %v packed",
								tA, s.m, s.n, s.k, ab[0], ab[1], threads, i, inPlace[i], packed[i])
						}
					}
				}
			}
		}
	}
}
