package inference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/probabilistic"
	"github.com/gradus-ml/gradus/tensor"
)

// gaussian2D is N(0, Σ) with unit and s standard deviations and
// correlation rho.
func gaussian2D(rho, s float64) Model {
	det := s * s * (1 - rho*rho)
	prec := []float64{s * s / det, -rho * s / det, -rho * s / det, 1 / det}
	return Model{
		Params: []Param{{Name: "x", Shape: []int{2, 1}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			x := p["x"]
			pm := g.Const(tensor.FromFloat64s(prec, 2, 2))
			return graph.MulScalar(graph.MatMulT(x, graph.MatMul(pm, x), true, false), -0.5)
		},
	}
}

// within4MCSE checks a posterior mean against the truth at four Monte
// Carlo standard errors (sd/√ESS): wrong with probability 6e-5.
func within4MCSE(t *testing.T, r *Result, name string, mean, sd float64) {
	t.Helper()
	withinMCSE(t, r, name, mean, sd, 1.01)
}

// withinMCSE is within4MCSE with a chosen R̂ bound.
func withinMCSE(t *testing.T, r *Result, name string, mean, sd, rhatMax float64) {
	t.Helper()
	ch := r.Column(name)
	all := flatten(ch)
	m := meanOf(all)
	mcse := sd / math.Sqrt(BulkESS(ch))
	assert.InDelta(t, mean, m, 4*mcse, "%s: mean %g, truth %g, mcse %g", name, m, mean, mcse)
	got := math.Sqrt(varianceOf(all, m))
	assert.InDelta(t, sd, got, 0.1*sd, "%s: sd %g, truth %g", name, got, sd)
	assert.Less(t, Rhat(ch), rhatMax, name)
}

func TestNUTSCorrelatedGaussian(t *testing.T) {
	r, err := NUTS(ctx, gaussian2D(0.9, 2), NUTSOptions{Chains: 4, Warmup: 500, Draws: 1000, Seed: 11})
	require.NoError(t, err)
	assert.Equal(t, []string{"x[0]", "x[1]"}, r.Names)
	within4MCSE(t, r, "x[0]", 0, 1)
	within4MCSE(t, r, "x[1]", 0, 2)
	for c := range 4 {
		assert.Zero(t, r.Divergences[c])
		// The adapted inverse metric approaches the marginal variances 1, 4.
		assert.InDelta(t, 1, r.InvMass[c][0], 0.5)
		assert.InDelta(t, 4, r.InvMass[c][1], 2)
	}
}

// p ~ Beta(2, 2) with 7 successes in 10 Bernoulli trials: the posterior is
// Beta(9, 5), mean 9/14, sd √(9·5/(14²·15)). p is sampled through the
// sigmoid bijector, whose log-Jacobian the sampler adds; by NUTS and by
// static HMC (Steps > 0).
func TestNUTSBetaBernoulliThroughABijector(t *testing.T) {
	m := Model{
		Params: []Param{{Name: "p", Shape: []int{}, Bijector: probabilistic.Sigmoid{}}},
		LogDensity: func(g *graph.Graph, ps map[string]*graph.Node) *graph.Node {
			p := ps["p"]
			// (2−1+7)·log p + (2−1+3)·log(1−p)
			return graph.Add(graph.MulScalar(graph.Log(p), 8), graph.MulScalar(graph.Log1p(graph.Neg(p)), 4))
		},
	}
	for name, opts := range map[string]NUTSOptions{
		"nuts": {Chains: 4, Warmup: 400, Draws: 1000, Seed: 3},
		"hmc":  {Chains: 4, Warmup: 400, Draws: 1000, Seed: 3, Steps: 6, TargetAccept: 0.65},
	} {
		r, err := NUTS(ctx, m, opts)
		require.NoError(t, err, name)
		within4MCSE(t, r, "p", 9.0/14, math.Sqrt(9*5/(14*14*15.0)))
	}
}

func TestNUTSIsDeterministic(t *testing.T) {
	opts := NUTSOptions{Chains: 2, Warmup: 50, Draws: 20, Seed: 5}
	a, err := NUTS(ctx, gaussian2D(0.5, 1), opts)
	require.NoError(t, err)
	b, err := NUTS(ctx, gaussian2D(0.5, 1), opts)
	require.NoError(t, err)
	assert.Equal(t, a.Draws, b.Draws)
}

func TestModelErrors(t *testing.T) {
	_, err := NUTS(ctx, Model{}, NUTSOptions{})
	assert.ErrorContains(t, err, "no LogDensity")
	m := gaussian2D(0, 1)
	m.Params = append(m.Params, Param{Name: "x", Shape: []int{}})
	_, err = NUTS(ctx, m, NUTSOptions{})
	assert.ErrorContains(t, err, `"x" is empty or repeated`)
	_, err = NUTS(ctx, gaussian2D(0, 1), NUTSOptions{TargetAccept: 1.5})
	assert.ErrorContains(t, err, "TargetAccept")
}

// Static HMC (Steps > 0) samples the same correlated Gaussian. Its fixed
// path length mixes less evenly than NUTS, so the R̂ bound is 1.02 (over
// seeds 1-5 it reached 1.011).
func TestHMCCorrelatedGaussian(t *testing.T) {
	r, err := NUTS(ctx, gaussian2D(0.5, 1.5), NUTSOptions{Chains: 4, Warmup: 500, Draws: 1000, Steps: 10, TargetAccept: 0.65, Seed: 12})
	require.NoError(t, err)
	withinMCSE(t, r, "x[0]", 0, 1, 1.02)
	withinMCSE(t, r, "x[1]", 0, 1.5, 1.02)
}

// A conjugate Normal-Normal model: μ ~ N(0, 2²), yᵢ | μ ~ N(μ, 1) for
// y = (1.2, 0.4, 2.1, 1.7): the posterior is N(Σy/(n + ¼), 1/(n + ¼)) =
// N(5.4/4.25, 1/4.25). NUTS and static HMC recover its mean within four
// Monte Carlo standard errors and its sd within 10 %.
func TestNormalNormalConjugate(t *testing.T) {
	y := []float64{1.2, 0.4, 2.1, 1.7}
	m := Model{
		Params: []Param{{Name: "mu", Shape: []int{}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			mu := p["mu"]
			ll := graph.MulScalar(graph.Sum(graph.Square(graph.Sub(g.Const(tensor.FromFloat64s(y, 4)), mu)), nil, false), -0.5)
			return graph.Add(ll, graph.MulScalar(graph.Square(mu), -0.5/4))
		},
	}
	mean, sd := 5.4/4.25, math.Sqrt(1/4.25)
	for name, opts := range map[string]NUTSOptions{
		"nuts": {Chains: 4, Warmup: 300, Draws: 1000, Seed: 3},
		"hmc":  {Chains: 4, Warmup: 300, Draws: 1000, Seed: 3, Steps: 8, TargetAccept: 0.65},
	} {
		r, err := NUTS(ctx, m, opts)
		require.NoError(t, err, name)
		within4MCSE(t, r, "mu", mean, sd)
		assert.Empty(t, r.Warnings, name)
	}
}

// Bad models give clear errors: a log density that is NaN (or +Inf)
// everywhere, and one that is not a scalar; a funnel-shaped posterior in
// its centred form reports its divergences as a warning.
func TestBadModels(t *testing.T) {
	for name, v := range map[string]float64{"NaN": math.NaN(), "+Inf": math.Inf(1)} {
		m := Model{Params: []Param{{Name: "x", Shape: []int{}}},
			LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
				return graph.Add(graph.MulScalar(p["x"], 0), g.Scalar(tensor.Float64, v))
			}}
		_, err := NUTS(ctx, m, NUTSOptions{Chains: 1, Warmup: 10, Draws: 10})
		assert.ErrorContains(t, err, "no initial point with a finite log density", name)
	}
	vec := Model{Params: []Param{{Name: "x", Shape: []int{3}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node { return graph.Square(p["x"]) }}
	_, err := NUTS(ctx, vec, NUTSOptions{Chains: 1})
	assert.ErrorContains(t, err, "LogDensity returned square[3] float64, want a scalar node")
	_, err = ADVI(ctx, vec, ADVIOptions{})
	assert.ErrorContains(t, err, "want a scalar node")

	// Neal's funnel, centred: v ~ N(0, 3²), x | v ~ N(0, e^v).
	funnel := Model{Params: []Param{{Name: "v", Shape: []int{}}, {Name: "x", Shape: []int{}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			v, x := p["v"], p["x"]
			lx := graph.Sub(graph.MulScalar(graph.Mul(graph.Square(x), graph.Exp(graph.Neg(v))), -0.5), graph.MulScalar(v, 0.5))
			return graph.Add(graph.MulScalar(graph.Square(v), -0.5/9), lx)
		}}
	r, err := NUTS(ctx, funnel, NUTSOptions{Chains: 2, Warmup: 200, Draws: 300, Seed: 1})
	require.NoError(t, err)
	require.NotEmpty(t, r.Warnings)
	assert.Contains(t, r.Warnings[0], "divergent transitions after warm-up")
}

// On a strongly correlated Gaussian (ρ = 0.99, scales 1 and 10) the dense
// metric learns the correlation: trajectories need fewer leapfrog steps
// (a smaller mean tree depth) than with the diagonal one, and both sample
// the right marginals; the adapted dense inverse metric approaches Σ.
func TestDenseMetric(t *testing.T) {
	diag, err := NUTS(ctx, gaussian2D(0.99, 10), NUTSOptions{Chains: 2, Warmup: 600, Draws: 1000, Seed: 5})
	require.NoError(t, err)
	dense, err := NUTS(ctx, gaussian2D(0.99, 10), NUTSOptions{Chains: 2, Warmup: 600, Draws: 1000, Seed: 5, DenseMetric: true})
	require.NoError(t, err)
	for name, r := range map[string]*Result{"diagonal": diag, "dense": dense} {
		withinMCSE(t, r, "x[0]", 0, 1, 1.02)
		withinMCSE(t, r, "x[1]", 0, 10, 1.02)
		t.Logf("%s: mean tree depth %.2f, %.2f", name, r.MeanTreeDepth[0], r.MeanTreeDepth[1])
	}
	for c := range 2 {
		assert.Less(t, dense.MeanTreeDepth[c], diag.MeanTreeDepth[c]-1, "chain %d", c)
		require.Len(t, dense.DenseInvMass[c], 4)
		assert.InDelta(t, 9.9, dense.DenseInvMass[c][1], 3, "the covariance ρ·1·10")
		assert.Nil(t, diag.DenseInvMass[c])
	}
}

// A parameter used outside its support (a scale declared without a
// bijector, so the sampler proposes negative values where log σ is NaN):
// those points count as outside the support, so no draw is negative, and
// the rejected trajectories are reported as divergences in Warnings rather
// than passing silently.
func TestParameterOutsideItsSupport(t *testing.T) {
	y := []float64{0.3, -1.2, 2.0, 0.7, -0.4}
	m := Model{
		Params: []Param{{Name: "sigma", Shape: []int{}, Init: []float64{1}}},
		LogDensity: func(g *graph.Graph, p map[string]*graph.Node) *graph.Node {
			s := p["sigma"]
			yy := graph.Sum(graph.Square(g.Const(tensor.FromFloat64s(y, 5))), nil, false)
			ll := graph.Sub(graph.Neg(graph.Div(yy, graph.MulScalar(graph.Square(s), 2))), graph.MulScalar(graph.Log(s), 5))
			return graph.Sub(ll, s) // an Exp(1) prior on σ
		},
	}
	r, err := NUTS(ctx, m, NUTSOptions{Chains: 2, Warmup: 300, Draws: 500, Seed: 4})
	require.NoError(t, err)
	for _, ch := range r.Column("sigma") {
		for _, v := range ch {
			require.Greater(t, v, 0.0)
		}
	}
	divergent := 0
	for _, d := range r.Divergences {
		divergent += d
	}
	if divergent > 0 {
		assert.NotEmpty(t, r.Warnings)
	}
}
