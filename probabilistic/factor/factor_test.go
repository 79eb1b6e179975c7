package factor

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

// random returns a model over cards with random log tables (seeded) on
// the given scopes.
func random(g *graph.Graph, cards []int, scopes ...[]int) Model {
	rng := tensor.NewRNG(17)
	m := Model{Cards: cards}
	for _, s := range scopes {
		shape := make([]int, len(s))
		for i, v := range s {
			shape[i] = cards[v]
		}
		m.Factors = append(m.Factors, Factor{Vars: s, Table: g.Const(rng.Normal(tensor.Float64, 0, 1, shape...))})
	}
	return m
}

// brute enumerates every assignment and returns log Z and the marginals.
func brute(m Model) (float64, [][]float64) {
	x := make([]int, len(m.Cards))
	var weights []float64
	var assigns [][]int
	for {
		lp := 0.0
		for _, f := range m.Factors {
			vals := f.Table.Value().Values()
			idx := 0
			for _, v := range f.Vars {
				idx = idx*m.Cards[v] + x[v]
			}
			lp += vals[idx]
		}
		weights = append(weights, lp)
		assigns = append(assigns, append([]int{}, x...))
		i := len(x) - 1
		for i >= 0 && x[i] == m.Cards[i]-1 {
			x[i] = 0
			i--
		}
		if i < 0 {
			break
		}
		x[i]++
	}
	mx := math.Inf(-1)
	for _, w := range weights {
		mx = math.Max(mx, w)
	}
	s := 0.0
	for _, w := range weights {
		s += math.Exp(w - mx)
	}
	logZ := mx + math.Log(s)
	marg := make([][]float64, len(m.Cards))
	for v, c := range m.Cards {
		marg[v] = make([]float64, c)
	}
	for i, w := range weights {
		p := math.Exp(w - logZ)
		for v, xv := range assigns[i] {
			marg[v][xv] += p
		}
	}
	return logZ, marg
}

func requireClose(t *testing.T, want []float64, got *graph.Node, msg string) {
	t.Helper()
	gv := got.Value().Values()
	require.Len(t, gv, len(want), msg)
	for i := range want {
		assert.InDelta(t, want[i], gv[i], 1e-10, "%s [%d]", msg, i)
	}
}

// On a tree (with factors of one, two and three variables, axes in any
// order, a variable no factor touches and a constant factor), variable
// elimination in any order and belief propagation both equal the brute
// force sums over all 2·3·2·4·2·3 assignments.
func TestTreeAgainstBruteForce(t *testing.T) {
	g := graph.New()
	m := random(g, []int{2, 3, 2, 4, 2, 3}, []int{1, 0}, []int{1, 2, 3}, []int{3}, []int{4, 3}, []int{0}, []int{})
	logZ, marg := brute(m)
	assert.InDelta(t, logZ, m.LogPartition(nil).Item(), 1e-10)
	assert.InDelta(t, logZ, m.LogPartition([]int{5, 3, 0, 4, 2, 1}).Item(), 1e-10)
	bp, err := m.BeliefPropagation()
	require.NoError(t, err)
	assert.InDelta(t, logZ, bp.LogZ.Item(), 1e-10)
	for v := range m.Cards {
		requireClose(t, marg[v], bp.Marginals[v], "BP marginal")
		requireClose(t, marg[v], m.Marginal(v), "VE marginal")
	}
}

// On a loopy graph (a 4-cycle with a chord), variable elimination is exact
// and belief propagation refuses.
func TestLoopyAgainstBruteForce(t *testing.T) {
	g := graph.New()
	m := random(g, []int{2, 3, 2, 3}, []int{0, 1}, []int{1, 2}, []int{2, 3}, []int{3, 0}, []int{0, 2})
	logZ, marg := brute(m)
	assert.InDelta(t, logZ, m.LogPartition(nil).Item(), 1e-10)
	for v := range m.Cards {
		requireClose(t, marg[v], m.Marginal(v), "VE marginal")
	}
	_, err := m.BeliefPropagation()
	require.ErrorIs(t, err, ErrCycle)
}

// log Z is differentiable in the tables: GradCheck to second order for
// variable elimination on a loopy graph and for belief propagation on a
// tree, and the gradient with respect to a table is that factor's
// marginal, so each gradient sums to 1.
func TestGradients(t *testing.T) {
	rng := tensor.NewRNG(4)
	in := []*tensor.Tensor{rng.Normal(tensor.Float64, 0, 1, 2, 3), rng.Normal(tensor.Float64, 0, 1, 3, 2), rng.Normal(tensor.Float64, 0, 1, 2, 2)}
	loopy := func(xs []*graph.Node) *graph.Node {
		m := Model{Cards: []int{2, 3, 2}, Factors: []Factor{{[]int{0, 1}, xs[0]}, {[]int{1, 2}, xs[1]}, {[]int{2, 0}, xs[2]}}}
		return m.LogPartition(nil)
	}
	rep, err := autodiff.GradCheck(loopy, in, autodiff.GradCheckOptions{Name: "factor.LogPartition", Seed: 1})
	require.NoError(t, err)
	require.True(t, rep.Passed)
	tree := func(xs []*graph.Node) *graph.Node {
		m := Model{Cards: []int{2, 3, 2}, Factors: []Factor{{[]int{0, 1}, xs[0]}, {[]int{1, 2}, xs[1]}}}
		bp, err := m.BeliefPropagation()
		if err != nil {
			panic(err)
		}
		return graph.Add(bp.LogZ, graph.Sum(graph.Square(bp.Marginals[2]), nil, false))
	}
	rep, err = autodiff.GradCheck(tree, in[:2], autodiff.GradCheckOptions{Name: "factor.BeliefPropagation", Seed: 1})
	require.NoError(t, err)
	require.True(t, rep.Passed)
	g := graph.New()
	xs := []*graph.Node{g.Var(in[0]), g.Var(in[1]), g.Var(in[2])}
	for i, gr := range autodiff.Grad(loopy(xs), xs...) {
		assert.InDelta(t, 1, graph.Sum(gr, nil, false).Item(), 1e-12, "factor %d's marginal", i)
	}
}

// Misuse panics with a *tensor.Error naming the call and the caller.
func TestMisuse(t *testing.T) {
	g := graph.New()
	bad := Model{Cards: []int{2, 3}, Factors: []Factor{{Vars: []int{0, 1}, Table: g.Const(tensor.Zeros(tensor.Float64, 2, 2))}}}
	numtest.Misuse(t, "factor.Model.LogPartition", numtest.Here(), func() { bad.LogPartition(nil) }, "cardinality 3")
	twice := Model{Cards: []int{2}, Factors: []Factor{{Vars: []int{0, 0}, Table: g.Const(tensor.Zeros(tensor.Float64, 2, 2))}}}
	numtest.Misuse(t, "factor.Model.BeliefPropagation", numtest.Here(), func() { _, _ = twice.BeliefPropagation() }, "appears twice")
	ok := Model{Cards: []int{2, 2}, Factors: []Factor{{Vars: []int{0, 1}, Table: g.Const(tensor.Zeros(tensor.Float64, 2, 2))}}}
	numtest.Misuse(t, "factor.Model.LogPartition", numtest.Here(), func() { ok.LogPartition([]int{0, 0}) }, "not a permutation")
	numtest.Misuse(t, "factor.Model.Marginal", numtest.Here(), func() { ok.Marginal(2) }, "out of range")
}
