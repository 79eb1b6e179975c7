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

type countsFixture struct {
	StudentT []struct {
		DF, Loc, Scale, X, Logpdf, Entropy, Mean float64
		Var                                      *float64
	} `json:"student_t"`
	Poisson []struct {
		Rate, K, Logpmf float64
	}
	Binomial []struct {
		N, P, K, Logpmf float64
	}
	NegativeBinomial []struct {
		R, P, K, Logpmf, Mean, Var float64
	} `json:"negative_binomial"`
}

// Log densities, moments and entropies against SciPy
// (testdata/make_counts.py).
func TestStudentTAndCountsAgainstSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/counts.json")
	require.NoError(t, err)
	var fx countsFixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	for _, r := range fx.StudentT {
		d := NewStudentT(c(r.DF), c(r.Loc), c(r.Scale))
		assert.InDelta(t, r.Logpdf, d.LogProb(c(r.X)).Item(), 1e-12, "t(%g) logpdf", r.DF)
		assert.InDelta(t, r.Entropy, d.Entropy().Item(), 1e-12, "t(%g) entropy", r.DF)
		assert.InDelta(t, r.Mean, d.Mean().Item(), 1e-15)
		if r.Var != nil {
			assert.InDelta(t, *r.Var, d.Variance().Item(), 1e-12)
		} else {
			assert.True(t, math.IsInf(d.Variance().Item(), 1), "1 < ν ≤ 2: infinite variance")
		}
	}
	assert.True(t, math.IsNaN(NewStudentT(c(0.8), c(0), c(1)).Mean().Item()), "ν ≤ 1: no mean")
	require.Len(t, fx.Poisson, 3)
	for _, r := range fx.Poisson {
		assert.InDelta(t, r.Logpmf, NewPoisson(c(r.Rate)).LogProb(c(r.K)).Item(), 1e-12, "Poisson(%g) at %g", r.Rate, r.K)
	}
	for _, r := range fx.Binomial {
		assert.InDelta(t, r.Logpmf, NewBinomial(c(r.N), c(r.P)).LogProb(c(r.K)).Item(), 1e-12, "Binomial(%g, %g) at %g", r.N, r.P, r.K)
	}
	for _, r := range fx.NegativeBinomial {
		d := NewNegativeBinomial(c(r.R), c(r.P))
		assert.InDelta(t, r.Logpmf, d.LogProb(c(r.K)).Item(), 1e-12, "NB(%g, %g) at %g", r.R, r.P, r.K)
		assert.InDelta(t, r.Mean, d.Mean().Item(), 1e-12)
		assert.InDelta(t, r.Var, d.Variance().Item(), 1e-12)
	}
	assert.Panics(t, func() { NewPoisson(c(1)).Entropy() })
	assert.Panics(t, func() { NewBinomial(c(2.5), c(0.5)) }, "a fractional total count")
	assert.Panics(t, func() { NewNegativeBinomial(c(1), c(1)) }, "p = 1 has no distribution")
}

// Sample means and variances within five standard errors of the closed
// forms (fixed seeds): the variance's standard error uses the fourth
// central moment estimated from the same draws.
func TestStudentTAndCountsSample(t *testing.T) {
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	for name, d := range map[string]Distribution{
		"poisson small":  NewPoisson(c(3.2)),
		"poisson large":  NewPoisson(c(87.5)),
		"binomial":       NewBinomial(c(15), c(0.35)),
		"neg. binomial":  NewNegativeBinomial(c(4.5), c(0.6)),
		"student t, ν=9": NewStudentT(c(9), c(1.5), c(0.7)),
	} {
		const n = 40000
		s := d.Sample(tensor.NewRNG(11), n).Values()
		mean, m2, m4 := 0.0, 0.0, 0.0
		for _, v := range s {
			mean += v / n
		}
		for _, v := range s {
			e := (v - mean) * (v - mean)
			m2 += e / n
			m4 += e * e / n
		}
		wantMean, wantVar := d.Mean().Item(), d.Variance().Item()
		assert.InDelta(t, wantMean, mean, 5*math.Sqrt(wantVar/n), "%s mean", name)
		assert.InDelta(t, wantVar, m2, 5*math.Sqrt((m4-m2*m2)/n), "%s variance", name)
		if name != "student t, ν=9" {
			for _, v := range s {
				require.Equal(t, math.Trunc(v), v, "%s: counts are integers", name)
			}
		}
	}
}

// Gradients of the log densities in their parameters pass GradCheck to
// second order.
func TestStudentTAndCountsGradCheck(t *testing.T) {
	for name, f := range map[string]func([]*graph.Node) *graph.Node{
		"student t": func(xs []*graph.Node) *graph.Node {
			return NewStudentT(graph.Exp(xs[0]), xs[1], graph.Exp(xs[2])).LogProb(xs[1].Graph().Const(t64(0.3, -1.2)))
		},
		"poisson": func(xs []*graph.Node) *graph.Node {
			return NewPoisson(graph.Exp(xs[0])).LogProb(xs[0].Graph().Const(t64(2, 0)))
		},
		"binomial": func(xs []*graph.Node) *graph.Node {
			return NewBinomial(xs[0].Graph().Const(t64(9, 9)), graph.Sigmoid(xs[1])).LogProb(xs[0].Graph().Const(t64(4, 9)))
		},
		"neg. binomial": func(xs []*graph.Node) *graph.Node {
			return NewNegativeBinomial(graph.Exp(xs[0]), graph.Sigmoid(xs[1])).LogProb(xs[0].Graph().Const(t64(3, 0)))
		},
	} {
		in := []*tensor.Tensor{t64(0.4, 1.1), t64(0.2, -0.5), t64(-0.3, 0.1)}
		_, err := autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: name, Order: 2})
		require.NoError(t, err, name)
	}
}
