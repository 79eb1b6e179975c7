package probabilistic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// klPairs builds one p, q pair per registered closed form, with batch
// shapes chosen to exercise broadcasting.
var klPairs = []struct {
	name string
	pq   func(g *graph.Graph, dt tensor.DType) (p, q Distribution)
}{
	{"Normal", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewNormal(c(g, dt, []float64{0, 1}), c(g, dt, []float64{1, 0.5})), NewNormal(c(g, dt, []float64{1, 0}), c(g, dt, []float64{2, 1}))
	}},
	{"MultivariateNormal", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		p, err := NewMVNFromCovariance(c(g, dt, []float64{0, 1}), c(g, dt, []float64{2, 0.5, 0.5, 1}, 2, 2))
		if err != nil {
			panic(err)
		}
		return p, NewMVNFromScaleTril(c(g, dt, []float64{1, 0}), c(g, dt, []float64{1.5, 0, 0.3, 1.2}, 2, 2))
	}},
	{"Bernoulli", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewBernoulliLogits(c(g, dt, []float64{0.4, -1})), NewBernoulliProbs(c(g, dt, []float64{0.6, 0.2}))
	}},
	{"Categorical", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewCategorical(c(g, dt, []float64{0, 1, 2, 0.5, 0.5, -1}, 2, 3)), NewCategorical(c(g, dt, []float64{1, 0, -1}, 3))
	}},
	{"Beta", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewBeta(c(g, dt, []float64{2, 0.8}), c(g, dt, []float64{3, 2})), NewBeta(c(g, dt, []float64{1.5, 3}), c(g, dt, []float64{1.5, 1}))
	}},
	{"Gamma", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewGamma(c(g, dt, []float64{2, 0.7}), c(g, dt, []float64{1, 1.5})), NewGamma(c(g, dt, []float64{3, 1}), c(g, dt, []float64{2, 1}))
	}},
	{"Dirichlet", func(g *graph.Graph, dt tensor.DType) (Distribution, Distribution) {
		return NewDirichlet(c(g, dt, []float64{2, 3, 4})), NewDirichlet(c(g, dt, []float64{3, 2, 1.5}))
	}},
}

// TestKLMonteCarlo checks each closed form against the mean of
// log p(x) − log q(x) over 20,000 draws from p, within 4 standard errors.
func TestKLMonteCarlo(t *testing.T) {
	const n = 20000
	for i, tc := range klPairs {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New()
			p, q := tc.pq(g, tensor.Float64)
			kl, err := KL(p, q)
			require.NoError(t, err)
			x := g.Const(p.Sample(tensor.NewRNG(uint64(100+i)), n))
			diff := graph.Sub(p.LogProb(x), q.LogProb(x)).Value() // (n, batch...)
			want := kl.Value().Values()
			m := len(want)
			require.Equal(t, n*m, diff.Size())
			dv := diff.Values()
			for j := 0; j < m; j++ {
				col := make([]float64, n)
				for k := range col {
					col[k] = dv[k*m+j]
				}
				mean, se := meanSE(col)
				require.InDelta(t, mean, want[j], 4*se+1e-12, "batch element %d: closed form %g, Monte Carlo %g ± %g", j, want[j], mean, se)
				require.Greater(t, want[j], 0.0)
			}
		})
	}
}

// TestKLSelfZero checks KL(p ‖ p) = 0 in both dtypes.
func TestKLSelfZero(t *testing.T) {
	for _, tc := range klPairs {
		for _, dt := range numtest.DTypes {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := graph.New()
				p, _ := tc.pq(g, dt)
				kl, err := KL(p, p)
				require.NoError(t, err)
				require.Equal(t, p.BatchShape(), kl.Shape())
				requireValues(t, make([]float64, kl.Size()), kl, 10*numtest.Pick(dt, 2e-5, 1e-10))
			})
		}
	}
}

// TestKLValues checks closed forms against values worked out by hand.
func TestKLValues(t *testing.T) {
	for _, dt := range numtest.DTypes {
		g := graph.New()
		// KL(N(0,1) ‖ N(1,2)) = log 2 + (1 + 1)/8 − ½.
		kl, err := KL(NewNormal(c(g, dt, s(0)), c(g, dt, s(1))), NewNormal(c(g, dt, s(1)), c(g, dt, s(2))))
		require.NoError(t, err)
		requireValues(t, s(math.Ln2+0.25-0.5), kl, numtest.Pick(dt, 2e-5, 1e-10))
		// MVN with diagonal covariances: the sum of the univariate KLs.
		kl, err = KL(NewMVNDiag(c(g, dt, []float64{0, 0}), c(g, dt, []float64{1, 1})), NewMVNDiag(c(g, dt, []float64{1, 0}), c(g, dt, []float64{2, 1})))
		require.NoError(t, err)
		requireValues(t, s(math.Ln2+0.25-0.5), kl, numtest.Pick(dt, 2e-5, 1e-10))
		// KL(Bernoulli(½) ‖ Bernoulli(¼)) = ½log2 + ½log(2/3).
		kl, err = KL(NewBernoulliProbs(c(g, dt, s(0.5))), NewBernoulliProbs(c(g, dt, s(0.25))))
		require.NoError(t, err)
		requireValues(t, s(0.5*math.Log(2)+0.5*math.Log(2.0/3)), kl, numtest.Pick(dt, 2e-5, 1e-10))
		// KL(Gamma(1,1) ‖ Gamma(1,2)) = KL(Exp(1) ‖ Exp(2)) = log(1/2) + 2 − 1.
		kl, err = KL(NewGamma(c(g, dt, s(1)), c(g, dt, s(1))), NewGamma(c(g, dt, s(1)), c(g, dt, s(2))))
		require.NoError(t, err)
		requireValues(t, s(1-math.Ln2), kl, numtest.Pick(dt, 2e-5, 1e-10))
	}
}

// TestKLUnregistered checks that a pair without a closed form is an error
// naming both types, and that RegisterKL adds one.
func TestKLUnregistered(t *testing.T) {
	g := graph.New()
	dt := tensor.Float64
	p := NewNormal(c(g, dt, s(0)), c(g, dt, s(1)))
	q := NewLaplace(c(g, dt, s(0)), c(g, dt, s(1)))
	_, err := KL(p, q)
	require.Error(t, err)
	require.Contains(t, err.Error(), "*probabilistic.Normal")
	require.Contains(t, err.Error(), "*probabilistic.Laplace")

	type myUniform struct{ *Uniform }
	RegisterKL(func(p myUniform, q myUniform) *graph.Node {
		return graph.Log(graph.Div(q.width(), p.width())) // valid when p's support lies in q's
	})
	requirePanicsWith(t, func() {
		RegisterKL(func(p Distribution, q *Normal) *graph.Node { return nil })
	}, "probabilistic.RegisterKL", "concrete")
	u := myUniform{NewUniform(c(g, dt, s(0)), c(g, dt, s(1)))}
	w := myUniform{NewUniform(c(g, dt, s(0)), c(g, dt, s(4)))}
	kl, err := KL(u, w)
	require.NoError(t, err)
	requireValues(t, s(2*math.Ln2), kl, 1e-12)
}
