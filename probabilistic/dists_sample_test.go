package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// checkMoments asserts that the draws' mean and variance are within five
// Monte Carlo standard errors of the closed forms; the variance's standard
// error uses the fourth central moment of the same draws.
func checkMoments(t *testing.T, name string, s []float64, wantMean, wantVar float64) {
	t.Helper()
	n := float64(len(s))
	mean, m2, m4 := 0.0, 0.0, 0.0
	for _, v := range s {
		mean += v / n
	}
	for _, v := range s {
		e := (v - mean) * (v - mean)
		m2 += e / n
		m4 += e * e / n
	}
	assert.InDelta(t, wantMean, mean, 5*math.Sqrt(wantVar/n), "%s mean", name)
	assert.InDelta(t, wantVar, m2, 5*math.Sqrt((m4-m2*m2)/n), "%s variance", name)
}

// column returns entry j of every row of width w.
func column(v []float64, w, j int) []float64 {
	out := make([]float64, 0, len(v)/w)
	for i := j; i < len(v); i += w {
		out = append(out, v[i])
	}
	return out
}

// Sample and RSample moments against the closed forms, with fixed seeds.
func TestNewDistributionsSampleMoments(t *testing.T) {
	const n = 20000
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	vec := func(v ...float64) *graph.Node { return g.Const(tensor.FromFloat64s(v, len(v))) }
	for name, d := range map[string]Distribution{
		"half-normal":     NewHalfNormal(c(1.3)),
		"log-normal":      NewLogNormal(c(0.2), c(0.4)),
		"exponential":     NewExponential(c(2.5)),
		"inverse gamma":   NewInverseGamma(c(6.5), c(3)),
		"geometric":       NewGeometricProbs(c(0.3)),
		"zero-inflated":   NewZeroInflated(NewPoisson(c(3.5)), c(-0.4)),
		"censored normal": NewCensored(NewNormal(c(0), c(1)), c(-0.5), nil),
	} {
		s := d.Sample(tensor.NewRNG(7), n).Values()
		if name == "censored normal" {
			// The mass at the bound is Φ(−0.5) = 0.3085375387259869.
			at := 0.0
			for _, v := range s {
				require.GreaterOrEqual(t, v, -0.5)
				if v == -0.5 {
					at++
				}
			}
			p := 0.3085375387259869
			assert.InDelta(t, p, at/n, 5*math.Sqrt(p*(1-p)/n))
			continue
		}
		checkMoments(t, name, s, d.Mean().Item(), d.Variance().Item())
		if r, ok := d.(RSampler); ok {
			checkMoments(t, name+" rsample", r.RSample(tensor.NewRNG(8), n).Value().Values(), d.Mean().Item(), d.Variance().Item())
		}
	}
	// Multivariate: each component.
	m := NewMultinomial(6, vec(0.3, -0.2, 1))
	lr := NewLowRankMVN(vec(1, -1, 0.5), g.Const(tensor.FromFloat64s([]float64{0.5, 1, -0.3, 0.2, 0.8, 0.1}, 3, 2)), vec(0.4, 1.1, 0.3))
	rw := NewGaussianRandomWalk(c(0.7), 3)
	for name, d := range map[string]Distribution{"multinomial": m, "low-rank MVN": lr, "random walk": rw} {
		s := d.Sample(tensor.NewRNG(9), n).Values()
		mean, vr := d.Mean().Value().Values(), d.Variance().Value().Values()
		for j := range mean {
			checkMoments(t, name, column(s, len(mean), j), mean[j], vr[j])
		}
		if r, ok := d.(RSampler); ok {
			rs := r.RSample(tensor.NewRNG(10), n).Value().Values()
			for j := range mean {
				checkMoments(t, name+" rsample", column(rs, len(mean), j), mean[j], vr[j])
			}
		}
	}
	// Cauchy: half of the draws lie within one scale of the location.
	for name, d := range map[string]Distribution{"cauchy": NewCauchy(c(1), c(2)), "half-Cauchy": NewHalfCauchy(c(2))} {
		in := 0.0
		loc := 0.0
		if name == "cauchy" {
			loc = 1
		}
		for _, v := range d.Sample(tensor.NewRNG(11), n).Values() {
			if math.Abs(v-loc) < 2 {
				in++
			}
		}
		assert.InDelta(t, 0.5, in/n, 5*math.Sqrt(0.25/n), name)
	}
}

// The relaxed distributions keep the discrete law in their rounding:
// P(y > ½) = sigmoid(l) for RelaxedBernoulli, and the argmax of a
// RelaxedOneHotCategorical draw is Categorical(softmax(l)) (the Gumbel-max
// trick), whatever the temperature.
func TestRelaxedRoundsToTheDiscreteLaw(t *testing.T) {
	const n = 20000
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	rb := NewRelaxedBernoulli(c(0.8), c(0.6))
	ones := 0.0
	for _, v := range rb.RSample(tensor.NewRNG(3), n).Value().Values() {
		require.True(t, v > 0 && v < 1)
		if v > 0.5 {
			ones++
		}
	}
	p := 1 / (1 + math.Exp(-0.6))
	assert.InDelta(t, p, ones/n, 5*math.Sqrt(p*(1-p)/n))
	logits := []float64{0.5, -1, 1.2}
	rc := NewRelaxedOneHotCategorical(c(1.5), g.Const(tensor.FromFloat64s(logits, 3)))
	s := rc.Sample(tensor.NewRNG(4), n).Values()
	counts := make([]float64, 3)
	for i := 0; i < len(s); i += 3 {
		best := 0
		for k := 1; k < 3; k++ {
			if s[i+k] > s[i+best] {
				best = k
			}
		}
		counts[best]++
		require.InDelta(t, 1, s[i]+s[i+1]+s[i+2], 1e-12)
	}
	z := math.Exp(0.5) + math.Exp(-1) + math.Exp(1.2)
	for k, l := range logits {
		pk := math.Exp(l) / z
		assert.InDelta(t, pk, counts[k]/n, 5*math.Sqrt(pk*(1-pk)/n), "class %d", k)
	}
}

// Gradients of the new log densities (and KLs) in their parameters and
// values pass GradCheck to second order; parameters enter through exp or
// sigmoid where they are constrained.
func TestNewDistributionsGradCheck(t *testing.T) {
	ex := graph.Exp
	cst := func(x *graph.Node, v ...float64) *graph.Node { return x.Graph().Const(t64(v...)) }
	klOf := func(p, q Distribution) *graph.Node {
		k, err := KL(p, q)
		if err != nil {
			panic(err)
		}
		return k
	}
	runGradChecks(t, []gradCase{
		{"HalfNormal", []*tensor.Tensor{t64(0.3, -0.2), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewHalfNormal(ex(xs[0])).LogProb(xs[1])
		}},
		{"HalfCauchy", []*tensor.Tensor{t64(0.3, -0.2), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewHalfCauchy(ex(xs[0])).LogProb(xs[1])
		}},
		{"Cauchy", []*tensor.Tensor{t64(0.3, -0.2), t64(0.1, 0.5), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewCauchy(xs[0], ex(xs[1])).LogProb(xs[2])
		}},
		{"LogNormal", []*tensor.Tensor{t64(0.3, -0.2), t64(0.1, 0.5), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewLogNormal(xs[0], ex(xs[1])).LogProb(xs[2])
		}},
		{"Exponential", []*tensor.Tensor{t64(0.3, -0.2), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewExponential(ex(xs[0])).LogProb(xs[1])
		}},
		{"InverseGamma", []*tensor.Tensor{t64(0.3, 1.2), t64(0.1, 0.5), t64(0.4, 1.5)}, func(xs []*graph.Node) *graph.Node {
			return NewInverseGamma(ex(xs[0]), ex(xs[1])).LogProb(xs[2])
		}},
		{"Multinomial", []*tensor.Tensor{m64(2, 3, 0.1, 0.5, -1, 2, 0, 0.3)}, func(xs []*graph.Node) *graph.Node {
			return NewMultinomial(5, xs[0]).LogProb(cst(xs[0], 2, 0, 3))
		}},
		{"Geometric", []*tensor.Tensor{t64(0.3, -1.2)}, func(xs []*graph.Node) *graph.Node {
			return NewGeometricLogits(xs[0]).LogProb(cst(xs[0], 0, 4))
		}},
		{"RelaxedBernoulli", []*tensor.Tensor{t64(-0.3, 0.2), t64(0.3, -1.2), t64(0.2, -0.7)}, func(xs []*graph.Node) *graph.Node {
			return NewRelaxedBernoulli(ex(xs[0]), xs[1]).LogProb(graph.Sigmoid(xs[2]))
		}},
		{"RelaxedOneHot", []*tensor.Tensor{t64(-0.3), t64(0.3, -1.2, 0.5), t64(0.2, -0.7)}, func(xs []*graph.Node) *graph.Node {
			return NewRelaxedOneHotCategorical(ex(graph.Reshape(xs[0])), xs[1]).LogProb(StickBreaking{}.Forward(xs[2]))
		}},
		{"LowRankMVN", []*tensor.Tensor{t64(0.3, -1, 0.2), m64(3, 2, 0.5, 1, -0.3, 0.2, 0.8, 0.1), t64(0.1, -0.4, 0.3), t64(1, 0.5, -0.2)}, func(xs []*graph.Node) *graph.Node {
			return NewLowRankMVN(xs[0], xs[1], ex(xs[2])).LogProb(xs[3])
		}},
		{"GaussianRandomWalk", []*tensor.Tensor{t64(-0.3), t64(0.3, -1.2, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewGaussianRandomWalk(ex(graph.Reshape(xs[0])), 3).LogProb(xs[1])
		}},
		{"ZeroInflated", []*tensor.Tensor{t64(0.3, 1.1), t64(-0.4, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewZeroInflated(NewPoisson(ex(xs[0])), xs[1]).LogProb(cst(xs[0], 0, 3))
		}},
		{"Censored", []*tensor.Tensor{t64(0.3, 0.1, -0.2), t64(0.2, -0.1, 0.4)}, func(xs []*graph.Node) *graph.Node {
			d := NewCensored(NewNormal(xs[0], ex(xs[1])), cst(xs[0], -0.5, -0.5, -0.5), cst(xs[0], 1, 1, 1))
			return d.LogProb(cst(xs[0], -2, 0.4, 1))
		}},
		{"Censored Laplace", []*tensor.Tensor{t64(0.3, 0.1, -0.2), t64(0.2, -0.1, 0.4)}, func(xs []*graph.Node) *graph.Node {
			d := NewCensored(NewLaplace(xs[0], ex(xs[1])), cst(xs[0], -0.5, -0.5, -0.5), cst(xs[0], 1, 1, 1))
			return d.LogProb(cst(xs[0], -2, 0.4, 1))
		}},
		{"KLs", []*tensor.Tensor{t64(0.3, -0.2), t64(0.1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			a, b := ex(xs[0]), ex(xs[1])
			k := klOf(NewExponential(a), NewExponential(b))
			k = graph.Add(k, klOf(NewHalfNormal(a), NewHalfNormal(b)))
			k = graph.Add(k, klOf(NewLogNormal(xs[0], a), NewLogNormal(xs[1], b)))
			k = graph.Add(k, klOf(NewInverseGamma(a, b), NewInverseGamma(b, a)))
			k = graph.Add(k, klOf(NewLaplace(xs[0], a), NewLaplace(xs[1], b)))
			k = graph.Add(k, klOf(NewCauchy(xs[0], a), NewCauchy(xs[1], b)))
			return graph.Add(k, klOf(NewGeometricLogits(xs[0]), NewGeometricLogits(xs[1])))
		}},
	})
}

// Support bijectors map unconstrained values into each support, where the
// log density is finite.
func TestSupportMapsIntoTheSupport(t *testing.T) {
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	x := g.Const(tensor.FromFloat64s([]float64{-3, -0.5, 0, 0.7, 4}, 5))
	for name, d := range map[string]Supported{
		"half-normal": NewHalfNormal(c(1)), "half-Cauchy": NewHalfCauchy(c(1)), "log-normal": NewLogNormal(c(0), c(1)),
		"exponential": NewExponential(c(1)), "inverse gamma": NewInverseGamma(c(2), c(1)), "cauchy": NewCauchy(c(0), c(1)),
		"uniform": NewUniform(c(-1), c(2)), "relaxed Bernoulli": NewRelaxedBernoulli(c(0.5), c(0)),
		"normal": NewNormal(c(0), c(1)), "gamma": NewGamma(c(2), c(1)), "beta": NewBeta(c(2), c(3)),
	} {
		y := d.Support().Forward(x)
		for i, lp := range d.LogProb(y).Value().Values() {
			assert.False(t, math.IsInf(lp, 0) || math.IsNaN(lp), "%s at %g: %g", name, x.Value().Values()[i], lp)
		}
		requireValues(t, x.Value().Values(), d.Support().Inverse(y), 1e-10, name)
	}
}

// Misuse panics naming the distribution.
func TestNewDistributionsMisuse(t *testing.T) {
	g := graph.New()
	c := func(v float64) *graph.Node { return g.Scalar(tensor.Float64, v) }
	requirePanicsWith(t, func() { NewHalfNormal(c(-1)) }, "probabilistic.HalfNormal", "scale > 0")
	requirePanicsWith(t, func() { NewMultinomial(-1, g.Const(t64(0, 1))) }, "probabilistic.Multinomial", "total count")
	requirePanicsWith(t, func() { NewGaussianRandomWalk(c(1), 0) }, "probabilistic.GaussianRandomWalk")
	requirePanicsWith(t, func() { NewCensored(NewNormal(c(0), c(1)), nil, nil) }, "probabilistic.Censored", "both bounds")
	requirePanicsWith(t, func() { NewZeroInflated(NewPoisson(c(1)), g.Const(t64(0, 1))) }, "probabilistic.ZeroInflated", "base's batch shape")
	requirePanicsWith(t, func() { NewRelaxedBernoulli(c(1), c(0)).Mean() }, "RelaxedBernoulli.Mean", "no closed form")
	requirePanicsWith(t, func() {
		NewLowRankMVN(g.Const(t64(0, 1)), g.Const(m64(3, 1, 1, 1, 1)), g.Const(t64(1, 1)))
	}, "probabilistic.LowRankMVN", "do not fit")
}
