package tensor

import (
	"fmt"
	"testing"
)

// BenchmarkSVD and BenchmarkQR time the float64 factorisations of a random
// square matrix; examples/bench runs the same sizes beside NumPy's LAPACK.
func BenchmarkSVD(b *testing.B) {
	for _, n := range []int{64, 256, 1000} {
		a := laRandom(Float64, 1, n, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, _, err := SVD(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkQR(b *testing.B) {
	for _, n := range []int{64, 256, 1000} {
		a := laRandom(Float64, 1, n, n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := QR(a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
