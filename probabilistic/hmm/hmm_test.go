package hmm

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/tensor"
)

// problem returns a K = 3, T = 5 model with normalised log-probabilities
// and emission log-likelihoods drawn at random (seeded).
func problem(g *graph.Graph, batch int) (logInit, logTrans, logEmit *graph.Node) {
	rng := tensor.NewRNG(5)
	logInit = graph.LogSoftmax(g.Const(rng.Normal(tensor.Float64, 0, 1, 3)), -1)
	logTrans = graph.LogSoftmax(g.Const(rng.Normal(tensor.Float64, 0, 1, 3, 3)), -1)
	shape := []int{5, 3}
	if batch > 0 {
		shape = []int{batch, 5, 3}
	}
	logEmit = g.Const(rng.Normal(tensor.Float64, -1, 1.5, shape...))
	return
}

// brute enumerates all K^T paths of one sequence and returns log Σ p(z, x),
// the marginals p(zₜ = k | x), the best path and its log joint.
func brute(pi, a, e []float64, t, k int) (logZ float64, marg []float64, best []int, bestLP float64) {
	z := make([]int, t)
	marg = make([]float64, t*k)
	bestLP = math.Inf(-1)
	var joints []float64
	var paths [][]int
	for {
		lp := pi[z[0]] + e[z[0]]
		for s := 1; s < t; s++ {
			lp += a[z[s-1]*k+z[s]] + e[s*k+z[s]]
		}
		joints = append(joints, lp)
		paths = append(paths, append([]int{}, z...))
		if lp > bestLP {
			bestLP, best = lp, append([]int{}, z...)
		}
		i := t - 1
		for i >= 0 && z[i] == k-1 {
			z[i] = 0
			i--
		}
		if i < 0 {
			break
		}
		z[i]++
	}
	m := math.Inf(-1)
	for _, j := range joints {
		m = math.Max(m, j)
	}
	sum := 0.0
	for _, j := range joints {
		sum += math.Exp(j - m)
	}
	logZ = m + math.Log(sum)
	for i, j := range joints {
		w := math.Exp(j - logZ)
		for s, zs := range paths[i] {
			marg[s*k+zs] += w
		}
	}
	return
}

// The forward algorithm, forward-backward marginals and Viterbi equal the
// sums and argmax over all 3⁵ = 243 paths, for one sequence and for a
// batch of two.
func TestAgainstBruteForce(t *testing.T) {
	g := graph.New()
	li, lt, le := problem(g, 2)
	ll := LogLikelihood(li, lt, le)
	marg := Marginals(li, lt, le)
	require.Equal(t, []int{2}, ll.Shape())
	require.Equal(t, []int{2, 5, 3}, marg.Shape())
	pi, a, e := li.Value().Values(), lt.Value().Values(), le.Value().Values()
	mv := marg.Value().Values()
	for b := 0; b < 2; b++ {
		eb := e[b*15 : (b+1)*15]
		logZ, want, best, bestLP := brute(pi, a, eb, 5, 3)
		assert.InDelta(t, logZ, ll.Value().Values()[b], 1e-10)
		for i := range want {
			assert.InDelta(t, want[i], mv[b*15+i], 1e-10)
		}
		path, lp := Viterbi(li, lt, g.Const(tensor.FromFloat64s(eb, 5, 3)))
		assert.Equal(t, best, path)
		assert.InDelta(t, bestLP, lp, 1e-12)
	}
}

// Gaussian emissions are the normal log densities of each observation
// under each state: log N(0.5; 1, 2²) by hand.
func TestGaussianEmissions(t *testing.T) {
	g := graph.New()
	x := g.Const(tensor.FromFloat64s([]float64{0.5, -1}, 2))
	e := GaussianEmissions(x, g.Const(tensor.FromFloat64s([]float64{1, 0}, 2)), g.Const(tensor.FromFloat64s([]float64{2, 1}, 2)))
	require.Equal(t, []int{2, 2}, e.Shape())
	want := -0.5*0.25*0.25 - math.Log(2) - 0.5*math.Log(2*math.Pi)
	assert.InDelta(t, want, e.Value().Values()[0], 1e-14)
}

// The log-likelihood's gradients in unconstrained initial, transition and
// emission parameters pass GradCheck to second order, as do the marginals'.
func TestGradCheck(t *testing.T) {
	rng := tensor.NewRNG(2)
	in := []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 3), rng.Normal(tensor.Float64, 0, 1, 3, 3),
		rng.Normal(tensor.Float64, 0, 1, 4), rng.Normal(tensor.Float64, 0, 1, 3), rng.Normal(tensor.Float64, 0, 0.3, 3)}
	f := func(xs []*graph.Node) *graph.Node {
		emit := GaussianEmissions(xs[2], xs[3], graph.Exp(xs[4]))
		return LogLikelihood(graph.LogSoftmax(xs[0], -1), graph.LogSoftmax(xs[1], -1), emit)
	}
	rep, err := autodiff.GradCheck(f, in, autodiff.GradCheckOptions{Name: "hmm.LogLikelihood", Seed: 1})
	require.NoError(t, err)
	require.True(t, rep.Passed)
	fm := func(xs []*graph.Node) *graph.Node {
		return Marginals(graph.LogSoftmax(xs[0], -1), graph.LogSoftmax(xs[1], -1), xs[2])
	}
	rep, err = autodiff.GradCheck(fm, []*tensor.Tensor{in[0], in[1], rng.Normal(tensor.Float64, 0, 1, 4, 3)},
		autodiff.GradCheckOptions{Name: "hmm.Marginals", Seed: 1, Order: 1})
	require.NoError(t, err)
	require.True(t, rep.Passed)
}

// Long sequences stay finite in log space where the probability itself
// underflows: 2000 steps of log-likelihood about −1 each.
func TestLongSequenceIsStable(t *testing.T) {
	g := graph.New()
	rng := tensor.NewRNG(3)
	li := graph.LogSoftmax(g.Const(rng.Normal(tensor.Float64, 0, 1, 2)), -1)
	lt := graph.LogSoftmax(g.Const(rng.Normal(tensor.Float64, 0, 1, 2, 2)), -1)
	le := g.Const(rng.Normal(tensor.Float64, -1, 0.1, 2000, 2))
	ll := LogLikelihood(li, lt, le).Item()
	assert.False(t, math.IsInf(ll, 0) || math.IsNaN(ll))
	assert.InDelta(t, -2000, ll, 200)
}

// Misuse panics with a *tensor.Error naming the call and the caller.
func TestMisuse(t *testing.T) {
	g := graph.New()
	li, lt, le := problem(g, 0)
	bad := g.Const(tensor.Zeros(tensor.Float64, 5, 2))
	numtest.Misuse(t, "hmm.LogLikelihood", numtest.Here(), func() { LogLikelihood(li, lt, bad) }, "K states")
	batched := g.Const(tensor.Zeros(tensor.Float64, 2, 5, 3))
	numtest.Misuse(t, "hmm.Viterbi", numtest.Here(), func() { Viterbi(li, lt, batched) }, "one sequence")
	numtest.Misuse(t, "hmm.Marginals", numtest.Here(), func() { Marginals(nil, lt, le) }, "nil operand")
}

// Vmap of the single-sequence log-likelihood and marginals over a batch
// of emission matrices equals the batched call: the recursions are made of
// ops with batching rules.
func TestVmapEqualsBatch(t *testing.T) {
	g := graph.New()
	li, lt, le := problem(g, 4)
	f := autodiff.Vmap(func(xs []*graph.Node) []*graph.Node {
		return []*graph.Node{LogLikelihood(li, lt, xs[0]), Marginals(li, lt, xs[0])}
	}, autodiff.VmapOptions{})
	got := f([]*graph.Node{le})
	assert.InDeltaSlice(t, LogLikelihood(li, lt, le).Value().Values(), got[0].Value().Values(), 1e-12)
	assert.InDeltaSlice(t, Marginals(li, lt, le).Value().Values(), got[1].Value().Values(), 1e-12)
}
