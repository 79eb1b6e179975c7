package tensor

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qrUnblocked is the textbook Householder QR (Golub and Van Loan 2013,
// Algorithm 5.2.1), one reflector applied to the whole trailing matrix at
// a time and Q accumulated explicitly, in float64 with R's diagonal made
// non-negative: the reference the blocked factorisation must agree with
// (the factorisation of a full-rank matrix is unique).
func qrUnblocked(m, n int, a []float64) (q, r []float64) {
	k := min(m, n)
	r = append([]float64(nil), a...)
	qf := make([]float64, m*m) // Q = H₀⋯H_{k−1}, m×m
	for i := 0; i < m; i++ {
		qf[i*m+i] = 1
	}
	v := make([]float64, m)
	for j := 0; j < k; j++ {
		var nrm float64
		for i := j; i < m; i++ {
			nrm += r[i*n+j] * r[i*n+j]
		}
		nrm = math.Sqrt(nrm)
		if nrm == 0 {
			continue
		}
		alpha := -math.Copysign(nrm, r[j*n+j])
		clear(v)
		for i := j; i < m; i++ {
			v[i] = r[i*n+j]
		}
		v[j] -= alpha
		var vv float64
		for i := j; i < m; i++ {
			vv += v[i] * v[i]
		}
		if vv == 0 {
			continue
		}
		for c := j; c < n; c++ { // R ← H·R
			var s float64
			for i := j; i < m; i++ {
				s += v[i] * r[i*n+c]
			}
			for i := j; i < m; i++ {
				r[i*n+c] -= 2 * s / vv * v[i]
			}
		}
		for row := 0; row < m; row++ { // Q ← Q·H
			var s float64
			for i := j; i < m; i++ {
				s += qf[row*m+i] * v[i]
			}
			for i := j; i < m; i++ {
				qf[row*m+i] -= 2 * s / vv * v[i]
			}
		}
	}
	q = make([]float64, m*k)
	rr := make([]float64, k*n)
	for i := 0; i < k; i++ {
		sg := 1.0
		if r[i*n+i] < 0 {
			sg = -1
		}
		for c := i; c < n; c++ {
			rr[i*n+c] = sg * r[i*n+c]
		}
		for row := 0; row < m; row++ {
			q[row*k+i] = sg * qf[row*m+i]
		}
	}
	return q, rr
}

// TestQRBlockedMatchesUnblocked compares the blocked QR (left-looking
// panels of reflectorBlock columns, trailing updates and Q in compact WY
// form) with the unblocked reference on shapes around the block size:
// nb−1, nb, nb+1, 2nb+3 columns, square, tall and wide, and on shapes
// whose trailing updates look ahead when GOMAXPROCS > 1 (run with -cpu 1,2
// to cover both schedules).
func TestQRBlockedMatchesUnblocked(t *testing.T) {
	nb := reflectorBlock
	shapes := [][2]int{
		{nb - 1, nb - 1}, {nb, nb}, {nb + 1, nb + 1}, {2*nb + 3, 2*nb + 3},
		{3 * nb, nb - 1}, {2*nb + 3, nb + 1}, {4 * nb, 2*nb + 3},
		{nb - 1, 2 * nb}, {nb + 1, 3 * nb}, {2*nb + 3, 4*nb + 1},
		// Wide enough for the look-ahead (with two or more cores).
		{2*nb + 3, 6*nb + 5}, {5*nb + 16, 5*nb + 16},
	}
	for i, sh := range shapes {
		m, n := sh[0], sh[1]
		for _, dt := range laDTypes {
			t.Run(fmt.Sprintf("%dx%d/%s", m, n, dt), func(t *testing.T) {
				a := laRandom(dt, uint64(500+i), m, n)
				q, r, err := QR(a)
				require.NoError(t, err)
				qrCheck(t, dt, laMatOf(a), laMatOf(q), laMatOf(r))
				wq, wr := qrUnblocked(m, n, laRandom(Float64, uint64(500+i), m, n).Values())
				// Cond(A) of a random square matrix is O(n); the factors
				// move by about that times the rounding.
				tol := 50 * laRelTol(dt, max(m, n))
				assert.InDeltaSlice(t, wq, q.Values(), tol, "Q")
				assert.InDeltaSlice(t, wr, r.Values(), tol*math.Sqrt(float64(m)), "R")
			})
		}
	}
}

// TestReflectorsBlockT checks the T factor, built by the QR panel as it
// goes and by blockT from the Gram matrix VᵀV, against the product of the
// block's reflectors formed one at a time: I − V·T·Vᵀ = H_{j0}⋯H_{j1−1}.
func TestReflectorsBlockT(t *testing.T) {
	nb := reflectorBlock
	for _, sh := range [][2]int{{2*nb + 3, 2*nb + 3}, {3 * nb, nb + 1}} {
		m, n := sh[0], sh[1]
		w := laRandom(Float64, 9, m, n).Values()
		refl := qrFactor(m, n, w)
		for j0 := 0; j0 < refl.k; j0 += nb {
			j1 := min(j0+nb, refl.k)
			b := j1 - j0
			fromPanel := append([]float64(nil), refl.blockT(j0, j1)...)
			refl.tok[j0/nb] = false
			fromGram := refl.blockT(j0, j1)
			assert.InDeltaSlice(t, fromPanel, fromGram, 1e-13, "T of block %d", j0/nb)
			// Product of the reflectors, H = I − τ v vᵀ each.
			h := make([]float64, m*m)
			for i := 0; i < m; i++ {
				h[i*m+i] = 1
			}
			for j := j0; j < j1; j++ {
				v, tau := refl.vt[j*m:(j+1)*m], refl.tau[j]
				for row := 0; row < m; row++ { // h ← h·H_j
					var s float64
					for c := range v {
						s += h[row*m+c] * v[c]
					}
					for c := range v {
						h[row*m+c] -= tau * s * v[c]
					}
				}
			}
			// I − V·T·Vᵀ from the block's T.
			for r := 0; r < m; r++ {
				for c := 0; c < m; c++ {
					want := 0.0
					if r == c {
						want = 1
					}
					for p := 0; p < b; p++ {
						for q := p; q < b; q++ {
							want -= refl.vt[(j0+p)*m+r] * fromGram[p*b+q] * refl.vt[(j0+q)*m+c]
						}
					}
					require.InDelta(t, h[r*m+c], want, 1e-13, "block %d (%d, %d)", j0/nb, r, c)
				}
			}
		}
		refl.release()
	}
}

// TestReflectorsWideApply checks applyQ and applyQT, which apply
// applyBlockWidth reflectors at a time (a T formed by wideT), against the
// reflectors applied one at a time, H = I − τ v vᵀ each, for blocks that
// are whole, cut short, and narrower than a cached block, and for a C
// too small for the wide blocks.
func TestReflectorsWideApply(t *testing.T) {
	nb := applyBlockWidth
	for _, sh := range [][3]int{{4*nb + 5, 4*nb + 5, 2 * nb}, {4*nb + 9, 2*nb + 1, 2 * nb}, {4 * nb, nb/2 + 3, 2 * nb}, {nb + 9, nb + 9, 7}} {
		m, n, nc := sh[0], sh[1], sh[2]
		if w := (&reflectors[float64]{m: m}).applyWidth(nc); (w == applyBlockWidth) != (nc > 7) {
			t.Fatalf("%dx%d with %d columns: applyWidth %d", m, n, nc, w)
		}
		refl := qrFactor(m, n, laRandom(Float64, 13, m, n).Values())
		checkWideApply(t, refl, nc, fmt.Sprintf("QR %dx%d", m, n))
		refl.release()
	}
	// The bidiagonal reduction's right reflectors start one column in
	// (shift 1), and their last wide block is cut short (k = 299).
	n := 4*nb + 44
	d, e := make([]float64, n), make([]float64, n-1)
	left, right := bidiagonalizeBlocked(n, n, laRandom(Float64, 15, n, n).Values(), d, e)
	checkWideApply(t, right, 2*nb, "bidiagonal right")
	checkWideApply(t, left, 2*nb, "bidiagonal left")
	left.release()
	right.release()
}

// checkWideApply compares refl.applyQ and refl.applyQT on a random m×nc C
// with the reflectors applied one at a time.
func checkWideApply(t *testing.T, refl *reflectors[float64], nc int, name string) {
	t.Helper()
	m := refl.m
	c0 := laRandom(Float64, 14, m, nc).Values()
	// reflect sets c ← H_j·c.
	reflect := func(c []float64, j int) {
		v, tau := refl.vt[j*m:(j+1)*m], refl.tau[j]
		for col := 0; col < nc; col++ {
			var s float64
			for r := range v {
				s += v[r] * c[r*nc+col]
			}
			for r := range v {
				c[r*nc+col] -= tau * s * v[r]
			}
		}
	}
	wantQ := append([]float64(nil), c0...)
	for j := refl.k - 1; j >= 0; j-- {
		reflect(wantQ, j)
	}
	gotQ := append([]float64(nil), c0...)
	refl.applyQ(gotQ, nc, nc, false)
	assert.InDeltaSlice(t, wantQ, gotQ, 1e-12, "Q·C, %s", name)
	wantQT := append([]float64(nil), c0...)
	for j := 0; j < refl.k; j++ {
		reflect(wantQT, j)
	}
	gotQT := append([]float64(nil), c0...)
	refl.applyQT(gotQT, nc, nc)
	assert.InDeltaSlice(t, wantQT, gotQT, 1e-12, "Qᵀ·C, %s", name)
}

// TestQRSameBitsAnyThreads checks that the factorisation's look-ahead
// (the next panel on one goroutine, the far columns on another) gives the
// bits of one goroutine.
func TestQRSameBitsAnyThreads(t *testing.T) {
	a := laRandom(Float64, 35, 300, 280)
	assertSameBitsAnyProcs(t, func() []*Tensor {
		q, r, err := QR(a)
		require.NoError(t, err)
		return []*Tensor{q, r}
	})
}
