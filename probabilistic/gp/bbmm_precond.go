package gp

import (
	"fmt"
	"math"

	"github.com/gradus-ml/gradus/internal/parallel"
	"github.com/gradus-ml/gradus/tensor"
)

// PivotedCholesky is the preconditioner P = LLᵀ + σ²I of Gardner et al.
// (2018) for K + σ²I, where L (n, k) is the rank-k pivoted partial
// Cholesky factor of K (Harbrecht et al. 2012). Solves use the Woodbury
// identity and the log-determinant the matrix determinant lemma, both
// through the Cholesky factor of the k × k capacitance matrix σ²I + LᵀL.
type PivotedCholesky struct {
	n, k  int
	noise float64
	l     []float64      // (n, k)
	cap   *tensor.Tensor // Cholesky factor of σ²I + LᵀL, (k, k)
}

// NewPivotedCholesky builds the preconditioner from the diagonal of K
// (n values) and a function returning row i of K, stopping early when the
// largest remaining pivot falls below 1e-10 of the first. It returns an
// error if rank < 1, noise ≤ 0 or a diagonal entry is negative.
func NewPivotedCholesky(diag []float64, row func(i int) []float64, rank int, noise float64) (*PivotedCholesky, error) {
	n := len(diag)
	if rank < 1 || !(noise > 0) || n == 0 {
		return nil, fmt.Errorf("gp.NewPivotedCholesky: need rank ≥ 1, noise > 0 and a non-empty diagonal; got rank %d, noise %g, %d values", rank, noise, n)
	}
	rank = min(rank, n)
	d := append([]float64(nil), diag...)
	for i, v := range d {
		if v < 0 || math.IsNaN(v) {
			return nil, fmt.Errorf("gp.NewPivotedCholesky: diagonal entry %d is %g", i, v)
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	// l holds L row by row with stride rank, so that the update of a new
	// column by the earlier ones, L[j, :m]·L[piv, :m], is a dot product of
	// two contiguous rows for each remaining j, split over the cores.
	l := make([]float64, n*rank)
	k := 0
	first := -1.0
	pivoted := make([]bool, n)
	for m := 0; m < rank; m++ {
		best := m
		for j := m + 1; j < n; j++ {
			if d[perm[j]] > d[perm[best]] {
				best = j
			}
		}
		perm[m], perm[best] = perm[best], perm[m]
		piv := perm[m]
		if first < 0 {
			first = d[piv]
		}
		if !(d[piv] > 1e-10*first) {
			break
		}
		lmm := math.Sqrt(d[piv])
		kr := row(piv)
		l[piv*rank+m] = lmm
		pivoted[piv] = true
		u := l[piv*rank : piv*rank+m]
		// In index order rather than pivot order, so that L streams
		// through memory.
		parallel.Range(n, 0, 4096, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				if pivoted[j] {
					continue
				}
				v := (kr[j] - dot4(l[j*rank:j*rank+m], u)) / lmm
				l[j*rank+m] = v
				d[j] -= v * v
			}
		})
		k++
	}
	p := &PivotedCholesky{n: n, k: k, noise: noise, l: make([]float64, n*k)}
	for i := 0; i < n; i++ {
		copy(p.l[i*k:(i+1)*k], l[i*rank:i*rank+k])
	}
	lmat := tensor.FromFloat64s(p.l, n, k)
	capm := tensor.MatMulT(lmat, lmat, true, false)
	cv := capm.Float64s()
	for i := 0; i < k; i++ {
		cv[i*k+i] += noise
	}
	var err error
	if p.cap, err = tensor.Cholesky(capm); err != nil {
		return nil, fmt.Errorf("gp.NewPivotedCholesky: capacitance matrix: %w", err)
	}
	return p, nil
}

// Rank returns the rank k reached (at most the one asked for).
func (p *PivotedCholesky) Rank() int { return p.k }

// Solve sets dst = P⁻¹r = (r − L(σ²I + LᵀL)⁻¹Lᵀr)/σ² for r and dst (n, t).
func (p *PivotedCholesky) Solve(dst, r []float64, t int) {
	rt := tensor.FromFloat64s(r, p.n, t)
	if p.k == 0 {
		for i := range dst {
			dst[i] = r[i] / p.noise
		}
		return
	}
	lt := tensor.FromFloat64s(p.l, p.n, p.k)
	u := tensor.CholeskySolve(p.cap, tensor.MatMulT(lt, rt, true, false))
	lu := tensor.MatMul(lt, u).Float64s()
	for i := range dst {
		dst[i] = (r[i] - lu[i]) / p.noise
	}
}

// LogDet returns log det P = (n − k) log σ² + log det(σ²I + LᵀL).
func (p *PivotedCholesky) LogDet() float64 {
	ld := float64(p.n-p.k) * math.Log(p.noise)
	if p.k > 0 {
		ld += tensor.LogDetChol(p.cap).Item()
	}
	return ld
}

// Sample returns t draws from N(0, P) as the columns of an (n, t) slice:
// Lε₁ + σε₂ with standard normal ε₁ (k, t) and ε₂ (n, t).
func (p *PivotedCholesky) Sample(rng *tensor.RNG, t int) []float64 {
	out := make([]float64, p.n*t)
	if p.k > 0 {
		e := rng.Normal(tensor.Float64, 0, 1, p.k, t)
		copy(out, tensor.MatMul(tensor.FromFloat64s(p.l, p.n, p.k), e).Float64s())
	}
	s := math.Sqrt(p.noise)
	for i := range out {
		out[i] += s * rng.NormFloat64()
	}
	return out
}

// dot4 returns Σ a[i]·b[i] with four partial sums, which the processor
// can run in parallel.
func dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
