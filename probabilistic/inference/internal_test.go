package inference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/tensor"
)

// By hand: chains (1, 2, 3, 4) and (3, 4, 5, 6) have means 2.5 and 4.5 and
// variances 5/3, so W = 5/3, B = 4·var(2.5, 4.5) = 8, var⁺ = ¾·5/3 + 8/4 =
// 3.25 and R̂ = √(3.25/(5/3)) = √1.95.
func TestRhatClassicByHand(t *testing.T) {
	got := rhatClassic([][]float64{{1, 2, 3, 4}, {3, 4, 5, 6}})
	assert.InDelta(t, math.Sqrt(1.95), got, 1e-12)
}

// Independent draws have an ESS near their number, and an AR(1) chain
// xₜ = φxₜ₋₁ + εₜ has τ = (1 + φ)/(1 − φ), so ESS ≈ N·(1 − φ)/(1 + φ).
func TestESSAgainstTheory(t *testing.T) {
	rng := tensor.NewRNG(4)
	const chains, n = 4, 4000
	iid := make([][]float64, chains)
	ar := make([][]float64, chains)
	phi := 0.6
	for c := range chains {
		x := 0.0
		for range n {
			iid[c] = append(iid[c], rng.NormFloat64())
			x = phi*x + rng.NormFloat64()
			ar[c] = append(ar[c], x)
		}
	}
	assert.InDelta(t, chains*n, BulkESS(iid), 0.1*chains*n)
	want := chains * n * (1 - phi) / (1 + phi)
	assert.InDelta(t, want, BulkESS(ar), 0.15*want)
	assert.InDelta(t, 1, Rhat(iid), 0.01)
	// Shifting one chain by two standard deviations is caught.
	shifted := [][]float64{iid[0], iid[1], iid[2], make([]float64, n)}
	for i, v := range iid[3] {
		shifted[3][i] = v + 2
	}
	assert.Greater(t, Rhat(shifted), 1.1)
}

// Leapfrog is reversible, and its energy error over a fixed path length
// shrinks as ε²: halving ε quarters it.
func TestLeapfrogReversibleAndSecondOrder(t *testing.T) {
	m := gaussian2D(0.9, 2)
	ev, err := newEvaluator(m)
	if err != nil {
		t.Fatal(err)
	}
	s := &chain{ev: ev, dim: 2, invMass: []float64{1, 1}}
	start := point{theta: []float64{0.5, -1}, p: []float64{1, 0.3}, grad: make([]float64, 2)}
	start.lp = ev.logp(start.theta, start.grad)
	energyError := func(eps float64, steps int) float64 {
		q := s.clonePoint(start)
		for range steps {
			s.leapfrog(&q, eps)
		}
		return math.Abs(s.hamiltonian(q) - s.hamiltonian(start))
	}
	e1, e2 := energyError(0.1, 10), energyError(0.05, 20)
	assert.InDelta(t, 4, e1/e2, 0.5, "energy errors %g and %g", e1, e2)
	q := s.clonePoint(start)
	for range 10 {
		s.leapfrog(&q, 0.1)
	}
	for i := range q.p {
		q.p[i] = -q.p[i]
	}
	for range 10 {
		s.leapfrog(&q, 0.1)
	}
	assert.InDeltaSlice(t, start.theta, q.theta, 1e-12)
}
