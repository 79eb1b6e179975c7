package probabilistic_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// normalPDF is the standard formula, for the hand-worked expectations.
func normalPDF(x, mu, sd float64) float64 {
	return math.Exp(-(x-mu)*(x-mu)/(2*sd*sd)) / (sd * math.Sqrt(2*math.Pi))
}

// twoNormals is 0.3·N(−1, 0.5²) + 0.7·N(2, 1²).
func twoNormals(g *graph.Graph) *probabilistic.Mixture {
	mix := probabilistic.NewCategorical(g.Const(tensor.FromFloat64s([]float64{math.Log(0.3), math.Log(0.7)}, 2)))
	comp := probabilistic.NewNormal(g.Const(tensor.FromFloat64s([]float64{-1, 2}, 2)), g.Const(tensor.FromFloat64s([]float64{0.5, 1}, 2)))
	return probabilistic.NewMixture(mix, comp)
}

func TestMixtureByHand(t *testing.T) {
	g := graph.New()
	m := twoNormals(g)
	xs := []float64{-1, 0.3, 2.5}
	x := g.Const(tensor.FromFloat64s(xs, 3))
	lp := m.LogProb(x).Value().Values()
	resp := m.Responsibilities(x).Value()
	for i, v := range xs {
		a, b := 0.3*normalPDF(v, -1, 0.5), 0.7*normalPDF(v, 2, 1)
		assert.InDelta(t, math.Log(a+b), lp[i], 1e-12, "log p(%g)", v)
		assert.InDelta(t, a/(a+b), resp.At(i, 0), 1e-12)
		assert.InDelta(t, b/(a+b), resp.At(i, 1), 1e-12)
	}
	// Mean 0.3·(−1) + 0.7·2 = 1.1; variance 0.3·(0.25 + 1) + 0.7·(1 + 4) − 1.1².
	assert.InDelta(t, 1.1, m.Mean().Item(), 1e-12)
	assert.InDelta(t, 0.3*1.25+0.7*5-1.21, m.Variance().Item(), 1e-12)
	assert.Equal(t, []int{}, m.BatchShape())
	assert.Panics(t, func() { m.Entropy() })
}

// Draws follow the mixture: their mean and variance within five standard
// errors of the exact ones, and the share below 0.5 near the mixture CDF.
func TestMixtureSample(t *testing.T) {
	g := graph.New()
	m := twoNormals(g)
	s := m.Sample(tensor.NewRNG(9), 20000)
	require.Equal(t, []int{20000}, s.Shape())
	v := s.Values()
	mean, sq, below := 0.0, 0.0, 0
	for _, x := range v {
		mean += x
		sq += x * x
		if x < 0.5 {
			below++
		}
	}
	mean /= 20000
	variance := sq/20000 - mean*mean
	exactVar := 0.3*1.25 + 0.7*5 - 1.21
	assert.InDelta(t, 1.1, mean, 5*math.Sqrt(exactVar/20000))
	assert.InDelta(t, exactVar, variance, 0.1)
	cdf := 0.3*0.5*(1+math.Erf((0.5+1)/(0.5*math.Sqrt2))) + 0.7*0.5*(1+math.Erf((0.5-2)/math.Sqrt2))
	assert.InDelta(t, cdf, float64(below)/20000, 0.01)
}

// A batch of two mixtures of 2-D Gaussians (batch (2), K = 3, event (2)):
// shapes, and LogProb equals the sum over components computed from the
// components' own LogProb.
func TestMixtureBatchedMultivariate(t *testing.T) {
	g := graph.New()
	rng := tensor.NewRNG(4)
	logits := g.Const(rng.Normal(tensor.Float64, 0, 1, 2, 3))
	loc := g.Const(rng.Normal(tensor.Float64, 0, 1, 2, 3, 2))
	scale := g.Const(rng.Uniform(tensor.Float64, 0.5, 1.5, 2, 3, 2))
	comp := probabilistic.NewMVNDiag(loc, scale)
	m := probabilistic.NewMixture(probabilistic.NewCategorical(logits), comp)
	assert.Equal(t, []int{2}, m.BatchShape())
	assert.Equal(t, []int{2}, m.EventShape())
	x := g.Const(rng.Normal(tensor.Float64, 0, 1, 5, 2, 2)) // (sample 5, batch 2, event 2)
	lp := m.LogProb(x)
	require.Equal(t, []int{5, 2}, lp.Shape())
	w := graph.Softmax(logits, -1).Value()
	for s := range 5 {
		for b := range 2 {
			total := 0.0
			for k := range 3 {
				p := 1.0
				for e := range 2 {
					p *= normalPDF(x.Value().At(s, b, e), loc.Value().At(b, k, e), scale.Value().At(b, k, e))
				}
				total += w.At(b, k) * p
			}
			assert.InDelta(t, math.Log(total), lp.Value().At(s, b), 1e-12)
		}
	}
	assert.Equal(t, []int{7, 2, 2}, m.Sample(rng, 7).Shape())
}

// LogProb is differentiable in the weights, locations and scales.
func TestMixtureGradCheck(t *testing.T) {
	rng := tensor.NewRNG(2)
	inputs := []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3), rng.Normal(tensor.Float64, 0, 1, 3),
		rng.Uniform(tensor.Float64, 0.5, 1.5, 3), rng.Normal(tensor.Float64, 0, 1, 4)}
	_, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		m := probabilistic.NewMixture(probabilistic.NewCategorical(xs[0]), probabilistic.NewNormal(xs[1], xs[2]))
		return graph.Sum(m.LogProb(xs[3]), nil, false)
	}, inputs, autodiff.GradCheckOptions{Name: "mixture", Order: 2})
	assert.NoError(t, err)
}
