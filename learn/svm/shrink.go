package svm

import "math"

// Shrinking (LIBSVM's heuristic, Chang and Lin 2011 §5.1): a variable at a
// bound whose gradient says it would move further out of the box cannot
// join a violating pair while the violation stays as it is, so it is moved
// behind the active prefix and ignored by the working-set selection, the
// gradient update and the kernel columns. Once the maximal violation falls
// within 10·eps every variable is restored once (unshrink) and shrinking
// goes on from there; before stopping, the gradient of the shrunk
// variables is rebuilt from Ḡ and the free variables and optimality is
// checked on all of them, so shrinking changes the path, never the
// stopping test.

// shrink moves the variables that cannot violate the KKT conditions behind
// the active prefix.
func (s *solver) shrink() {
	// gmax1..4 bound −yG over I_up and yG over I_low; the ν solver keeps
	// them per sign (1, 2 for y = +1; 3, 4 for y = −1).
	g1, g2, g3, g4 := math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
	for t := range s.act {
		up, low := s.status[t] != atUpper, s.status[t] != atLower
		if s.y[t] > 0 {
			if up {
				g1 = max(g1, -s.g[t])
			}
			if low {
				g2 = max(g2, s.g[t])
			}
		} else {
			if up {
				g4 = max(g4, -s.g[t])
			}
			if low {
				g3 = max(g3, s.g[t])
			}
		}
	}
	viol := max(g1, g3) + max(g2, g4)
	if s.opt.nu {
		viol = max(g1+g2, g3+g4)
	} else {
		// LIBSVM's single pair: Gmax1 = max(−yG over I_up), Gmax2 = max(yG over I_low).
		g1, g2 = max(g1, g3), max(g2, g4)
		g3, g4 = g1, g2
	}
	if !s.unshrunk && viol <= 10*s.opt.eps {
		s.unshrunk = true
		s.reconstructGradient()
		s.act = s.l
	}
	shrunk := func(t int) bool {
		switch s.status[t] {
		case atUpper:
			if s.y[t] > 0 {
				return -s.g[t] > g1
			}
			return -s.g[t] > g4
		case atLower:
			if s.y[t] > 0 {
				return s.g[t] > g2
			}
			return s.g[t] > g3
		}
		return false
	}
	for i := 0; i < s.act; i++ {
		if !shrunk(i) {
			continue
		}
		s.act--
		for s.act > i {
			if !shrunk(s.act) {
				s.swapIndex(i, s.act)
				break
			}
			s.act--
		}
	}
}

// swapIndex exchanges the variables at positions i and j everywhere.
func (s *solver) swapIndex(i, j int) {
	s.q.swap(i, j)
	s.y[i], s.y[j] = s.y[j], s.y[i]
	s.p[i], s.p[j] = s.p[j], s.p[i]
	s.c[i], s.c[j] = s.c[j], s.c[i]
	s.g[i], s.g[j] = s.g[j], s.g[i]
	s.alpha[i], s.alpha[j] = s.alpha[j], s.alpha[i]
	s.gbar[i], s.gbar[j] = s.gbar[j], s.gbar[i]
	s.status[i], s.status[j] = s.status[j], s.status[i]
	s.index[i], s.index[j] = s.index[j], s.index[i]
}

// reconstructGradient rebuilds G of the inactive variables: Gⱼ = Ḡⱼ + pⱼ +
// Σ over free i of αᵢQᵢⱼ, reading whichever kernel columns are fewer.
func (s *solver) reconstructGradient() {
	if s.act == s.l {
		return
	}
	nFree := 0
	for j := s.act; j < s.l; j++ {
		s.g[j] = s.gbar[j] + s.p[j]
	}
	for j := range s.act {
		if s.status[j] == isFree {
			nFree++
		}
	}
	if nFree*s.l > 2*s.act*(s.l-s.act) {
		for i := s.act; i < s.l; i++ {
			qi := s.q.column(i, s.act)
			for j := range s.act {
				if s.status[j] == isFree {
					s.g[i] += s.alpha[j] * qi[j]
				}
			}
		}
		return
	}
	for i := range s.act {
		if s.status[i] != isFree {
			continue
		}
		qi := s.q.column(i, s.l)
		a := s.alpha[i]
		for j := s.act; j < s.l; j++ {
			s.g[j] += a * qi[j]
		}
	}
}

// selectNU is Solver_NU's working-set selection: WSS 3 within each sign,
// taking the pair that decreases the objective more.
func (s *solver) selectNU() (int, int, float64) {
	g, y, st := s.g, s.y, s.status
	gmaxp, gmaxp2, gmaxn, gmaxn2 := math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)
	ip, in, j := -1, -1, -1
	for t := range s.act {
		if y[t] > 0 {
			if st[t] != atUpper && -g[t] >= gmaxp {
				gmaxp, ip = -g[t], t
			}
		} else if st[t] != atLower && g[t] >= gmaxn {
			gmaxn, in = g[t], t
		}
	}
	var qp, qn []float64
	if ip >= 0 {
		qp = s.q.column(ip, s.act)
	}
	if in >= 0 {
		qn = s.q.column(in, s.act)
	}
	qd := s.q.diag()
	best := math.Inf(1)
	for t := range s.act {
		if y[t] > 0 {
			if st[t] == atLower {
				continue
			}
			gmaxp2 = max(gmaxp2, g[t])
			if b := gmaxp + g[t]; b > 0 && ip >= 0 {
				if obj := -b * b / curvature(qd[ip]+qd[t]-2*qp[t]); obj <= best {
					j, best = t, obj
				}
			}
		} else {
			if st[t] == atUpper {
				continue
			}
			gmaxn2 = max(gmaxn2, -g[t])
			if b := gmaxn - g[t]; b > 0 && in >= 0 {
				if obj := -b * b / curvature(qd[in]+qd[t]-2*qn[t]); obj <= best {
					j, best = t, obj
				}
			}
		}
	}
	viol := max(gmaxp+gmaxp2, gmaxn+gmaxn2)
	if j < 0 {
		return -1, -1, viol
	}
	if y[j] > 0 {
		return ip, j, viol
	}
	return in, j, viol
}

// rhoNU is Solver_NU's ρ and r: r₁ and r₂ are the mean gradients of the
// free variables of each sign (or the midpoints of their feasible
// intervals), ρ = (r₁ − r₂)/2 and r = (r₁ + r₂)/2.
func (s *solver) rhoNU() (rho, r float64) {
	var ub, lb, sum [2]float64
	var nFree [2]int
	ub[0], ub[1] = math.Inf(1), math.Inf(1)
	lb[0], lb[1] = math.Inf(-1), math.Inf(-1)
	for t := range s.act {
		k := 0
		if s.y[t] < 0 {
			k = 1
		}
		switch s.status[t] {
		case atUpper:
			lb[k] = max(lb[k], s.g[t])
		case atLower:
			ub[k] = min(ub[k], s.g[t])
		default:
			nFree[k]++
			sum[k] += s.g[t]
		}
	}
	var rs [2]float64
	for k := range rs {
		if nFree[k] > 0 {
			rs[k] = sum[k] / float64(nFree[k])
		} else {
			rs[k] = (ub[k] + lb[k]) / 2
		}
	}
	return (rs[0] - rs[1]) / 2, (rs[0] + rs[1]) / 2
}
