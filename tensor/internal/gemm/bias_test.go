package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// SgemmBias and DgemmBias give the bits of filling every row of C with
// the bias and calling Sgemm/Dgemm with alpha = beta = 1: for every kernel
// and thread count, on shapes with partial tiles, several depth slabs
// (k above kc), k of 1 and 0, products split over goroutines, and both
// transposes;
// C's padding keeps its sentinel.
func TestGemmBiasMatchesFilledC(t *testing.T) {
	shapes := append([]shape{{7, 13, 0}, {5, 9, 1}, {130, 70, 1100}, {400, 420, 390}}, testShapes...)
	for _, mode := range kernelModes() {
		t.Run(mode.name, func(t *testing.T) {
			t.Cleanup(mode.use())
			for _, threads := range []int{1, 2} {
				prev := SetThreads(threads)
				rng := rand.New(rand.NewPCG(5, uint64(threads)))
				for _, s := range shapes {
					for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}} {
						name := fmt.Sprintf("threads=%d/%dx%dx%d/%v", threads, s.m, s.n, s.k, tr)
						biasCase[float32](t, rng, tr[0], tr[1], s, name)
						biasCase[float64](t, rng, tr[0], tr[1], s, name)
					}
				}
				SetThreads(prev)
			}
		})
	}
}

func biasCase[T float](t *testing.T, rng *rand.Rand, tA, tB bool, s shape, name string) {
	t.Helper()
	mt := makeMatrices[T](rng, tA, tB, s.m, s.n, s.k, true) // C starts as NaN: it must be overwritten
	bias := make([]T, s.n)
	for j := range bias {
		bias[j] = T(rng.Float64()*4 - 2)
	}
	want := append([]T(nil), mt.c...)
	for i := range s.m {
		copy(want[i*mt.ldc:i*mt.ldc+s.n], bias)
	}
	got := append([]T(nil), mt.c...)
	switch any(bias).(type) {
	case []float32:
		Sgemm(tA, tB, s.m, s.n, s.k, 1, any(mt.a).([]float32), mt.lda, any(mt.b).([]float32), mt.ldb, 1, any(want).([]float32), mt.ldc)
		SgemmBias(tA, tB, s.m, s.n, s.k, any(mt.a).([]float32), mt.lda, any(mt.b).([]float32), mt.ldb, any(bias).([]float32), any(got).([]float32), mt.ldc)
	default:
		Dgemm(tA, tB, s.m, s.n, s.k, 1, any(mt.a).([]float64), mt.lda, any(mt.b).([]float64), mt.ldb, 1, any(want).([]float64), mt.ldc)
		DgemmBias(tA, tB, s.m, s.n, s.k, any(mt.a).([]float64), mt.lda, any(mt.b).([]float64), mt.ldb, any(bias).([]float64), any(got).([]float64), mt.ldc)
	}
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.Float64bits(w) != math.Float64bits(g) && !(math.IsNaN(w) && math.IsNaN(g)) {
			t.Fatalf("%s: element %d (row %d): filled C gives %v, the bias call %v", name, i, i/mt.ldc, w, g)
		}
	}
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.n; j++ {
			if v := float64(got[i*mt.ldc+j]); math.IsNaN(v) {
				t.Fatalf("%s: C[%d, %d] is NaN: not written", name, i, j)
			}
		}
	}
}

// A bias shorter than the columns is refused.
func TestGemmBiasShort(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || fmt.Sprint(r) != "gemm: bias has 2 elements for 3 columns" {
			t.Fatalf("panic %v", r)
		}
	}()
	SgemmBias(false, false, 2, 3, 4, make([]float32, 8), 4, make([]float32, 12), 3, make([]float32, 2), make([]float32, 6), 3)
}
