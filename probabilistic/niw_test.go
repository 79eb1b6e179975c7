package probabilistic

import (
	"math"
	"testing"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With p = 1 the NIW is the Normal-inverse-gamma: σ² ~ InvGamma(ν/2, ψ/2),
// μ | σ² ~ N(μ₀, σ²/κ); the log density is written out by hand here.
func TestNormalInverseWishartOneDimension(t *testing.T) {
	g := graph.New()
	m0, kappa, nu, psi := 0.3, 2.5, 4.0, 1.7
	d := NewNormalInverseWishart(g.Const(t64(m0)), kappa, g.Scalar(tensor.Float64, nu), g.Const(tensor.FromFloat64s([]float64{math.Sqrt(psi)}, 1, 1)))
	mu, s2 := -0.4, 0.8
	got := d.LogProb(g.Const(t64(mu)), g.Const(tensor.FromFloat64s([]float64{s2}, 1, 1))).Value().Item()
	a, b := nu/2, psi/2
	lg, _ := math.Lgamma(a)
	want := a*math.Log(b) - lg - (a+1)*math.Log(s2) - b/s2
	want += -0.5*math.Log(2*math.Pi*s2/kappa) - kappa*(mu-m0)*(mu-m0)/(2*s2)
	assert.InDelta(t, want, got, 1e-10)
}

// Sample means: E[μ] = μ₀ and E[Σ] = Ψ/(ν−p−1), within five standard errors.
func TestNormalInverseWishartSample(t *testing.T) {
	g := graph.New()
	l := g.Const(tensor.FromFloat64s([]float64{1, 0, 0.5, 0.7}, 2, 2))
	d := NewNormalInverseWishart(g.Const(t64(1, -1)), 2, g.Scalar(tensor.Float64, 9), l)
	const n = 20000
	mu, sig := d.Sample(tensor.NewRNG(5), n)
	mv, sv := mu.Values(), sig.Values()
	wantS, varS := d.IW.Mean().Value().Values(), d.IW.Variance().Value().Values()
	for j := 0; j < 4; j++ {
		m := 0.0
		for i := 0; i < n; i++ {
			m += sv[i*4+j] / n
		}
		assert.InDelta(t, wantS[j], m, 5*math.Sqrt(varS[j]/n), "Σ entry %d", j)
	}
	for j, w := range []float64{1, -1} {
		m := 0.0
		for i := 0; i < n; i++ {
			m += mv[i*2+j] / n
		}
		// Var(μⱼ) = E[Σⱼⱼ]/κ.
		assert.InDelta(t, w, m, 5*math.Sqrt(wantS[j*3]/2/n), "μ entry %d", j)
	}
}

// The joint log density is differentiable in μ₀, the scale factor, μ and Σ.
func TestNormalInverseWishartGradCheck(t *testing.T) {
	f := func(xs []*graph.Node) *graph.Node {
		g := xs[0].Graph()
		d := NewNormalInverseWishart(xs[0], 1.5, g.Scalar(tensor.Float64, 3.5), graph.Tril(xs[1]))
		return d.LogProb(xs[2], sym(xs[3]))
	}
	in := []*tensor.Tensor{t64(0.1, -0.2), tensor.FromFloat64s([]float64{1.1, 0, 0.4, 0.9}, 2, 2), t64(0.5, 0.3), tensor.FromFloat64s([]float64{2, 0.3, 0.3, 1.5}, 2, 2)}
	_, err := autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: "niw", Order: 2})
	require.NoError(t, err)
}
