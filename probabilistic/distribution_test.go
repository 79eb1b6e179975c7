package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

const halfLog2Pi = 0.918938533204672742 // ½ log 2π

// TestLogProbValues compares log-densities with textbook formulas
// evaluated by hand.
func TestLogProbValues(t *testing.T) {
	cases := []struct {
		name string
		// build returns the distribution and the value to evaluate.
		build func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node)
		want  []float64
	}{
		{"Normal(0,1) at 0: −½log2π", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewNormal(c(g, dt, s(0)), c(g, dt, s(1))), c(g, dt, s(0))
		}, s(-halfLog2Pi)},
		{"Normal(1,2) at 3: −½ − log 2 − ½log2π, batch of 2", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewNormal(c(g, dt, []float64{1, 0}), c(g, dt, s(2))), c(g, dt, []float64{3, 0})
		}, []float64{-2.112085713764618, -math.Ln2 - halfLog2Pi}},
		{"Gamma(2,1) at 1: log(e⁻¹/Γ(2)) = −1", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewGamma(c(g, dt, s(2)), c(g, dt, s(1))), c(g, dt, s(1))
		}, s(-1)},
		{"Gamma(3,2) at ½: 3log2 + 2log½ − 1 − log 2 = −1", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewGamma(c(g, dt, s(3)), c(g, dt, s(2))), c(g, dt, s(0.5))
		}, s(-1)},
		{"Beta(2,2) at ½: log 1.5", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewBeta(c(g, dt, s(2)), c(g, dt, s(2))), c(g, dt, s(0.5))
		}, s(math.Log(1.5))},
		{"Beta(1,1) at 0.3: 0", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewBeta(c(g, dt, s(1)), c(g, dt, s(1))), c(g, dt, s(0.3))
		}, s(0)},
		{"Dirichlet(1,1,1): density Γ(3) = 2", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewDirichlet(c(g, dt, []float64{1, 1, 1})), c(g, dt, []float64{0.2, 0.3, 0.5})
		}, s(math.Ln2)},
		{"Dirichlet(2,2,2): 5!·0.2·0.3·0.5 = 3.6", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewDirichlet(c(g, dt, []float64{2, 2, 2})), c(g, dt, []float64{0.2, 0.3, 0.5})
		}, s(math.Log(3.6))},
		{"Laplace(0,1) at 0: −log 2; Laplace(1,2) at −1: −log 4 − 1", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewLaplace(c(g, dt, []float64{0, 1}), c(g, dt, []float64{1, 2})), c(g, dt, []float64{0, -1})
		}, []float64{-math.Ln2, -2*math.Ln2 - 1}},
		{"Uniform(0,4): −log 4 inside, −∞ outside", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewUniform(c(g, dt, s(0)), c(g, dt, s(4))), c(g, dt, []float64{1, 0, 4, -1})
		}, []float64{-2 * math.Ln2, -2 * math.Ln2, math.Inf(-1), math.Inf(-1)}},
		{"Bernoulli(p=0.3) at 1, 0", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewBernoulliProbs(c(g, dt, s(0.3))), c(g, dt, []float64{1, 0})
		}, []float64{math.Log(0.3), math.Log(0.7)}},
		{"Bernoulli logits 0 and ±100 (stable)", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewBernoulliLogits(c(g, dt, []float64{0, 100, -100})), c(g, dt, []float64{1, 0, 1})
		}, []float64{-math.Ln2, -100, -100}},
		{"Categorical probs (0.2,0.3,0.5) at 2 and 0", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewCategoricalProbs(c(g, dt, []float64{0.2, 0.3, 0.5})), c(g, dt, []float64{2, 0})
		}, []float64{math.Log(0.5), math.Log(0.2)}},
		{"Categorical batch of logits (uniform and one-hot-ish)", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewCategorical(c(g, dt, []float64{0, 0, 0, 0, math.Log(3), 0}, 2, 3)), c(g, dt, []float64{1, 1})
		}, []float64{-math.Log(3), math.Log(3.0 / 5)}},
		{"MVN diagonal = sum of independent Normals", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewMVNDiag(c(g, dt, []float64{1, 2}), c(g, dt, []float64{1, 2})), c(g, dt, []float64{0, 0})
		}, s((-0.5 - halfLog2Pi) + (-0.5 - math.Ln2 - halfLog2Pi))},
		{"MVN cov [[2,1],[1,2]] at (1,0): −log2π − ½log3 − ⅓", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			d, err := NewMVNFromCovariance(c(g, dt, []float64{0, 0}), c(g, dt, []float64{2, 1, 1, 2}, 2, 2))
			require.NoError(t, err)
			return d, c(g, dt, []float64{1, 0})
		}, s(-2*halfLog2Pi - 0.5*math.Log(3) - 1.0/3)},
		{"MVN scale_tril [[1,0],[½,1]] at (1,1): Σ⁻¹ quadratic form 1.25, det 1", func(g *graph.Graph, dt tensor.DType) (Distribution, *graph.Node) {
			return NewMVNFromScaleTril(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 0, 0.5, 1}, 2, 2)), c(g, dt, []float64{1, 1, 0, 0}, 2, 2)
		}, []float64{-2*halfLog2Pi - 0.625, -2 * halfLog2Pi}},
	}
	for _, tc := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				d, x := tc.build(g, dt)
				lp := d.LogProb(x)
				require.Equal(t, dt, lp.DType())
				requireValues(t, tc.want, lp, numtest.Pick(dt, 2e-5, 1e-10))
			})
		}
	}
}

// TestMoments compares Entropy, Mean and Variance with closed forms
// worked out by hand.
func TestMoments(t *testing.T) {
	const euler = 0.57721566490153286
	cases := []struct {
		name          string
		build         func(g *graph.Graph, dt tensor.DType) Distribution
		entropy       []float64
		mean, varianc []float64
	}{
		{"Normal(1,2)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewNormal(c(g, dt, s(1)), c(g, dt, s(2)))
		}, s(0.5 + halfLog2Pi + math.Ln2), s(1), s(4)},
		{"Gamma(3,2): ψ(3) = 3/2 − γ", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewGamma(c(g, dt, s(3)), c(g, dt, s(2)))
		}, s(3 - 2*(1.5-euler)), s(1.5), s(0.75)},
		{"Beta(2,2): −log 6 − 2ψ(2) + 2ψ(4)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewBeta(c(g, dt, s(2)), c(g, dt, s(2)))
		}, s(-math.Log(6) - 2*(1-euler) + 2*(1+0.5+1.0/3-euler)), s(0.5), s(0.05)},
		{"Dirichlet(1,1,1): uniform on the simplex", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewDirichlet(c(g, dt, []float64{1, 1, 1}))
		}, s(-math.Ln2), []float64{1. / 3, 1. / 3, 1. / 3}, []float64{1. / 18, 1. / 18, 1. / 18}},
		{"Laplace(0,2)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewLaplace(c(g, dt, s(0)), c(g, dt, s(2)))
		}, s(1 + 2*math.Ln2), s(0), s(8)},
		{"Uniform(1,5)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewUniform(c(g, dt, s(1)), c(g, dt, s(5)))
		}, s(2 * math.Ln2), s(3), s(4. / 3)},
		{"Bernoulli(0.3)", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewBernoulliProbs(c(g, dt, s(0.3)))
		}, s(-0.3*math.Log(0.3) - 0.7*math.Log(0.7)), s(0.3), s(0.21)},
		{"Categorical(0.2,0.3,0.5): index mean 1.3", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewCategoricalProbs(c(g, dt, []float64{0.2, 0.3, 0.5}))
		}, s(-(0.2*math.Log(0.2) + 0.3*math.Log(0.3) + 0.5*math.Log(0.5))), s(1.3), s(0.3 + 2 - 1.69)},
		{"MVN L=[[1,0],[½,1]]: det Σ = 1", func(g *graph.Graph, dt tensor.DType) Distribution {
			return NewMVNFromScaleTril(c(g, dt, []float64{1, -1}), c(g, dt, []float64{1, 0, 0.5, 1}, 2, 2))
		}, s(1 + 2*halfLog2Pi), []float64{1, -1}, []float64{1, 1.25}},
	}
	for _, tc := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				d := tc.build(g, dt)
				tol := numtest.Pick(dt, 2e-5, 1e-10)
				requireValues(t, tc.entropy, d.Entropy(), tol, "entropy")
				requireValues(t, tc.mean, d.Mean(), tol, "mean")
				requireValues(t, tc.varianc, d.Variance(), tol, "variance")
			})
		}
	}
}

// TestShapes checks batch, event and sample shapes, and broadcasting of
// values against the batch.
func TestShapes(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		rng := tensor.NewRNG(3)
		n := NewNormal(c(g, dt, []float64{0, 1, 2}, 3, 1), c(g, dt, []float64{1, 2}, 2))
		require.Equal(t, []int{3, 2}, n.BatchShape())
		require.Equal(t, []int{5, 3, 2}, n.Sample(rng, 5).Shape())
		require.Equal(t, []int{3, 2}, n.Sample(rng, 0).Shape())
		require.Equal(t, []int{4, 3, 2}, n.RSample(rng, 4).Shape())
		require.Equal(t, []int{3, 2}, n.LogProb(c(g, dt, s(0.5))).Shape())

		m := NewMVNFromScaleTril(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 0, 0, 1, 2, 0, 0, 2, 3, 0, 0, 3}, 3, 2, 2))
		require.Equal(t, []int{3}, m.BatchShape())
		require.Equal(t, []int{2}, m.EventShape())
		require.Equal(t, []int{7, 3, 2}, m.Sample(rng, 7).Shape())
		require.Equal(t, []int{7, 3}, m.LogProb(g.Const(m.Sample(rng, 7))).Shape())
		require.Equal(t, []int{3, 2}, m.Mean().Shape())

		dir := NewDirichlet(c(g, dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
		require.Equal(t, []int{2}, dir.BatchShape())
		require.Equal(t, []int{4, 2, 3}, dir.Sample(rng, 4).Shape())
		cat := NewCategorical(c(g, dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
		require.Equal(t, []int{2}, cat.BatchShape())
		require.Equal(t, []int{4, 2}, cat.Sample(rng, 4).Shape())
		requireValues(t, []float64{math.Log(1 / (1 + math.E + math.E*math.E)), math.Log(math.E * math.E / (1 + math.E + math.E*math.E))},
			cat.LogProbLabels([]int{0, 2}), numtest.Pick(dt, 2e-5, 1e-10))
	}
}

// TestRSampleInterface checks which distributions are reparameterised.
func TestRSampleInterface(t *testing.T) {
	g := graph.New()
	dt := tensor.Float64
	rng := tensor.NewRNG(1)
	one := c(g, dt, s(1))
	for _, d := range []Distribution{NewNormal(one, one), NewLaplace(one, one), NewUniform(c(g, dt, s(0)), one), NewMVNDiag(c(g, dt, s(0), 1), c(g, dt, s(1), 1)),
		NewGamma(one, one), NewBeta(one, one), NewDirichlet(c(g, dt, []float64{1, 1}))} {
		x, err := RSample(d, rng, 3)
		require.NoError(t, err)
		require.Equal(t, concatShape([]int{3}, d.BatchShape(), d.EventShape()), x.Shape())
	}
	for _, d := range []Distribution{NewBernoulliLogits(one), NewCategorical(c(g, dt, []float64{0, 0})), NewPoisson(one)} {
		_, err := RSample(d, rng, 3)
		require.Error(t, err)
		require.Contains(t, err.Error(), "has no reparameterised sampler")
	}
}

// TestScalarSampleShapes checks that one draw from a scalar distribution is
// 0-d, for every sampler.
func TestScalarSampleShapes(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		one := c(g, dt, s(1))
		rng := tensor.NewRNG(2)
		for _, d := range []Distribution{NewNormal(one, one), NewLaplace(one, one), NewUniform(c(g, dt, s(0)), one),
			NewGamma(one, one), NewBeta(one, one), NewBernoulliLogits(one), NewCategorical(c(g, dt, []float64{0, 1}))} {
			require.Equal(t, []int{}, d.Sample(rng, 0).Shape(), "%T", d)
			require.Equal(t, []int{3}, d.Sample(rng, 3).Shape(), "%T", d)
			require.Equal(t, []int{}, d.BatchShape(), "%T", d)
			require.Equal(t, []int{}, d.LogProb(g.Const(d.Sample(rng, 0))).Shape(), "%T", d)
		}
	}
}

// TestMVNMatchesIndependentNormals compares the diagonal MVN with the sum
// of univariate Normal log-densities at random points, with a batch.
func TestMVNMatchesIndependentNormals(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		rng := tensor.NewRNG(4)
		loc := g.Const(rng.Normal(dt, 0, 1, 2, 3))
		scale := g.Const(rng.Uniform(dt, 0.5, 2, 3))
		x := g.Const(rng.Normal(dt, 0, 2, 5, 2, 3))
		mvn := NewMVNDiag(loc, scale)
		want := graph.Sum(NewNormal(loc, scale).LogProb(x), []int{-1}, false)
		got := mvn.LogProb(x)
		require.Equal(t, []int{5, 2}, got.Shape())
		requireValues(t, want.Value().Values(), got, 10*numtest.Pick(dt, 2e-5, 1e-10))
		wantH := graph.Sum(NewNormal(loc, scale).Entropy(), []int{-1}, false)
		requireValues(t, wantH.Value().Values(), mvn.Entropy(), 10*numtest.Pick(dt, 2e-5, 1e-10))
	}
}
