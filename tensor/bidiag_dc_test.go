package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bdCheck runs bdsdc on the bidiagonal (d, e) and checks B = U·diag(s)·Vᵀ,
// UᵀU = I and VᵀV = I to tol relative to ‖B‖, and that the singular values
// match those of the QR sweeps (bidiagSVD) to the same tolerance.
func bdCheck(t *testing.T, d, e []float64, tol float64) {
	t.Helper()
	n := len(d)
	s := append([]float64{}, d...)
	ee := append([]float64{}, e...)
	u, v := make([]float64, n*n), make([]float64, n*n)
	require.True(t, bdsdc(n, s, ee, u, v))
	var bnorm float64
	for i := range d {
		bnorm = max(bnorm, math.Abs(d[i]))
		if i < n-1 {
			bnorm = max(bnorm, math.Abs(e[i]))
		}
	}
	var rec, ou, ov float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var b, x, y, z float64
			if i == j {
				b = d[i]
			} else if j == i+1 {
				b = e[i]
			}
			for p := 0; p < n; p++ {
				x += u[i+p*n] * s[p] * v[j+p*n]
				y += u[p+i*n] * u[p+j*n]
				z += v[p+i*n] * v[p+j*n]
			}
			if i == j {
				y--
				z--
			}
			rec, ou, ov = max(rec, math.Abs(x-b)), max(ou, math.Abs(y)), max(ov, math.Abs(z))
		}
	}
	assert.Less(t, rec/bnorm, tol, "reconstruction")
	assert.Less(t, ou, tol, "UᵀU = I")
	assert.Less(t, ov, tol, "VᵀV = I")
	for _, x := range s {
		assert.GreaterOrEqual(t, x, 0.0)
	}
	// Against the QR sweeps.
	q, qe := append([]float64{}, d...), append([]float64{}, e...)
	ut, vt := make([]float64, n*n), make([]float64, n*n)
	require.True(t, bidiagSVD(n, q, qe, ut, vt))
	for i := range q {
		q[i] = math.Abs(q[i])
	}
	sorted := append([]float64{}, s...)
	slices.Sort(sorted)
	slices.Sort(q)
	for i := range q {
		assert.InDelta(t, q[i], sorted[i], tol*bnorm, "σ%d", i)
	}
}

func TestBidiagDivideAndConquer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	cases := map[string]func(n int) ([]float64, []float64){
		"random": func(n int) ([]float64, []float64) {
			d, e := make([]float64, n), make([]float64, n-1)
			for i := range d {
				d[i] = rng.Float64()*2 - 1
			}
			for i := range e {
				e[i] = rng.Float64()*2 - 1
			}
			return d, e
		},
		// Entries spread over 15 decades down the diagonal.
		"graded": func(n int) ([]float64, []float64) {
			d, e := make([]float64, n), make([]float64, n-1)
			for i := range d {
				d[i] = math.Pow(10, -15*float64(i)/float64(n))
			}
			for i := range e {
				e[i] = 0.5 * d[i+1]
			}
			return d, e
		},
		// Repeated singular values: a diagonal with few distinct entries
		// and tiny couplings, and zeros on the diagonal.
		"repeated": func(n int) ([]float64, []float64) {
			d, e := make([]float64, n), make([]float64, n-1)
			for i := range d {
				d[i] = float64(1 + i%3)
			}
			for i := range e {
				e[i] = 1e-9 * float64(i%5)
			}
			return d, e
		},
		"zeros": func(n int) ([]float64, []float64) {
			d, e := make([]float64, n), make([]float64, n-1)
			for i := range d {
				if i%7 != 3 {
					d[i] = rng.Float64()
				}
			}
			for i := range e {
				e[i] = rng.Float64()
			}
			return d, e
		},
		"ones": func(n int) ([]float64, []float64) {
			d, e := make([]float64, n), make([]float64, n-1)
			for i := range d {
				d[i] = 1
			}
			for i := range e {
				e[i] = 1
			}
			return d, e
		},
	}
	for name, gen := range cases {
		for _, n := range []int{1, 2, 25, 26, 60, 203} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				d, e := gen(n)
				bdCheck(t, d, e, 1e-13*float64(n+4))
			})
		}
	}
}
