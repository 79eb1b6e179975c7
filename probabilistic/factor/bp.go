package factor

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Beliefs are the results of belief propagation.
type Beliefs struct {
	LogZ      *graph.Node   // log partition function, a scalar
	Marginals []*graph.Node // p(x_v) for each variable v, (Cards[v])
}

// BeliefPropagation runs the sum-product algorithm in log space on a
// factor graph without cycles (a tree or a forest), sending each message
// once towards a root and once back (Pearl 1988, "Probabilistic Reasoning
// in Intelligent Systems"; Kschischang, Frey and Loeliger 2001), and
// returns log Z and every variable's marginal, all differentiable in the
// tables. It returns ErrCycle, and no beliefs, for a graph with a cycle
// (a loopy graph needs variable elimination or an approximate method). It
// panics with a *tensor.Error for a malformed model.
func (m Model) BeliefPropagation() (*Beliefs, error) {
	first := m.check("factor.Model.BeliefPropagation")
	n := len(m.Cards)
	// Nodes 0…n−1 are variables, n+i is factor i.
	adj := make([][]int, n+len(m.Factors))
	parent := make([]int, len(adj))
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(a int) int {
		for parent[a] != a {
			a = parent[a]
		}
		return a
	}
	for i, f := range m.Factors {
		for _, v := range f.Vars {
			a, b := root(v), root(n+i)
			if a == b {
				return nil, ErrCycle
			}
			parent[a] = b
			adj[v] = append(adj[v], n+i)
			adj[n+i] = append(adj[n+i], v)
		}
	}
	g, dt := first.Graph(), first.DType()
	msg := map[[2]int]*graph.Node{}
	// send computes the message from a to its neighbour b.
	send := func(a, b int) {
		if a < n { // variable → factor: the other factors' messages
			sum := g.Const(tensor.Zeros(dt, m.Cards[a]))
			for _, f := range adj[a] {
				if f != b {
					sum = graph.Add(sum, msg[[2]int{f, a}])
				}
			}
			msg[[2]int{a, b}] = sum
			return
		}
		f := m.Factors[a-n]
		t := f.Table
		var axes []int
		for ax, u := range f.Vars {
			if u == b {
				continue
			}
			axes = append(axes, ax)
			shape := make([]int, len(f.Vars))
			for i := range shape {
				shape[i] = 1
			}
			shape[ax] = m.Cards[u]
			t = graph.Add(t, graph.Reshape(msg[[2]int{u, a}], shape...))
		}
		if len(axes) > 0 {
			t = graph.LogSumExp(t, axes, false)
		}
		msg[[2]int{a, b}] = t
	}
	// Each component is rooted at its lowest node; a depth-first order
	// lists parents before children.
	visited := make([]bool, len(adj))
	up := make([]int, len(adj))
	var order, roots []int
	for r := range adj {
		if visited[r] {
			continue
		}
		roots = append(roots, r)
		visited[r], up[r] = true, -1
		stack := []int{r}
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			order = append(order, a)
			for _, b := range adj[a] {
				if !visited[b] {
					visited[b], up[b] = true, a
					stack = append(stack, b)
				}
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- { // leaves to roots
		if a := order[i]; up[a] >= 0 {
			send(a, up[a])
		}
	}
	for _, a := range order { // roots to leaves
		for _, b := range adj[a] {
			if b != up[a] {
				send(a, b)
			}
		}
	}
	belief := func(v int) *graph.Node {
		b := g.Const(tensor.Zeros(dt, m.Cards[v]))
		for _, f := range adj[v] {
			b = graph.Add(b, msg[[2]int{f, v}])
		}
		return b
	}
	out := &Beliefs{LogZ: g.Scalar(dt, 0), Marginals: make([]*graph.Node, n)}
	for v := range out.Marginals {
		out.Marginals[v] = graph.Softmax(belief(v), 0)
	}
	for _, r := range roots {
		if r < n {
			out.LogZ = graph.Add(out.LogZ, graph.LogSumExp(belief(r), nil, false))
		} else if len(m.Factors[r-n].Vars) == 0 { // a constant factor on its own
			out.LogZ = graph.Add(out.LogZ, m.Factors[r-n].Table)
		}
	}
	return out, nil
}
