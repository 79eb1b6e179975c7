// Package factor sums out discrete variables of factor graphs in log space
// with graph ops, so log-partition functions and marginals are
// differentiable in the log-potential tables (Koller and Friedman 2009,
// "Probabilistic Graphical Models", ch. 9 and 10; Kschischang, Frey and
// Loeliger 2001, "Factor graphs and the sum-product algorithm").
//
// A Model has variables 0, …, n−1 with the cardinalities Cards and a list
// of Factors; each factor holds a table of log-potentials log φ with one
// axis per variable it touches. The distribution is
// p(x) = exp(Σ_f log φ_f(x_f)) / Z.
//
//	m := factor.Model{Cards: []int{2, 3, 2}, Factors: []factor.Factor{
//		{Vars: []int{0, 1}, Table: a}, // a (2, 3)
//		{Vars: []int{1, 2}, Table: b}, // b (3, 2)
//	}}
//	logZ := m.LogPartition(nil)    // variable elimination, any graph
//	bp, err := m.BeliefPropagation() // all marginals at once, trees only
//
// Variable elimination works on any graph at a cost exponential in the
// width of the elimination order; belief propagation computes every
// marginal in two sweeps but is exact only on trees (forests), and returns
// an error for a graph with a cycle.
package factor

import (
	"errors"
	"math"
	"slices"

	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Factor is one term of the log-density: Table has one axis per variable
// in Vars, in that order, each of that variable's cardinality.
type Factor struct {
	Vars  []int
	Table *graph.Node // log-potentials
}

// Model is a factor graph over discrete variables 0, …, len(Cards)−1.
type Model struct {
	Cards   []int // cardinality of each variable, ≥ 1
	Factors []Factor
}

// ErrCycle is returned by BeliefPropagation for a factor graph with a
// cycle, on which the sum-product algorithm is not exact.
var ErrCycle = errors.New("factor: the factor graph has a cycle; use variable elimination")

// check validates the model and returns a table to take the graph and
// dtype from.
func (m Model) check(op string) *graph.Node {
	if len(m.Factors) == 0 {
		tensor.Fail(op, "model has no factors")
	}
	for v, c := range m.Cards {
		if c < 1 {
			tensor.Fail(op, "variable %d has cardinality %d: want ≥ 1", v, c)
		}
	}
	first := m.Factors[0].Table
	for i, f := range m.Factors {
		if f.Table == nil {
			tensor.Fail(op, "factor %d has a nil table", i)
		}
		if f.Table.Graph() != first.Graph() || f.Table.DType() != first.DType() {
			tensor.Fail(op, "factor %d's table %s is in another graph or dtype than factor 0's %s", i, graph.Describe(f.Table), graph.Describe(first))
		}
		s := f.Table.Shape()
		if len(s) != len(f.Vars) {
			tensor.Fail(op, "factor %d: table %s has %d axes for %d variables %v", i, graph.Describe(f.Table), len(s), len(f.Vars), f.Vars)
		}
		for a, v := range f.Vars {
			if v < 0 || v >= len(m.Cards) {
				tensor.Fail(op, "factor %d: variable %d out of range [0, %d)", i, v, len(m.Cards))
			}
			if slices.Index(f.Vars, v) != a {
				tensor.Fail(op, "factor %d: variable %d appears twice in %v", i, v, f.Vars)
			}
			if s[a] != m.Cards[v] {
				tensor.Fail(op, "factor %d: table %s axis %d has %d entries for variable %d of cardinality %d", i, graph.Describe(f.Table), a, s[a], v, m.Cards[v])
			}
		}
	}
	return first
}

// term is a factor whose variables are kept sorted (its table's axes
// permuted to match).
type term struct {
	vars  []int
	table *graph.Node
}

func sorted(f Factor) term {
	vars := slices.Clone(f.Vars)
	slices.Sort(vars)
	perm := make([]int, len(vars))
	for i, v := range vars {
		perm[i] = slices.Index(f.Vars, v)
	}
	return term{vars, graph.Permute(f.Table, perm...)}
}

// expand reshapes t's table to have one axis per variable of scope (sorted,
// a superset of t.vars), of size 1 where t does not depend on it.
func (m Model) expand(t term, scope []int) *graph.Node {
	shape := make([]int, len(scope))
	for i, v := range scope {
		shape[i] = 1
		if slices.Contains(t.vars, v) {
			shape[i] = m.Cards[v]
		}
	}
	return graph.Reshape(t.table, shape...)
}

// combine adds the terms' tables over the union of their scopes.
func (m Model) combine(ts []term) term {
	var scope []int
	for _, t := range ts {
		for _, v := range t.vars {
			if !slices.Contains(scope, v) {
				scope = append(scope, v)
			}
		}
	}
	slices.Sort(scope)
	full := make([]int, len(scope))
	for i, v := range scope {
		full[i] = m.Cards[v]
	}
	var sum *graph.Node
	for _, t := range ts {
		e := m.expand(t, scope)
		if sum == nil {
			sum = e
		} else {
			sum = graph.Add(sum, e)
		}
	}
	return term{scope, graph.BroadcastTo(sum, full...)}
}

// sumOut returns log Σ_{x_v} exp(t) as a term without v.
func sumOut(t term, v int) term {
	a := slices.Index(t.vars, v)
	return term{slices.Delete(slices.Clone(t.vars), a, a+1), graph.LogSumExp(t.table, []int{a}, false)}
}

// eliminate sums out every variable except keep (−1: all) in the given
// order (nil: greedily, the variable whose combined scope is smallest
// first) and returns the remaining terms, plus log Cards[v] for each summed
// variable that no factor touches.
func (m Model) eliminate(order []int, keep int) ([]term, float64) {
	ts := make([]term, len(m.Factors))
	for i, f := range m.Factors {
		ts[i] = sorted(f)
	}
	done := make([]bool, len(m.Cards))
	if keep >= 0 {
		done[keep] = true
	}
	next := func() int { return m.cheapest(ts, done) }
	if order != nil {
		i := 0
		next = func() int {
			for i < len(order) && done[order[i]] {
				i++
			}
			if i == len(order) {
				return -1
			}
			return order[i]
		}
	}
	free := 0.0
	for v := next(); v >= 0; v = next() {
		done[v] = true
		var with, rest []term
		for _, t := range ts {
			if slices.Contains(t.vars, v) {
				with = append(with, t)
			} else {
				rest = append(rest, t)
			}
		}
		if len(with) == 0 {
			free += math.Log(float64(m.Cards[v]))
			continue
		}
		ts = append(rest, sumOut(m.combine(with), v))
	}
	return ts, free
}

// cheapest returns the remaining variable whose elimination builds the
// smallest table, or −1 when none remains.
func (m Model) cheapest(ts []term, done []bool) int {
	best, bestSize := -1, math.MaxInt
	for v := range m.Cards {
		if done[v] {
			continue
		}
		seen := map[int]bool{}
		size := 1
		for _, t := range ts {
			if slices.Contains(t.vars, v) {
				for _, u := range t.vars {
					if !seen[u] {
						seen[u] = true
						size *= m.Cards[u]
					}
				}
			}
		}
		if size < bestSize {
			best, bestSize = v, size
		}
	}
	return best
}

// LogPartition returns log Z = log Σ_x exp(Σ_f log φ_f(x_f)), a scalar
// node, by variable elimination in the given order (a permutation of the
// variables; nil picks greedily the variable whose summed table is
// smallest). It is differentiable in every table; the gradient with
// respect to a table is that factor's marginal. It panics with a
// *tensor.Error for a malformed model or order.
func (m Model) LogPartition(order []int) *graph.Node {
	const op = "factor.Model.LogPartition"
	first := m.check(op)
	if order != nil {
		seen := make([]bool, len(m.Cards))
		if len(order) != len(m.Cards) {
			tensor.Fail(op, "elimination order %v is not a permutation of the %d variables", order, len(m.Cards))
		}
		for _, v := range order {
			if v < 0 || v >= len(m.Cards) || seen[v] {
				tensor.Fail(op, "elimination order %v is not a permutation of the %d variables", order, len(m.Cards))
			}
			seen[v] = true
		}
	}
	ts, free := m.eliminate(order, -1)
	logZ := first.Graph().Scalar(first.DType(), free)
	for _, t := range ts {
		logZ = graph.Add(logZ, t.table)
	}
	return logZ
}

// Marginal returns p(x_v), a vector of Cards[v] probabilities, by variable
// elimination of every other variable. It panics as LogPartition does, or
// if v is out of range.
func (m Model) Marginal(v int) *graph.Node {
	const op = "factor.Model.Marginal"
	first := m.check(op)
	if v < 0 || v >= len(m.Cards) {
		tensor.Fail(op, "variable %d out of range [0, %d)", v, len(m.Cards))
	}
	ts, _ := m.eliminate(nil, v)
	zero := first.Graph().Const(tensor.Zeros(first.DType(), m.Cards[v]))
	ts = append(ts, term{[]int{v}, zero}) // so the result has v's axis even if no factor touches v
	return graph.Softmax(m.combine(ts).table, 0)
}
