package inference

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
)

// The conjugate model μ ~ N(0, 1), yᵢ | μ ~ N(μ, 1) with y = (0.5, 1.5,
// 1.0): the evidence is N(y; 0, I + 11ᵀ) and the posterior N(Σy/(n+1),
// 1/(n+1)) = N(0.75, 0.25). Importance sampling from a wide Gaussian
// recovers both.
func TestImportanceOnAConjugateModel(t *testing.T) {
	y := []float64{0.5, 1.5, 1.0}
	m := Model{
		Params: []Param{{Name: "mu"}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			mu := p["mu"]
			lp := graph.AddScalar(graph.MulScalar(graph.Square(mu), -0.5), -0.5*math.Log(2*math.Pi))
			for _, v := range y {
				r := graph.AddScalar(mu, -v)
				lp = graph.Add(lp, graph.AddScalar(graph.MulScalar(graph.Square(r), -0.5), -0.5*math.Log(2*math.Pi)))
			}
			return lp
		},
	}
	res, err := Importance(ctx, m, ImportanceOptions{Mean: []float64{0.5}, SD: []float64{1}, Draws: 20000, Seed: 1})
	require.NoError(t, err)
	// log N(y; 0, C), C = I + 11ᵀ: det C = 1 + n = 4, C⁻¹ = I − 11ᵀ/4.
	sy, syy := 3.0, 0.25+2.25+1.0
	quad := syy - sy*sy/4
	want := -1.5*math.Log(2*math.Pi) - 0.5*math.Log(4) - 0.5*quad
	assert.InDelta(t, want, res.LogEvidence, 0.01)
	assert.InDelta(t, 0.75, res.Expect(func(th []float64) float64 { return th[0] }), 0.02)
	v := res.Expect(func(th []float64) float64 { return (th[0] - 0.75) * (th[0] - 0.75) })
	assert.InDelta(t, 0.25, v, 0.02)
	assert.Greater(t, res.ESS, 5000.0)
	assert.LessOrEqual(t, res.ESS, 20000.0)
	_, err = Importance(ctx, m, ImportanceOptions{Mean: []float64{0, 1}, SD: []float64{1}, Draws: 10, Seed: 1})
	assert.ErrorContains(t, err, "2 means and 1 sds")
	// Cancelled before the first draw: nothing to return; after 100, the
	// result of those 100 draws, the same as asking for 100.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Importance(cancelled, m, ImportanceOptions{Mean: []float64{0.5}, SD: []float64{1}, Seed: 1})
	assert.ErrorIs(t, err, context.Canceled)
	part, err := Importance(&countdown{Context: ctx, n: 100}, m, ImportanceOptions{Mean: []float64{0.5}, SD: []float64{1}, Seed: 1})
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "stopped after 100 of 1000 draws")
	want100, err := Importance(ctx, m, ImportanceOptions{Mean: []float64{0.5}, SD: []float64{1}, Draws: 100, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, want100.Weights, part.Weights)
	assert.Equal(t, want100.LogEvidence, part.LogEvidence)
}

// SelfNormalize on weights 1 and 3 (and the same shifted by e¹⁰⁰⁰, which
// would overflow unshifted): normalised ¼ and ¾, ESS 1/(1/16 + 9/16) =
// 1.6, log mean log 2 (plus 1000; 1000 + log 3 is rounded to the ulp of
// 1000, 1.1e-13, hence the tolerances).
func TestSelfNormalize(t *testing.T) {
	for _, shift := range []float64{0, 1000} {
		w, ess, logMean := SelfNormalize([]float64{shift, shift + math.Log(3)})
		if math.Abs(w[0]-0.25) > 1e-12 || math.Abs(w[1]-0.75) > 1e-12 || math.Abs(ess-1.6) > 1e-12 || math.Abs(logMean-shift-math.Log(2)) > 1e-12 {
			t.Errorf("shift %g: weights %v, ESS %g, log mean %g; want [0.25 0.75], 1.6, %g", shift, w, ess, logMean, shift+math.Log(2))
		}
	}
}
