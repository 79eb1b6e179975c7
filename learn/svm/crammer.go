package svm

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// CrammerSinger is a multiclass kernel machine in Crammer and Singer's
// form: one score per class, f_m(x) = Σᵢ Coef[i][m]·K(svᵢ, x), no bias,
// predicting the class of the largest score. It is trained jointly over
// all classes, min ½Σₘ‖wₘ‖² + C·Σᵢ ξᵢ subject to
// f_{yᵢ}(xᵢ) − f_m(xᵢ) ≥ 1 − δ_{yᵢm} − ξᵢ for every class m.
type CrammerSinger struct {
	Kernel         kernel.Kernel
	Classes        []int          // sorted labels; score m is Classes[m]'s
	SupportVectors *tensor.Tensor // (s, d) rows with a nonzero coefficient
	Support        []int          // their indices in the training rows
	Coef           [][]float64    // per support vector, one coefficient per class (summing to 0)
	// Primal is ½Σₘ‖wₘ‖² + C·Σᵢ maxₘ(1 − δ_{yᵢm} + f_m(xᵢ) − f_{yᵢ}(xᵢ)),
	// Dual is −½Σₘ‖wₘ‖² − Σᵢ Σ_{m≠yᵢ} αᵢₘ, Gap = Primal − Dual ≥ 0.
	Primal, Dual, Gap float64
	Iterations        int
	Converged         bool
}

// FitCrammerSinger trains a Crammer–Singer multiclass machine on the rows
// of x (n, d) with integer labels (at least two classes), by the
// sequential dual method (Keerthi et al. 2008, as liblinear's
// MCSVM_CS, with kernels): the dual has one block αᵢ ∈ ℝᵏ per example
// with Σₘ αᵢₘ = 0 and αᵢₘ ≤ C·δ_{yᵢm}; each step takes the example whose
// block violates the optimality conditions most and solves its k-variable
// subproblem exactly, until the violation is below opts.Tol. The kernel
// columns come through the same bounded cache as FitSVC.
//
// Bad data (NaN or ±Inf, zero rows or columns, one class) or options
// (negative C or Tol) return an error and no model. If it runs out of
// MaxIter it returns the model with a *tensor.NotConvergedError; if ctx is
// cancelled (checked every 1000 steps) it returns promptly with the model
// at the current iterate and the error wrapping ctx.Err().
func FitCrammerSinger(ctx context.Context, x *tensor.Tensor, labels []int, opts CrammerSingerOptions) (*CrammerSinger, error) {
	const op = "svm.FitCrammerSinger"
	ctx = orBackground(ctx)
	x64, err := checkData(op, x, len(labels))
	if err != nil {
		return nil, err
	}
	k := defaultKernel(opts.Kernel, x64)
	so := solverOptions{C: opts.C, Tol: opts.Tol, MaxIter: opts.MaxIter, CacheBytes: opts.CacheBytes}.withDefaults()
	if err := checkOptions(op, so); err != nil {
		return nil, err
	}
	classes := slices.Sorted(slices.Values(unique(labels)))
	if len(classes) < 2 {
		return nil, fmt.Errorf("%s: need at least two classes, got %v", op, classes)
	}
	n, nc := len(labels), len(classes)
	y := make([]int, n)
	ones := make([]float64, n)
	for i, l := range labels {
		y[i], _ = slices.BinarySearch(classes, l)
		ones[i] = 1
	}
	q, err := newSVCQ(k, x64, ones, so.CacheBytes, false)
	if err != nil {
		return nil, err
	}
	// G = Kα + e, eᵢₘ = 1 − δ_{yᵢm}: the dual's gradient, row per example.
	alpha, g := make([]float64, n*nc), make([]float64, n*nc)
	for i := range n {
		for m := range nc {
			if m != y[i] {
				g[i*nc+m] = 1
			}
		}
	}
	qd := q.diag()
	b, d, next := make([]float64, nc), make([]float64, nc), make([]float64, nc)
	m := &CrammerSinger{Kernel: k, Classes: classes}
	var stopped error
	viol := math.Inf(1)
	for m.Iterations < so.MaxIter {
		if m.Iterations%1000 == 0 {
			if stopped = ctx.Err(); stopped != nil {
				break
			}
		}
		i := -1
		viol = 0
		for t := range n {
			if v := csViolation(g[t*nc:(t+1)*nc], alpha[t*nc:(t+1)*nc], y[t], so.C); v > viol {
				i, viol = t, v
			}
		}
		if viol < so.Tol {
			m.Converged = true
			break
		}
		m.Iterations++
		a := max(qd[i], tau)
		ai := alpha[i*nc : (i+1)*nc]
		for c := range nc {
			b[c] = g[i*nc+c] - a*ai[c]
		}
		csSubproblem(a, b, y[i], so.C, d, next)
		col := q.column(i, n)
		for c := range nc {
			delta := next[c] - ai[c]
			if delta == 0 {
				continue
			}
			ai[c] = next[c]
			for j, kj := range col {
				g[j*nc+c] += kj * delta
			}
		}
	}
	// ‖w‖² summed over classes is Σᵢₘ αᵢₘ(Gᵢₘ − eᵢₘ); ξᵢ = maxₘ Gᵢₘ − G_{i,yᵢ}.
	ww, lin, slack := 0.0, 0.0, 0.0
	for i := range n {
		gi, ai := g[i*nc:(i+1)*nc], alpha[i*nc:(i+1)*nc]
		for c := range nc {
			e := 1.0
			if c == y[i] {
				e = 0
			}
			ww += ai[c] * (gi[c] - e)
			lin += ai[c] * e
		}
		slack += slices.Max(gi) - gi[y[i]]
		if slices.ContainsFunc(ai, func(v float64) bool { return v != 0 }) {
			m.Support = append(m.Support, i)
			m.Coef = append(m.Coef, slices.Clone(ai))
		}
	}
	m.Primal = ww/2 + so.C*slack
	m.Dual = -(ww/2 + lin)
	m.Gap = m.Primal - m.Dual
	m.SupportVectors = supportRows(x64, m.Support)
	switch {
	case stopped != nil:
		return m, cancelled(op, m.Iterations, stopped)
	case !m.Converged:
		return m, notConverged(op, m.Iterations, viol, so.Tol)
	}
	return m, nil
}

// csViolation is how far example i's block is from optimal: the largest
// gradient less the smallest among the variables that can still grow
// (αᵢₘ below its bound C·δ_{yᵢm}), as liblinear measures it.
func csViolation(g, a []float64, y int, c float64) float64 {
	hi, lo := math.Inf(-1), math.Inf(1)
	for m, v := range g {
		hi = max(hi, v)
		if (m == y && a[m] < c) || (m != y && a[m] < 0) {
			lo = min(lo, v)
		}
	}
	return hi - lo
}

// csSubproblem solves min ½A‖α‖² + bᵀα subject to Σα = 0, αₘ ≤ C·δ_{ym}
// exactly (Crammer and Singer 2001, as liblinear's solve_sub_problem):
// αₘ = min(bound, (β − bₘ)/A) with β found from the sorted b by a
// single sweep. d is scratch space.
func csSubproblem(a float64, b []float64, y int, c float64, d, out []float64) {
	copy(d, b)
	d[y] += a * c
	slices.SortFunc(d, func(u, v float64) int { return -cmpFloat(u, v) })
	beta := d[0] - a*c
	r := 1
	for ; r < len(d) && beta < float64(r)*d[r]; r++ {
		beta += d[r]
	}
	beta /= float64(r)
	for m := range out {
		bound := 0.0
		if m == y {
			bound = c
		}
		out[m] = min(bound, (beta-b[m])/a)
	}
}

func cmpFloat(u, v float64) int {
	switch {
	case u < v:
		return -1
	case u > v:
		return 1
	}
	return 0
}

// Decision returns the class scores (m, classes) for the rows of x.
func (m *CrammerSinger) Decision(x *tensor.Tensor) *tensor.Tensor {
	checkRows("svm.CrammerSinger.Decision", x, m.SupportVectors)
	rows, nc := x.Shape()[0], len(m.Classes)
	out := make([]float64, rows*nc)
	if len(m.Support) > 0 {
		kv, err := kernelRows(m.Kernel, x.Cast(tensor.Float64), m.SupportVectors)
		if err != nil {
			tensor.Fail("svm.CrammerSinger.Decision", "%v", err)
		}
		s := len(m.Support)
		for r := range rows {
			for j, coef := range m.Coef {
				for c, a := range coef {
					out[r*nc+c] += a * kv[r*s+j]
				}
			}
		}
	}
	return tensor.FromFloat64s(out, rows, nc)
}

// Predict returns the class of the largest score for each row of x (ties
// to the smaller label).
func (m *CrammerSinger) Predict(x *tensor.Tensor) []int {
	dec := m.Decision(x)
	nc := len(m.Classes)
	out := make([]int, x.Shape()[0])
	for r := range out {
		row := dec.Float64s()[r*nc : (r+1)*nc]
		best := 0
		for c := range row {
			if row[c] > row[best] {
				best = c
			}
		}
		out[r] = m.Classes[best]
	}
	return out
}
