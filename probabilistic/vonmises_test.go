package probabilistic

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

type vonMisesFixture struct {
	X        []float64 `json:"x"`
	LogI0    []float64 `json:"log_i0"`
	Ratio    []float64 `json:"ratio"`
	VonMises []struct {
		Loc, Concentration, X, Logpdf, Entropy float64
	} `json:"von_mises"`
}

// log I₀ and I₁/I₀ against SciPy's i0e and i1e (and log I₀(10⁻³) against
// the series 1 + x²/4 + x⁴/64 by hand) on both sides of the
// series/asymptotic switch at 30 and up to 700 (where I₀ itself is near
// overflow), and the von Mises log density and entropy against
// scipy.stats.vonmises.
func TestBesselAndVonMisesAgainstSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/vonmises.json")
	require.NoError(t, err)
	var fx vonMisesFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	g := graph.New()
	x := g.Const(tensor.FromFloat64s(fx.X, len(fx.X)))
	li := LogBesselI0(x).Value().Values()
	r := BesselI1OverI0(x).Value().Values()
	for i, v := range fx.X {
		// SciPy's log(i0e(x)) + x cancels for small x (to ~1e-16 absolute).
		assert.InDelta(t, fx.LogI0[i], li[i], 1e-13*fx.LogI0[i]+2e-16, "log I0(%g)", v)
		assert.InDelta(t, fx.Ratio[i], r[i], 1e-14, "I1/I0(%g)", v)
	}
	assert.InEpsilon(t, math.Log1p(0.25e-6+1e-12/64), LogBesselI0(g.Const(t64(1e-3))).Item(), 4e-15)
	neg := BesselI1OverI0(g.Const(t64(-2))).Item()
	assert.InDelta(t, -fx.Ratio[3], neg, 1e-15, "the ratio is odd")
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	for _, row := range fx.VonMises {
		d := NewVonMises(c(row.Loc), c(row.Concentration))
		assert.InDelta(t, row.Logpdf, d.LogProb(c(row.X)).Item(), 1e-12, "κ = %g", row.Concentration)
		assert.InDelta(t, row.Entropy, d.Entropy().Item(), 1e-12, "κ = %g", row.Concentration)
	}
	assert.InDelta(t, math.Log(2*math.Pi), NewVonMises(c(0), c(0)).Entropy().Item(), 1e-15, "κ = 0 is uniform")
}

// The Bessel ops' derivatives to second order, across the switch and at
// 0 (where R' = ½), and the von Mises log density in both parameters.
func TestBesselGradCheck(t *testing.T) {
	for name, f := range map[string]func([]*graph.Node) *graph.Node{
		"log_i0": func(xs []*graph.Node) *graph.Node { return LogBesselI0(xs[0]) },
		"ratio":  func(xs []*graph.Node) *graph.Node { return BesselI1OverI0(xs[0]) },
		"von mises": func(xs []*graph.Node) *graph.Node {
			return NewVonMises(xs[0], graph.Exp(xs[1])).LogProb(xs[0].Graph().Const(t64(0.4, -2.9, 3)))
		},
	} {
		in := []*tensor.Tensor{t64(-3.2, 0.7, 31.5), t64(0.1, 2.0, 3.6)}
		_, err := autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: name, Order: 2})
		require.NoError(t, err, name)
	}
	g := graph.New()
	x := g.Var(t64(0))
	assert.InDelta(t, 0.5, autodiffGrad(BesselI1OverI0(x), x), 1e-15, "R'(0) = ½")
}

func autodiffGrad(y, x *graph.Node) float64 {
	return autodiff.Grad(graph.Sum(y, nil, false), x)[0].Value().Values()[0]
}

// Samples: E[cos(x − μ)] = I₁(κ)/I₀(κ) and E[sin(x − μ)] = 0 within five
// standard errors, every draw in [−π, π).
func TestVonMisesSample(t *testing.T) {
	g := graph.New()
	for _, k := range []float64{0, 0.4, 3, 60} {
		d := NewVonMises(g.Scalar(tensor.Float64, 2.8), g.Scalar(tensor.Float64, k))
		const n = 40000
		s := d.Sample(tensor.NewRNG(5), n).Values()
		var c, sn, c2 float64
		for _, v := range s {
			require.True(t, v >= -math.Pi && v < math.Pi, "%g outside [−π, π)", v)
			c += math.Cos(v-2.8) / n
			sn += math.Sin(v-2.8) / n
			c2 += math.Cos(v-2.8) * math.Cos(v-2.8) / n
		}
		want := 1 - d.Variance().Item()
		se := math.Sqrt(math.Max(c2-c*c, 1e-12) / n)
		assert.InDelta(t, want, c, 5*se+1e-12, "κ = %g: mean cosine", k)
		assert.InDelta(t, 0, sn, 5*math.Sqrt(math.Max(1-c2, 1e-12)/n)+1e-12, "κ = %g: mean sine", k)
	}
}
