package svm

import (
	"context"
	"fmt"
	"math"
)

// The dual problems of C-SVC, ε-SVR, ν-SVC and ν-SVR share LIBSVM's form
//
//	min_α ½ αᵀQα + pᵀα   subject to   yᵀα = Δ,  0 ≤ αᵢ ≤ Cᵢ,
//
// with y ∈ {±1}ⁿ and Qᵢⱼ = yᵢyⱼK(xᵢ, xⱼ); the ν problems add eᵀα = const
// and keep it by moving two variables of the same sign at a time. solve
// runs SMO on it with the second-order working-set selection of Fan, Chen
// and Lin (2005, WSS 3) and LIBSVM's shrinking, and reports ρ, the negated
// bias, computed as LIBSVM does. The code follows LIBSVM's Solver and
// Solver_NU closely, so that both take the same steps.

// qMatrix gives the columns of Q, through a bounded cache, and its
// diagonal, in the solver's order of the variables, which swap permutes.
type qMatrix interface {
	// column returns entries [0, length) of column i. The slice is valid
	// until the call after next: the solver holds two columns at a time.
	column(i, length int) []float64
	diag() []float64
	swap(i, j int)
}

// solveOptions are the solver's settings.
type solveOptions struct {
	ctx     context.Context // checked every 1000 steps; nil means never
	eps     float64
	maxIter int
	nu      bool // Solver_NU: two equality constraints, pairs within a sign
	shrink  bool
}

// solution is what solve returns, in the variables' original order.
type solution struct {
	alpha      []float64
	grad       []float64 // G = Qα + p at the solution
	rho        float64
	r          float64 // ν problems: LIBSVM's r (ν-SVC's margin, minus ν-SVR's ε)
	iterations int
	converged  bool
	violation  float64 // the maximal violation when the solver stopped
	cancelled  error   // ctx's error if the solver stopped for it
	minActive  int     // the fewest variables active at once (l without shrinking)
}

// tau keeps the curvature a positive when K is only positive semidefinite
// (LIBSVM's TAU).
const tau = 1e-12

const (
	atLower int8 = iota
	atUpper
	isFree
)

type solver struct {
	q        qMatrix
	opt      solveOptions
	l, act   int // variables, active variables (the first act positions)
	y, p, c  []float64
	alpha, g []float64
	gbar     []float64 // Σ over αⱼ at their upper bound of Cⱼ·Q column j
	status   []int8
	index    []int // position → variable
	unshrunk bool
}

// solve minimises the dual from α = alpha0 (feasible) until the maximal
// violating pair differs by less than eps or maxIter steps were taken.
func solve(q qMatrix, p, y, c, alpha0 []float64, opt solveOptions) solution {
	l := len(p)
	s := &solver{q: q, opt: opt, l: l, act: l,
		y: append([]float64(nil), y...), p: append([]float64(nil), p...), c: append([]float64(nil), c...),
		alpha: append([]float64(nil), alpha0...), g: append([]float64(nil), p...),
		gbar: make([]float64, l), status: make([]int8, l), index: make([]int, l)}
	for i := range l {
		s.index[i] = i
		s.setStatus(i)
	}
	for i := range l {
		if s.status[i] == atLower {
			continue
		}
		qi := q.column(i, l)
		a := s.alpha[i]
		for j := range l {
			s.g[j] += a * qi[j]
		}
		if s.status[i] == atUpper {
			for j := range l {
				s.gbar[j] += s.c[i] * qi[j]
			}
		}
	}
	sol := solution{minActive: l}
	sol.iterations, sol.converged, sol.violation, sol.cancelled = s.run(&sol.minActive)
	if opt.nu {
		sol.rho, sol.r = s.rhoNU()
	} else {
		sol.rho = s.rho()
	}
	sol.alpha, sol.grad = make([]float64, l), make([]float64, l)
	for t, v := range s.index {
		sol.alpha[v], sol.grad[v] = s.alpha[t], s.g[t]
	}
	return sol
}

func (s *solver) setStatus(i int) {
	switch {
	case s.alpha[i] >= s.c[i]:
		s.status[i] = atUpper
	case s.alpha[i] <= 0:
		s.status[i] = atLower
	default:
		s.status[i] = isFree
	}
}

// run is LIBSVM's main loop: shrink every min(l, 1000) steps, and before
// stopping, restore every variable and check optimality on all of them. It
// stops early, at a feasible iterate, when ctx is cancelled.
func (s *solver) run(minActive *int) (iter int, converged bool, viol float64, cancelled error) {
	counter := min(s.l, 1000) + 1
	viol = math.Inf(1)
	for iter < s.opt.maxIter {
		if iter%1000 == 0 && s.opt.ctx != nil {
			if err := s.opt.ctx.Err(); err != nil {
				cancelled = err
				break
			}
		}
		if counter--; counter == 0 {
			counter = min(s.l, 1000)
			if s.opt.shrink {
				s.shrink()
				*minActive = min(*minActive, s.act)
			}
		}
		var i, j int
		i, j, viol = s.selectWorkingSet()
		if j < 0 || viol < s.opt.eps {
			s.reconstructGradient()
			s.act = s.l
			if i, j, viol = s.selectWorkingSet(); j < 0 || viol < s.opt.eps {
				return iter, true, viol, nil
			}
			counter = 1 // shrink at the next step
		}
		iter++
		s.step(i, j)
	}
	s.reconstructGradient()
	s.act = s.l
	return iter, false, viol, cancelled
}

// step solves the two-variable subproblem in αᵢ, αⱼ and updates G and Ḡ.
func (s *solver) step(i, j int) {
	qi := s.q.column(i, s.act)
	qj := s.q.column(j, s.act)
	qd := s.q.diag()
	alpha, g := s.alpha, s.g
	ci, cj := s.c[i], s.c[j]
	oi, oj := alpha[i], alpha[j]
	if s.y[i] != s.y[j] {
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
		if diff > ci-cj {
			if alpha[i] > ci {
				alpha[i], alpha[j] = ci, ci-diff
			}
		} else if alpha[j] > cj {
			alpha[j], alpha[i] = cj, cj+diff
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
		if sum > ci {
			if alpha[i] > ci {
				alpha[i], alpha[j] = ci, sum-ci
			}
		} else if alpha[j] < 0 {
			alpha[j], alpha[i] = 0, sum
		}
		if sum > cj {
			if alpha[j] > cj {
				alpha[j], alpha[i] = cj, sum-cj
			}
		} else if alpha[i] < 0 {
			alpha[i], alpha[j] = 0, sum
		}
	}
	di, dj := alpha[i]-oi, alpha[j]-oj
	gs := g[:s.act]
	qi, qj = qi[:len(gs)], qj[:len(gs)]
	for k := range gs {
		gs[k] += qi[k]*di + qj[k]*dj
	}
	// Ḡ changes when a variable reaches or leaves its upper bound.
	for _, v := range [2]int{i, j} {
		wasUpper := s.status[v] == atUpper
		s.setStatus(v)
		if wasUpper == (s.status[v] == atUpper) {
			continue
		}
		cv := s.c[v]
		if wasUpper {
			cv = -cv
		}
		qv := s.q.column(v, s.l)
		for k := range s.l {
			s.gbar[k] += cv * qv[k]
		}
	}
}

// selectWorkingSet returns the pair (i, j) of WSS 3 and the maximal
// violation; j < 0 when no pair can make progress.
func (s *solver) selectWorkingSet() (int, int, float64) {
	if s.opt.nu {
		return s.selectNU()
	}
	g, y, st := s.g, s.y, s.status
	gmax, gmax2 := math.Inf(-1), math.Inf(-1)
	i, j := -1, -1
	for t := range s.act {
		if y[t] > 0 {
			if st[t] != atUpper && -g[t] >= gmax {
				gmax, i = -g[t], t
			}
		} else if st[t] != atLower && g[t] >= gmax {
			gmax, i = g[t], t
		}
	}
	var qi []float64
	if i >= 0 {
		qi = s.q.column(i, s.act)
	}
	qd := s.q.diag()
	best := math.Inf(1)
	for t := range s.act {
		if y[t] > 0 {
			if st[t] == atLower {
				continue
			}
			gmax2 = max(gmax2, g[t])
			if b := gmax + g[t]; b > 0 && i >= 0 {
				if obj := -b * b / curvature(qd[i]+qd[t]-2*y[i]*qi[t]); obj <= best {
					j, best = t, obj
				}
			}
		} else {
			if st[t] == atUpper {
				continue
			}
			gmax2 = max(gmax2, -g[t])
			if b := gmax - g[t]; b > 0 && i >= 0 {
				if obj := -b * b / curvature(qd[i]+qd[t]+2*y[i]*qi[t]); obj <= best {
					j, best = t, obj
				}
			}
		}
	}
	return i, j, gmax + gmax2
}

func curvature(a float64) float64 {
	if a > 0 {
		return a
	}
	return tau
}

// rho is LIBSVM's ρ: the mean of yᵢGᵢ over the free variables (0 < αᵢ <
// Cᵢ), or the midpoint of the feasible interval when none is free.
func (s *solver) rho() float64 {
	ub, lb := math.Inf(1), math.Inf(-1)
	sum, nFree := 0.0, 0
	for t := range s.act {
		yg := s.y[t] * s.g[t]
		switch s.status[t] {
		case atUpper:
			if s.y[t] < 0 {
				ub = min(ub, yg)
			} else {
				lb = max(lb, yg)
			}
		case atLower:
			if s.y[t] > 0 {
				ub = min(ub, yg)
			} else {
				lb = max(lb, yg)
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

// checkOptions validates the common solver settings (after withDefaults,
// so zero has become the default): C and Tol positive and finite, MaxIter
// and CacheBytes not negative.
func checkOptions(op string, o solverOptions) error {
	if !(o.C > 0) || math.IsInf(o.C, 0) {
		return fmt.Errorf("%s: C = %v must be positive and finite", op, o.C)
	}
	if !(o.Tol > 0) || math.IsInf(o.Tol, 0) {
		return fmt.Errorf("%s: tolerance %v must be positive and finite", op, o.Tol)
	}
	if o.MaxIter < 0 || o.CacheBytes < 0 {
		return fmt.Errorf("%s: MaxIter %d and CacheBytes %d must not be negative", op, o.MaxIter, o.CacheBytes)
	}
	return nil
}
