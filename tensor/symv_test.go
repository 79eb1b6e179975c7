package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSymvLower checks the lower-triangle product against the plain sum
// over the full symmetric matrix, at orders that exercise the 4-column
// blocks, the leftover columns and rows, and the two-goroutine split.
func TestSymvLower(t *testing.T) {
	for _, m := range []int{1, 3, 4, 7, 9, 64, 301, 517} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(m)))
			lda := m + 3
			a := make([]float64, lda*m)
			for i := range a {
				a[i] = rng.Float64()*2 - 1
			}
			x := make([]float64, m)
			for i := range x {
				x[i] = rng.Float64()*2 - 1
			}
			sym := func(r, c int) float64 { return a[max(r, c)+min(r, c)*lda] }
			y := make([]float64, m)
			symvLower(m, a, lda, x, y, make([]float64, m))
			y32 := make([]float32, m)
			a32, x32 := make([]float32, len(a)), make([]float32, m)
			for i, v := range a {
				a32[i] = float32(v)
			}
			for i, v := range x {
				x32[i] = float32(v)
			}
			symvLower(m, a32, lda, x32, y32, make([]float32, m))
			for r := 0; r < m; r++ {
				var want float64
				for c := 0; c < m; c++ {
					want += sym(r, c) * x[c]
				}
				assert.InDelta(t, want, y[r], 1e-12*float64(m), "row %d", r)
				assert.InDelta(t, want, float64(y32[r]), 1e-5*float64(m), "float32 row %d", r)
			}
		})
	}
}
