package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// exp of a Normal is the log-normal: log p(y) = log N(log y; μ, σ) − log y,
// the textbook density written out by hand; with an MVN-diagonal base the
// per-entry terms add up over the event axis.
func TestTransformedLogNormalByHand(t *testing.T) {
	g := graph.New()
	mu, sigma := 0.3, 0.8
	d := NewTransformed(NewNormal(g.Scalar(tensor.Float64, mu), g.Scalar(tensor.Float64, sigma)), Exp{})
	ys := []float64{0.5, 1, 2.7}
	lp := d.LogProb(g.Const(t64(ys...))).Value().Values()
	want := func(y float64) float64 {
		z := (math.Log(y) - mu) / sigma
		return -0.5*z*z - math.Log(sigma) - 0.5*math.Log(2*math.Pi) - math.Log(y)
	}
	for i, y := range ys {
		assert.InDelta(t, want(y), lp[i], 1e-13)
	}
	mv := NewTransformed(NewMVNDiag(g.Const(t64(mu, mu)), g.Const(t64(sigma, sigma))), Exp{})
	both := mv.LogProb(g.Const(m64(1, 2, 0.5, 2.7))).Value().Values()
	assert.InDelta(t, want(0.5)+want(2.7), both[0], 1e-13)
	assert.Equal(t, []int{2}, mv.EventShape())
	s := mv.Sample(tensor.NewRNG(1), 4000).Values()
	for _, v := range s {
		require.Greater(t, v, 0.0, "exp of anything is positive")
	}
}

// randomCoupling returns a coupling whose conditioner is not the identity.
func randomCoupling(rng *tensor.RNG, mask []float64) *AffineCoupling {
	c := NewAffineCoupling(rng, mask, 8, tensor.Float64)
	c.out.Weight.Value = rng.Normal(tensor.Float64, 0, 0.5, c.out.Weight.Value.Shape()...)
	c.out.Bias.Value = rng.Normal(tensor.Float64, 0, 0.5, c.out.Bias.Value.Shape()...)
	return c
}

// A coupling's inverse undoes it, and its log-determinant equals
// log |det J| of the Jacobian taken by central differences (3×3 at three
// points). A new coupling is the identity.
func TestAffineCouplingInverseAndJacobian(t *testing.T) {
	rng := tensor.NewRNG(3)
	c := randomCoupling(rng, []float64{1, 0, 1})
	x := rng.Normal(tensor.Float64, 0, 1, 3, 3)
	g := graph.New()
	y := c.Forward(g.Const(x))
	back := c.Inverse(y).Value().Values()
	for i, v := range x.Values() {
		assert.InDelta(t, v, back[i], 1e-12)
	}
	ld := c.LogDetJacobian(g.Const(x)).Value().Values()
	// InverseLogDet gives the same two from one pass of the conditioner.
	xi, ldi := c.InverseLogDet(y)
	assert.InDeltaSlice(t, x.Values(), xi.Value().Values(), 1e-12)
	assert.InDeltaSlice(t, ld, ldi.Value().Values(), 1e-12)
	const h = 1e-6
	for r := range 3 {
		row := x.Values()[3*r : 3*r+3]
		f := func(p []float64) []float64 {
			return c.Forward(graph.New().Const(t64(p...))).Value().Values()
		}
		var jac [3][3]float64
		for j := range 3 {
			plus, minus := append([]float64(nil), row...), append([]float64(nil), row...)
			plus[j] += h
			minus[j] -= h
			fp, fm := f(plus), f(minus)
			for i := range 3 {
				jac[i][j] = (fp[i] - fm[i]) / (2 * h)
			}
		}
		det := jac[0][0]*(jac[1][1]*jac[2][2]-jac[1][2]*jac[2][1]) -
			jac[0][1]*(jac[1][0]*jac[2][2]-jac[1][2]*jac[2][0]) +
			jac[0][2]*(jac[1][0]*jac[2][1]-jac[1][1]*jac[2][0])
		assert.InDelta(t, math.Log(math.Abs(det)), ld[r], 1e-7, "row %d", r)
	}
	id := NewAffineCoupling(rng, []float64{0, 1}, 4, tensor.Float64)
	z := g.Const(m64(1, 2, 0.7, -1.2))
	assert.Equal(t, []float64{0.7, -1.2}, id.Forward(z).Value().Values())
	assert.Panics(t, func() { NewAffineCoupling(rng, []float64{1, 1}, 4, tensor.Float64) })
	assert.Panics(t, func() { id.Forward(g.Const(m64(1, 3, 1, 2, 3))) })
}

// A RealNVP density integrates to one: on a fine grid over a box that
// holds nearly all its mass, Σ p·ΔA ≈ 1 (checks the change of variables
// and the log-determinants' signs together). And its gradient in the data
// passes GradCheck to second order.
func TestRealNVPDensityIntegratesToOne(t *testing.T) {
	rng := tensor.NewRNG(5)
	layers := []Bijector{randomCoupling(rng, []float64{1, 0}), randomCoupling(rng, []float64{0, 1}),
		randomCoupling(rng, []float64{1, 0})}
	const n, lo, hi = 300, -9.0, 9.0
	step := (hi - lo) / n
	pts := make([]float64, 0, 2*n*n)
	for i := range n {
		for j := range n {
			pts = append(pts, lo+(float64(i)+0.5)*step, lo+(float64(j)+0.5)*step)
		}
	}
	g := graph.New()
	base := NewMVNDiag(g.Const(t64(0, 0)), g.Const(t64(1, 1)))
	lp := NewTransformed(base, layers...).LogProb(g.Const(tensor.FromFloat64s(pts, n*n, 2))).Value().Values()
	mass := 0.0
	for _, v := range lp {
		mass += math.Exp(v) * step * step
	}
	assert.InDelta(t, 1, mass, 2e-3)

	f := func(xs []*graph.Node) *graph.Node {
		b := NewMVNDiag(xs[0].Graph().Const(t64(0, 0)), xs[0].Graph().Const(t64(1, 1)))
		return NewTransformed(b, layers...).LogProb(xs[0])
	}
	_, err := autodiff.GradCheck(f, []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 4, 2)}, autodiff.GradCheckOptions{Name: "realnvp", Order: 2})
	require.NoError(t, err)
}
