package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func t64(vals ...float64) *tensor.Tensor { return tensor.FromFloat64s(vals, len(vals)) }

func m64(rows, cols int, vals ...float64) *tensor.Tensor {
	return tensor.FromFloat64s(vals, rows, cols)
}

// sym returns ½(a + aᵀ), so that finite differences of a function of a
// symmetric matrix see every entry.
func sym(a *graph.Node) *graph.Node {
	return graph.MulScalar(graph.Add(a, graph.Transpose(a)), 0.5)
}

type gradCase struct {
	name   string
	inputs []*tensor.Tensor
	f      func(xs []*graph.Node) *graph.Node
}

func runGradChecks(t *testing.T, cases []gradCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := autodiff.GradCheck(tc.f, tc.inputs, autodiff.GradCheckOptions{Name: tc.name, Seed: 1})
			require.NoError(t, err)
			require.True(t, rep.Passed)
			require.False(t, math.IsNaN(rep.MaxRelErr(autodiff.ModeVJP2)), "second order checked")
		})
	}
}

// TestGradCheckLogProb checks first and second derivatives of each
// log-density with respect to its parameters and (for continuous
// distributions) its value.
func TestGradCheckLogProb(t *testing.T) {
	runGradChecks(t, []gradCase{
		{"Normal", []*tensor.Tensor{t64(0.3, -1), t64(1.2, 0.7), t64(1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewNormal(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"MVN scale_tril", []*tensor.Tensor{t64(0.3, -1), m64(2, 2, 1.2, 0, 0.4, 0.9), m64(2, 2, 1, 0.5, -0.5, 2)}, func(xs []*graph.Node) *graph.Node {
			return NewMVNFromScaleTril(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"MVN covariance", []*tensor.Tensor{t64(0.3, -1), m64(2, 2, 2, 0.5, 0.5, 1), t64(1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			d, err := NewMVNFromCovariance(xs[0], sym(xs[1]))
			if err != nil {
				panic(err)
			}
			return d.LogProb(xs[2])
		}},
		{"MVN diag", []*tensor.Tensor{t64(0.3, -1), t64(0.8, 1.3), t64(1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewMVNDiag(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Bernoulli logits", []*tensor.Tensor{t64(0.3, -2), t64(1, 0.25)}, func(xs []*graph.Node) *graph.Node {
			return NewBernoulliLogits(xs[0]).LogProb(xs[1])
		}},
		{"Bernoulli probs", []*tensor.Tensor{t64(0.3, 0.8)}, func(xs []*graph.Node) *graph.Node {
			return NewBernoulliProbs(xs[0]).LogProb(xs[0].Graph().Const(t64(1, 0)))
		}},
		{"Categorical", []*tensor.Tensor{m64(2, 3, 0.1, 0.5, -1, 2, 0, 0.3)}, func(xs []*graph.Node) *graph.Node {
			return NewCategorical(xs[0]).LogProb(xs[0].Graph().Const(t64(2, 0)))
		}},
		{"Beta", []*tensor.Tensor{t64(2, 0.7), t64(1.5, 3), t64(0.3, 0.6)}, func(xs []*graph.Node) *graph.Node {
			return NewBeta(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Gamma", []*tensor.Tensor{t64(2, 0.7), t64(1.5, 3), t64(0.3, 1.6)}, func(xs []*graph.Node) *graph.Node {
			return NewGamma(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Dirichlet", []*tensor.Tensor{t64(2, 0.7, 1.5), t64(0.2, 0.3, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewDirichlet(xs[0]).LogProb(xs[1])
		}},
		{"Laplace", []*tensor.Tensor{t64(0.3, -1), t64(1.2, 0.7), t64(1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewLaplace(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Uniform", []*tensor.Tensor{t64(-1, 0), t64(2, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewUniform(xs[0], xs[1]).LogProb(xs[0].Graph().Const(t64(0.5, 0.25)))
		}},
		{"Entropies", []*tensor.Tensor{t64(2, 0.7), t64(1.5, 3)}, func(xs []*graph.Node) *graph.Node {
			h := graph.Add(NewBeta(xs[0], xs[1]).Entropy(), NewGamma(xs[0], xs[1]).Entropy())
			return graph.Add(h, graph.Add(NewDirichlet(xs[0]).Entropy(), NewNormal(xs[0], xs[1]).Entropy()))
		}},
	})
}

// TestGradCheckKL checks each closed-form KL with respect to both
// distributions' parameters.
func TestGradCheckKL(t *testing.T) {
	kl := func(p, q Distribution) *graph.Node {
		k, err := KL(p, q)
		if err != nil {
			panic(err)
		}
		return k
	}
	runGradChecks(t, []gradCase{
		{"Normal", []*tensor.Tensor{t64(0.3, -1), t64(1.2, 0.7), t64(1, 0.5), t64(0.8, 2)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewNormal(xs[0], xs[1]), NewNormal(xs[2], xs[3]))
		}},
		{"MVN", []*tensor.Tensor{t64(0.3, -1), m64(2, 2, 1.2, 0, 0.4, 0.9), t64(1, 0.5), m64(2, 2, 2, 0.3, 0.3, 1)}, func(xs []*graph.Node) *graph.Node {
			q, err := NewMVNFromCovariance(xs[2], sym(xs[3]))
			if err != nil {
				panic(err)
			}
			return kl(NewMVNFromScaleTril(xs[0], xs[1]), q)
		}},
		{"Bernoulli", []*tensor.Tensor{t64(0.3, -2), t64(1, 0.25)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewBernoulliLogits(xs[0]), NewBernoulliLogits(xs[1]))
		}},
		{"Categorical", []*tensor.Tensor{m64(2, 3, 0.1, 0.5, -1, 2, 0, 0.3), t64(1, -0.5, 0)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewCategorical(xs[0]), NewCategorical(xs[1]))
		}},
		{"Beta", []*tensor.Tensor{t64(2, 0.7), t64(1.5, 3), t64(1.1, 2), t64(0.6, 1.4)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewBeta(xs[0], xs[1]), NewBeta(xs[2], xs[3]))
		}},
		{"Gamma", []*tensor.Tensor{t64(2, 0.7), t64(1.5, 3), t64(1.1, 2), t64(0.6, 1.4)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewGamma(xs[0], xs[1]), NewGamma(xs[2], xs[3]))
		}},
		{"Dirichlet", []*tensor.Tensor{t64(2, 0.7, 1.5), t64(1.1, 2, 0.6)}, func(xs []*graph.Node) *graph.Node {
			return kl(NewDirichlet(xs[0]), NewDirichlet(xs[1]))
		}},
	})
}

// TestGradCheckFloat32 is a float32 smoke test of the derivatives, with
// GradCheck's looser float32 tolerances.
func TestGradCheckFloat32(t *testing.T) {
	f32 := func(vals ...float64) *tensor.Tensor { return tensor.FromValues(tensor.Float32, vals, len(vals)) }
	cases := []gradCase{
		{"Normal LogProb", []*tensor.Tensor{f32(0.3, -1), f32(1.2, 0.7), f32(1, 0.5)}, func(xs []*graph.Node) *graph.Node {
			return NewNormal(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Gamma LogProb", []*tensor.Tensor{f32(2, 0.7), f32(1.5, 3), f32(0.3, 1.6)}, func(xs []*graph.Node) *graph.Node {
			return NewGamma(xs[0], xs[1]).LogProb(xs[2])
		}},
		{"Dirichlet KL", []*tensor.Tensor{f32(2, 0.7, 1.5), f32(1.1, 2, 0.6)}, func(xs []*graph.Node) *graph.Node {
			k, err := KL(NewDirichlet(xs[0]), NewDirichlet(xs[1]))
			if err != nil {
				panic(err)
			}
			return k
		}},
		{"StickBreaking Forward", []*tensor.Tensor{f32(0.3, -1, 0.8)}, func(xs []*graph.Node) *graph.Node {
			return StickBreaking{}.Forward(xs[0])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := autodiff.GradCheck(tc.f, tc.inputs, autodiff.GradCheckOptions{Name: tc.name, Seed: 1, Order: 1})
			require.NoError(t, err)
			require.True(t, rep.Passed)
		})
	}
}
