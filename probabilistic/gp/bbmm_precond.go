package gp

import (
	"fmt"
	"math"

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
	cols := make([][]float64, 0, rank)
	first := -1.0
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
		col := make([]float64, n)
		col[piv] = lmm
		for _, pj := range perm[m+1:] {
			s := kr[pj]
			for c := 0; c < m; c++ {
				s -= cols[c][pj] * cols[c][piv]
			}
			col[pj] = s / lmm
			d[pj] -= col[pj] * col[pj]
		}
		cols = append(cols, col)
	}
	k := len(cols)
	p := &PivotedCholesky{n: n, k: k, noise: noise, l: make([]float64, n*k)}
	for c, col := range cols {
		for i, v := range col {
			p.l[i*k+c] = v
		}
	}
	lt := tensor.FromFloat64s(p.l, n, k)
	capm := tensor.MatMulT(lt, lt, true, false)
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
