package svm

import (
	"fmt"
	"math"
)

// The dual problems of C-SVC and ε-SVR share LIBSVM's form
//
//	min_α ½ αᵀQα + pᵀα   subject to   yᵀα = Δ,  0 ≤ αᵢ ≤ Cᵢ,
//
// with y ∈ {±1}ⁿ and Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ). solve runs SMO on it with the
// second-order working-set selection of Fan, Chen and Lin (2005, WSS 3)
// and reports ρ, the negated bias, computed as LIBSVM does.

// qMatrix gives the columns of Q (through a bounded cache) and its
// diagonal.
type qMatrix interface {
	column(i int) []float64
	diag() []float64
}

// solution is what solve returns.
type solution struct {
	alpha      []float64
	grad       []float64 // G = Qα + p at the solution
	rho        float64
	iterations int
	converged  bool
	gap        float64 // m(α) − M(α), the maximal violation at the end
}

// tau keeps the curvature a positive when K is only positive semidefinite
// (LIBSVM's TAU).
const tau = 1e-12

// solve minimises the dual from α = alpha0 (feasible) until the maximal
// violating pair differs by at most eps or maxIter steps were taken.
func solve(q qMatrix, p, y, c, alpha0 []float64, eps float64, maxIter int) solution {
	n := len(p)
	alpha := append([]float64(nil), alpha0...)
	g := append([]float64(nil), p...)
	for i, a := range alpha {
		if a != 0 {
			qi := q.column(i)
			for t := range g {
				g[t] += a * qi[t]
			}
		}
	}
	qd := q.diag()
	upper := func(t int) bool { return (y[t] > 0 && alpha[t] < c[t]) || (y[t] < 0 && alpha[t] > 0) }
	lower := func(t int) bool { return (y[t] > 0 && alpha[t] > 0) || (y[t] < 0 && alpha[t] < c[t]) }
	sol := solution{}
	for sol.iterations < maxIter {
		// i maximises −yG over I_up.
		i, gmax := -1, math.Inf(-1)
		for t := range n {
			if upper(t) && -y[t]*g[t] > gmax {
				i, gmax = t, -y[t]*g[t]
			}
		}
		// j minimises −b²/a over I_low among the violating t; gmin is M(α).
		j, gmin, best := -1, math.Inf(1), math.Inf(1)
		var qi []float64
		if i >= 0 {
			qi = q.column(i)
		}
		for t := range n {
			if !lower(t) {
				continue
			}
			v := -y[t] * g[t]
			gmin = math.Min(gmin, v)
			if i < 0 {
				continue
			}
			if b := gmax - v; b > 0 {
				a := qd[i] + qd[t] - 2*y[i]*y[t]*qi[t]
				if a <= 0 {
					a = tau
				}
				if obj := -b * b / a; obj <= best {
					j, best = t, obj
				}
			}
		}
		sol.gap = gmax - gmin
		if i < 0 || j < 0 || sol.gap <= eps {
			sol.converged = true
			break
		}
		sol.iterations++
		qj := q.column(j)
		oi, oj := alpha[i], alpha[j]
		if y[i] != y[j] {
			a := qd[i] + qd[j] + 2*qi[j]
			if a <= 0 {
				a = tau
			}
			delta := (-g[i] - g[j]) / a
			diff := alpha[i] - alpha[j]
			alpha[i] += delta
			alpha[j] += delta
			if diff > 0 {
				if alpha[j] < 0 {
					alpha[j], alpha[i] = 0, diff
				}
			} else if alpha[i] < 0 {
				alpha[i], alpha[j] = 0, -diff
			}
			if diff > c[i]-c[j] {
				if alpha[i] > c[i] {
					alpha[i], alpha[j] = c[i], c[i]-diff
				}
			} else if alpha[j] > c[j] {
				alpha[j], alpha[i] = c[j], c[j]+diff
			}
		} else {
			a := qd[i] + qd[j] - 2*qi[j]
			if a <= 0 {
				a = tau
			}
			delta := (g[i] - g[j]) / a
			sum := alpha[i] + alpha[j]
			alpha[i] -= delta
			alpha[j] += delta
			if sum > c[i] {
				if alpha[i] > c[i] {
					alpha[i], alpha[j] = c[i], sum-c[i]
				}
			} else if alpha[j] < 0 {
				alpha[j], alpha[i] = 0, sum
			}
			if sum > c[j] {
				if alpha[j] > c[j] {
					alpha[j], alpha[i] = c[j], sum-c[j]
				}
			} else if alpha[i] < 0 {
				alpha[i], alpha[j] = 0, sum
			}
		}
		di, dj := alpha[i]-oi, alpha[j]-oj
		for t := range g {
			g[t] += qi[t]*di + qj[t]*dj
		}
	}
	sol.alpha, sol.grad = alpha, g
	sol.rho = rho(alpha, g, y, c)
	return sol
}

// rho is LIBSVM's ρ: the mean of yᵢGᵢ over the free variables (0 < αᵢ <
// Cᵢ), or the midpoint of the feasible interval when none is free.
func rho(alpha, g, y, c []float64) float64 {
	ub, lb := math.Inf(1), math.Inf(-1)
	sum, nFree := 0.0, 0
	for t := range alpha {
		yg := y[t] * g[t]
		switch {
		case alpha[t] >= c[t]:
			if y[t] < 0 {
				ub = math.Min(ub, yg)
			} else {
				lb = math.Max(lb, yg)
			}
		case alpha[t] <= 0:
			if y[t] > 0 {
				ub = math.Min(ub, yg)
			} else {
				lb = math.Max(lb, yg)
			}
		default:
			nFree++
			sum += yg
		}
	}
	if nFree > 0 {
		return sum / float64(nFree)
	}
	return (ub + lb) / 2
}

// checkOptions validates the common solver settings.
func checkOptions(op string, c, eps float64) error {
	if !(c > 0) || math.IsInf(c, 0) {
		return fmt.Errorf("%s: C = %v must be positive and finite", op, c)
	}
	if !(eps > 0) {
		return fmt.Errorf("%s: tolerance %v must be positive", op, eps)
	}
	return nil
}
