package inference

import "math"

// maxEnergyError is the energy error beyond which a transition is divergent
// (Stan's max_deltaH).
const maxEnergyError = 1000

// stats describes one transition.
type stats struct {
	acceptStat float64 // mean min(1, exp(H₀ − H)) over the new leapfrog points
	depth      int
	divergent  bool
}

// subtree is the result of building 2^depth leapfrog steps in one direction.
type subtree struct {
	end          point     // the outermost point, from which to extend
	sample       []float64 // a point drawn from the subtree ∝ exp(−H)
	sampleGrad   []float64
	sampleLP     float64
	logWeight    float64   // log Σ exp(H₀ − H) over the subtree
	rho          []float64 // Σ p over the subtree
	pBegin, pEnd []float64 // the momenta at the first and last points built
	sharpBegin   []float64 // M⁻¹p at the first point built
	sharpEnd     []float64 // M⁻¹p at the last
	valid        bool      // no U-turn and no divergence inside
	divergent    bool
	acceptSum    float64
	leapfrogs    int
}

// transition makes one NUTS transition from the chain's current point.
func (s *chain) transition() stats {
	p0 := s.momentum()
	start := point{theta: append([]float64(nil), s.theta...), p: p0, grad: append([]float64(nil), s.grad...), lp: s.lp}
	h0 := s.hamiltonian(start)
	left, right := s.clonePoint(start), s.clonePoint(start)
	sample, sampleGrad, sampleLP := start.theta, start.grad, start.lp
	rho := append([]float64(nil), p0...)
	sharpLeft, sharpRight := s.sharp(p0), s.sharp(p0)
	logWeight := 0.0
	var st stats
	acceptSum, leapfrogs := 0.0, 0
	for st.depth < s.maxDepth {
		var sub subtree
		if s.rng.Float64() < 0.5 {
			sub = s.build(right, 1, st.depth, h0)
			right = sub.end
		} else {
			sub = s.build(left, -1, st.depth, h0)
			left = sub.end
		}
		acceptSum += sub.acceptSum
		leapfrogs += sub.leapfrogs
		st.depth++
		if sub.divergent {
			st.divergent = true
		}
		if !sub.valid {
			break
		}
		// Biased progressive sampling: the new half replaces the sample with
		// probability min(1, w_new / w_old).
		if math.Log(s.rng.Float64()) < sub.logWeight-logWeight {
			sample, sampleGrad, sampleLP = sub.sample, sub.sampleGrad, sub.sampleLP
		}
		logWeight = logAddExp(logWeight, sub.logWeight)
		for i := range rho {
			rho[i] += sub.rho[i]
		}
		sharpLeft, sharpRight = s.sharp(left.p), s.sharp(right.p)
		if !noUTurn(rho, sharpLeft, sharpRight) {
			break
		}
	}
	s.theta, s.grad, s.lp = append(s.theta[:0], sample...), append(s.grad[:0], sampleGrad...), sampleLP
	if leapfrogs > 0 {
		st.acceptStat = acceptSum / float64(leapfrogs)
	}
	return st
}

// build runs 2^depth leapfrog steps from q in direction dir.
func (s *chain) build(q point, dir float64, depth int, h0 float64) subtree {
	if depth == 0 {
		n := s.clonePoint(q)
		s.leapfrog(&n, dir*s.eps)
		h := s.hamiltonian(n)
		if math.IsNaN(h) || math.IsInf(n.lp, -1) {
			h = math.Inf(1)
		}
		sub := subtree{end: n, sample: n.theta, sampleGrad: n.grad, sampleLP: n.lp, logWeight: h0 - h,
			rho: append([]float64(nil), n.p...), leapfrogs: 1, valid: true}
		sub.pBegin, sub.pEnd = n.p, n.p
		sub.sharpBegin = s.sharp(n.p)
		sub.sharpEnd = sub.sharpBegin
		sub.acceptSum = math.Min(1, math.Exp(h0-h))
		if h-h0 > maxEnergyError {
			sub.valid, sub.divergent = false, true
		}
		return sub
	}
	first := s.build(q, dir, depth-1, h0)
	if !first.valid {
		return first
	}
	second := s.build(first.end, dir, depth-1, h0)
	firstRho := append([]float64(nil), first.rho...)
	out := subtree{end: second.end, rho: first.rho, pBegin: first.pBegin, pEnd: second.pEnd,
		sharpBegin: first.sharpBegin, sharpEnd: second.sharpEnd,
		acceptSum: first.acceptSum + second.acceptSum, leapfrogs: first.leapfrogs + second.leapfrogs,
		divergent: second.divergent}
	if !second.valid {
		return out // valid false
	}
	out.logWeight = logAddExp(first.logWeight, second.logWeight)
	// Within a subtree the draw is uniform-progressive: ∝ the halves' weights.
	out.sample, out.sampleGrad, out.sampleLP = first.sample, first.sampleGrad, first.sampleLP
	if math.Log(s.rng.Float64()) < second.logWeight-out.logWeight {
		out.sample, out.sampleGrad, out.sampleLP = second.sample, second.sampleGrad, second.sampleLP
	}
	for i := range out.rho {
		out.rho[i] += second.rho[i]
	}
	// The no-U-turn criterion on the merged subtree, plus Stan's extra checks
	// across the seam between its halves.
	out.valid = noUTurn(out.rho, out.sharpBegin, out.sharpEnd) &&
		noUTurn(addVec(firstRho, second.pBegin), first.sharpBegin, second.sharpBegin) &&
		noUTurn(addVec(second.rho, first.pEnd), first.sharpEnd, second.sharpEnd)
	return out
}

// sharp returns M⁻¹p, the velocity.
func (s *chain) sharp(p []float64) []float64 {
	out := make([]float64, len(p))
	if s.dense != nil {
		d := s.dim
		for i := range d {
			out[i] = dot(s.dense[i*d:(i+1)*d], p)
		}
		return out
	}
	for i, v := range p {
		out[i] = v * s.invMass[i]
	}
	return out
}

// setMetric installs an adapted inverse metric: a diagonal (length d) or
// a dense d×d matrix, whose Cholesky factor samples the momenta. A dense
// estimate that is not positive definite falls back to its diagonal.
func (s *chain) setMetric(inv []float64) {
	d := s.dim
	if len(inv) == d {
		s.invMass, s.dense, s.chol = inv, nil, nil
		return
	}
	diag := make([]float64, d)
	for i := range d {
		diag[i] = inv[i*d+i]
	}
	s.invMass = diag
	if l, ok := cholesky(inv, d); ok {
		s.dense, s.chol = inv, l
	} else {
		s.dense, s.chol = nil, nil
	}
}

// noUTurn is the generalised criterion: the summed momentum still points
// along both ends' velocities.
func noUTurn(rho, a, b []float64) bool { return dot(rho, a) > 0 && dot(rho, b) > 0 }

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func addVec(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

func logAddExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	m := math.Max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// hmcTransition is one static HMC transition: steps leapfrog steps from a
// fresh momentum, accepted with probability min(1, exp(H₀ − H)). The step
// size is jittered uniformly by ±10 % per transition (Stan's
// stepsize_jitter), which breaks the periodic orbits a fixed path length
// can lock into.
func (s *chain) hmcTransition(steps int) stats {
	start := point{theta: append([]float64(nil), s.theta...), p: s.momentum(), grad: append([]float64(nil), s.grad...), lp: s.lp}
	h0 := s.hamiltonian(start)
	q := s.clonePoint(start)
	var st stats
	eps := s.eps * (0.9 + 0.2*s.rng.Float64())
	for range steps {
		s.leapfrog(&q, eps)
		if math.IsInf(q.lp, -1) {
			break
		}
	}
	h := s.hamiltonian(q)
	if math.IsNaN(h) || math.IsInf(q.lp, -1) {
		h = math.Inf(1)
	}
	st.divergent = h-h0 > maxEnergyError
	st.acceptStat = math.Min(1, math.Exp(h0-h))
	if s.rng.Float64() < st.acceptStat {
		s.theta, s.grad, s.lp = q.theta, q.grad, q.lp
	}
	return st
}
