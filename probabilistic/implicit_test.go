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

// P(a, x) by hand: P(1, x) = 1 − e^{−x}; P(2, x) = 1 − (1 + x)e^{−x};
// P(½, x) = erf(√x). Both branches (series below a + 1, continued fraction
// above) are exercised.
func TestRegularisedIncompleteGamma(t *testing.T) {
	for _, x := range []float64{0.1, 1.5, 7, 30} {
		assert.InDelta(t, 1-math.Exp(-x), gammaP(1, x), 1e-15, "P(1, %g)", x)
		assert.InDelta(t, 1-(1+x)*math.Exp(-x), gammaP(2, x), 1e-15, "P(2, %g)", x)
		assert.InDelta(t, math.Erf(math.Sqrt(x)), gammaP(0.5, x), 1e-15, "P(½, %g)", x)
	}
	z := invGammaP(3.5, gammaP(3.5, 2.7), 1)
	assert.InDelta(t, 2.7, z, 1e-12, "the inverse")
}

// The implicit derivative dz/dα at fixed u equals the finite difference of
// P⁻¹(α, u) in α (its definition), and E[dz/dα] = dE[z]/dα = 1 for
// Gamma(α, 1) within five standard errors; for Beta(a, b),
// dE[x]/da = b/(a + b)².
func TestImplicitGammaGradient(t *testing.T) {
	g := graph.New()
	alpha := g.Var(tensor.FromFloat64s([]float64{0.3, 1, 4.5}, 3))
	z := NewGamma(alpha, g.Scalar(tensor.Float64, 1)).RSample(tensor.NewRNG(2), 0)
	grad := autodiff.Grad(graph.Sum(z, nil, false), alpha)[0].Value().Values()
	op := z.Inputs()[0].Op().(implicitGammaOp) // z = implicit / rate
	for i, a := range []float64{0.3, 1, 4.5} {
		h := 1e-6 * a
		fd := (invGammaP(a+h, op.u[i], op.z[i]) - invGammaP(a-h, op.u[i], op.z[i])) / (2 * h)
		assert.InEpsilon(t, fd, grad[i], 1e-5, "α = %g", a)
		assert.InDelta(t, op.z[i], z.Value().Values()[i], 1e-12*op.z[i], "the value is the draw")
	}

	const n = 20000
	for _, a := range []float64{0.4, 2.5} {
		g := graph.New()
		al := g.Var(tensor.Scalar(tensor.Float64, a))
		zs := NewGamma(al, g.Scalar(tensor.Float64, 1)).RSample(tensor.NewRNG(3), n)
		ds := autodiff.Grad(graph.Sum(zs, nil, false), al)[0].Item() / n
		// Var(dz/dα) is unknown in closed form; estimate it from per-draw slopes.
		op := zs.Inputs()[0].Op().(implicitGammaOp)
		s := op.slope(zs.Inputs()[0]).Value().Values()
		m2 := 0.0
		for _, v := range s {
			m2 += (v - ds) * (v - ds) / n
		}
		assert.InDelta(t, 1, ds, 5*math.Sqrt(m2/n), "Gamma(%g): mean dz/dα", a)
	}
	g = graph.New()
	a, b := g.Var(tensor.Scalar(tensor.Float64, 2)), g.Var(tensor.Scalar(tensor.Float64, 3))
	xs := NewBeta(a, b).RSample(tensor.NewRNG(4), n)
	da := autodiff.Grad(graph.Mean(xs, nil, false), a)[0].Item()
	assert.InDelta(t, 3.0/25, da, 0.01, "Beta(2, 3): dE[x]/da = b/(a+b)²")
	dir := NewDirichlet(g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 3))).RSample(tensor.NewRNG(5), 10)
	require.Equal(t, []int{10, 3}, dir.Shape())
	for r := range 10 {
		sum := 0.0
		for k := range 3 {
			sum += dir.Value().At(r, k)
		}
		assert.InDelta(t, 1, sum, 1e-14)
	}
}

// The quantile of Gamma(1, 1) is −log(1 − u) and of Gamma(2, 1) solves
// 1 − (1 + z)e^{−z} = u; d/dα of Gamma(1)'s quantile by hand is not
// elementary, so it is checked against a central difference of the values.
func TestGammaQuantile(t *testing.T) {
	g := graph.New()
	u := []float64{0.01, 0.5, 0.999}
	q := GammaQuantile(g.Var(tensor.FromFloat64s([]float64{1, 1, 1}, 3)), u).Value().Values()
	for i, v := range u {
		assert.InDelta(t, -math.Log1p(-v), q[i], 1e-12*q[i])
	}
	q2 := GammaQuantile(g.Const(tensor.FromFloat64s([]float64{2, 2, 2}, 3)), u).Value().Values()
	for i, v := range u {
		assert.InDelta(t, v, 1-(1+q2[i])*math.Exp(-q2[i]), 1e-13)
	}
	a := g.Var(tensor.FromFloat64s([]float64{0.2, 3, 40}, 3))
	gr := autodiff.Grad(graph.Sum(GammaQuantile(a, u), nil, false), a)[0].Value().Values()
	for i, av := range []float64{0.2, 3, 40} {
		h := 1e-6 * av
		at := func(x float64) float64 {
			return GammaQuantile(graph.New().Const(tensor.FromFloat64s([]float64{x}, 1)), u[i:i+1]).Item()
		}
		assert.InEpsilon(t, (at(av+h)-at(av-h))/(2*h), gr[i], 1e-5, "α = %g", av)
	}
	assert.Panics(t, func() { GammaQuantile(a, []float64{0.5, 1, 0.2}) })
}

// GammaP's values and first derivatives against independent numbers:
// P(1, x) = 1 − e^{−x} and P(½, x) = erf(√x); ∂P/∂x is the density; and
// at α = 1, integrating ∂/∂α of γ(α, x)/Γ(α) by parts gives
// ∂P/∂α = (ln x + γ_E)(1 − e^{−x}) − Ein(x), Ein(x) = Σₖ (−1)^{k+1} x^k/(k·k!).
func TestGammaP(t *testing.T) {
	const eulerGamma = 0.57721566490153286061
	xs := []float64{0.5, 2, 6}
	g := graph.New()
	a := g.Var(tensor.FromFloat64s([]float64{1, 1, 1}, 3))
	x := g.Var(tensor.FromFloat64s(xs, 3))
	p := GammaP(a, x)
	grads := autodiff.Grad(graph.Sum(p, nil, false), a, x)
	for i, xi := range xs {
		ein, term := 0.0, 1.0
		for k := 1; k < 60; k++ {
			term *= xi / float64(k) // x^k/k!
			ein -= math.Pow(-1, float64(k)) * term / float64(k)
		}
		assert.InDelta(t, 1-math.Exp(-xi), p.Value().Values()[i], 1e-15, "P(1, %g)", xi)
		assert.InDelta(t, math.Exp(-xi), grads[1].Value().Values()[i], 1e-15, "∂P/∂x (1, %g)", xi)
		want := (math.Log(xi)+eulerGamma)*(1-math.Exp(-xi)) - ein
		assert.InDelta(t, want, grads[0].Value().Values()[i], 1e-11, "∂P/∂α (1, %g)", xi)
	}
	half := GammaP(g.Const(tensor.Full(tensor.Float64, 0.5, 3)), g.Const(tensor.FromFloat64s(xs, 3))).Value().Values()
	for i, xi := range xs {
		assert.InDelta(t, math.Erf(math.Sqrt(xi)), half[i], 1e-15, "P(½, %g)", xi)
	}
	assert.Panics(t, func() { GammaP(a, g.Var(tensor.New(tensor.Float64, 2))) })
}

// gammaP and invGammaP are tensor's kernels on one value.
func gammaP(a, x float64) float64 {
	return tensor.GammaPDeriv(tensor.Scalar(tensor.Float64, a), tensor.Scalar(tensor.Float64, x), 0, 0).Item()
}

func invGammaP(a, u, z0 float64) float64 {
	s := func(v float64) *tensor.Tensor { return tensor.Scalar(tensor.Float64, v) }
	return tensor.GammaPInv(s(a), s(u), s(z0)).Item()
}
