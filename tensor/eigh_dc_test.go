package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStedcAgainstQL checks divide and conquer on tridiagonal matrices
// (random, Wilkinson's W⁺ with its nearly equal pairs, a constant diagonal
// with tiny couplings, and one that splits into equal blocks) against the QL
// iteration's eigenvalues, with ‖TZ − ZΛ‖ and ‖ZᵀZ − I‖ small.
func TestStedcAgainstQL(t *testing.T) {
	for _, kind := range []string{"random", "wilkinson", "tinycoupling", "split"} {
		for _, n := range []int{33, 64, 100, 201, 600} {
			t.Run(fmt.Sprintf("%s/n%d", kind, n), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(n), 1))
				d, e := make([]float64, n), make([]float64, n)
				for i := range d {
					switch kind {
					case "random":
						d[i], e[i] = r.Float64()-0.5, r.Float64()-0.5
					case "wilkinson":
						d[i], e[i] = math.Abs(float64(i)-float64(n-1)/2), 1
					case "tinycoupling":
						d[i], e[i] = 1, 1e-12*r.Float64()
					case "split":
						d[i], e[i] = float64(i%3), 1
						if i%3 == 2 {
							e[i] = 0
						}
					}
				}
				e[n-1] = 0
				d1, e1 := append([]float64{}, d...), make([]float64, n)
				copy(e1[1:], e[:n-1])
				require.True(t, tqli(n, d1, e1, make([]float64, n*n)))
				d2, e2 := append([]float64{}, d...), append([]float64{}, e...)
				z := make([]float64, n*n)
				require.True(t, stedc(n, d2, e2, z))
				var tn float64
				for i := range d {
					tn = max(tn, math.Abs(d[i])+2*math.Abs(e[i]))
				}
				var res float64
				for j := 0; j < n; j++ {
					for i := 0; i < n; i++ {
						s := d[i] * z[i+j*n]
						if i > 0 {
							s += e[i-1] * z[i-1+j*n]
						}
						if i < n-1 {
							s += e[i] * z[i+1+j*n]
						}
						res = max(res, math.Abs(s-d2[j]*z[i+j*n]))
					}
				}
				assert.Less(t, res/tn, 1e-13, "residual")
				orth := laMaxDiff(laMul(laT(laMat{n, n, z}), laMat{n, n, z}), laMatOf(Eye(Float64, n)))
				assert.Less(t, orth, 1e-13, "orthogonality")
				sortFloat64s(d1)
				sortFloat64s(d2)
				for i := range d1 {
					assert.InDelta(t, d1[i], d2[i], 1e-13*tn)
				}
			})
		}
	}
}
