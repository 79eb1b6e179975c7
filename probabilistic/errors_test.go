package probabilistic

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// TestMisuse checks that bad input panics with a *tensor.Error naming the
// distribution and the shapes or values involved.
func TestMisuse(t *testing.T) {
	cases := []struct {
		name      string
		f         func(g *graph.Graph, dt tensor.DType)
		fragments []string
	}{
		{"negative constant scale", func(g *graph.Graph, dt tensor.DType) {
			NewNormal(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, -2}))
		}, []string{"probabilistic.Normal", "scale (2,)", "-2"}},
		{"parameters do not broadcast", func(g *graph.Graph, dt tensor.DType) {
			NewLaplace(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 2, 3}))
		}, []string{"probabilistic.Laplace", "(2,)", "(3,)"}},
		{"mixed dtypes", func(g *graph.Graph, dt tensor.DType) {
			other := tensor.Float64
			if dt == other {
				other = tensor.Float32
			}
			NewGamma(c(g, dt, s(1)), g.Const(tensor.Full(other, 1)))
		}, []string{"probabilistic.Gamma", "mixed dtypes"}},
		{"zero constant concentration", func(g *graph.Graph, dt tensor.DType) {
			NewBeta(c(g, dt, s(0)), c(g, dt, s(1)))
		}, []string{"probabilistic.Beta", "alpha", "alpha > 0"}},
		{"negative constant rate", func(g *graph.Graph, dt tensor.DType) {
			NewGamma(c(g, dt, s(1)), c(g, dt, s(-1)))
		}, []string{"probabilistic.Gamma", "rate"}},
		{"probability above 1", func(g *graph.Graph, dt tensor.DType) {
			NewBernoulliProbs(c(g, dt, s(1.5)))
		}, []string{"probabilistic.Bernoulli", "probs"}},
		{"uniform bounds reversed", func(g *graph.Graph, dt tensor.DType) {
			NewUniform(c(g, dt, s(2)), c(g, dt, s(1)))
		}, []string{"probabilistic.Uniform", "low 2", "high 1"}},
		{"0-d Dirichlet", func(g *graph.Graph, dt tensor.DType) {
			NewDirichlet(c(g, dt, s(1)))
		}, []string{"probabilistic.Dirichlet", "()"}},
		{"MVN shapes", func(g *graph.Graph, dt tensor.DType) {
			NewMVNFromScaleTril(c(g, dt, []float64{0, 0, 0}), c(g, dt, []float64{1, 0, 0, 1}, 2, 2))
		}, []string{"probabilistic.MultivariateNormal", "(3,)", "(2, 2)"}},
		{"MVN non-positive diagonal", func(g *graph.Graph, dt tensor.DType) {
			NewMVNFromScaleTril(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 0, 0, -1}, 2, 2))
		}, []string{"probabilistic.MultivariateNormal", "diagonal"}},
		{"value does not broadcast with batch", func(g *graph.Graph, dt tensor.DType) {
			NewNormal(c(g, dt, []float64{0, 0, 0}), c(g, dt, s(1))).LogProb(c(g, dt, []float64{1, 2}))
		}, []string{"probabilistic.Normal.LogProb", "(2,)", "(3,)"}},
		{"MVN value of the wrong dimension", func(g *graph.Graph, dt tensor.DType) {
			NewMVNDiag(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 1})).LogProb(c(g, dt, []float64{1, 2, 3}))
		}, []string{"probabilistic.MultivariateNormal.LogProb", "(3,)", "event shape (2,)"}},
		{"class index out of range", func(g *graph.Graph, dt tensor.DType) {
			NewCategorical(c(g, dt, []float64{0, 0, 0})).LogProb(c(g, dt, []float64{1, 3}))
		}, []string{"probabilistic.Categorical.LogProb", "[0, 3)", "(3,)"}},
		{"non-integer class index", func(g *graph.Graph, dt tensor.DType) {
			NewCategorical(c(g, dt, []float64{0, 0, 0})).LogProb(c(g, dt, s(0.5)))
		}, []string{"probabilistic.Categorical.LogProb", "0.5"}},
		{"label out of range", func(g *graph.Graph, dt tensor.DType) {
			NewCategorical(c(g, dt, []float64{0, 0, 0, 0}, 2, 2)).LogProbLabels([]int{0, -1})
		}, []string{"probabilistic.Categorical.LogProbLabels", "-1", "(2, 2)"}},
		{"labels do not fit the batch", func(g *graph.Graph, dt tensor.DType) {
			NewCategorical(c(g, dt, []float64{0, 0, 0, 0}, 2, 2)).LogProbLabels([]int{0, 1, 1})
		}, []string{"probabilistic.Categorical.LogProbLabels", "3 labels", "(2, 2)"}},
		{"KL of MVNs of different dimensions", func(g *graph.Graph, dt tensor.DType) {
			_, _ = KL(NewMVNDiag(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 1})), NewMVNDiag(c(g, dt, []float64{0}, 1), c(g, dt, []float64{1}, 1)))
		}, []string{"KL(MultivariateNormal‖MultivariateNormal)", "(2,)", "(1,)"}},
		{"negative sample count", func(g *graph.Graph, dt tensor.DType) {
			NewNormal(c(g, dt, s(0)), c(g, dt, s(1))).Sample(tensor.NewRNG(1), -1)
		}, []string{"probabilistic.Normal.Sample", "-1"}},
		{"nil parameter", func(g *graph.Graph, dt tensor.DType) {
			NewNormal(c(g, dt, s(0)), nil)
		}, []string{"probabilistic.Normal", "nil"}},
		{"value from another graph", func(g *graph.Graph, dt tensor.DType) {
			NewNormal(c(g, dt, s(0)), c(g, dt, s(1))).LogProb(c(graph.New(), dt, s(0)))
		}, []string{"probabilistic.Normal.LogProb", "another graph"}},
	}
	for _, tc := range cases {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				requirePanicsWith(t, func() { tc.f(graph.New(), dt) }, tc.fragments...)
			})
		}
	}
}

// TestDataErrors checks that failures depending on values are errors, and
// that variables are not checked (their values change in training).
func TestDataErrors(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		_, err := NewMVNFromCovariance(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 2, 2, 1}, 2, 2))
		require.Error(t, err)
		require.True(t, errors.Is(err, tensor.ErrNotPositiveDefinite), err.Error())

		require.NotPanics(t, func() { NewNormal(c(g, dt, s(0)), v(g, dt, s(-1))) })
	}
}
