package autodiff_test

import (
	"math"

	"github.com/gradus-ml/gradus/graph"
)

// Gradient-check cases for the fused attention (graph/attention.go). Its
// packed output holds the attention output and each query's log-sum-exp;
// Attention returns the output, and the case through attentionPacked
// checks the log-sum-exp column's derivatives too. attention_grad, the
// reverse rule, is checked as a function of all six of its inputs (the
// packed output among them).
func init() {
	s := 1 / math.Sqrt(3)
	addCase("attention", opCase{name: "plain", inputs: linNormal([]int{2, 4, 3}, []int{2, 5, 3}, []int{2, 5, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Attention(xs[0], xs[1], xs[2], nil, s, false) }})
	addCase("attention", opCase{name: "causal, packed", inputs: linNormal([]int{4, 3}, []int{4, 3}, []int{4, 2}),
		f: func(xs []*graph.Node) *graph.Node { return attentionPacked(xs[0], xs[1], xs[2], nil, true) }})
	addCase("attention", opCase{name: "additive mask, broadcast batch", inputs: linNormal([]int{2, 3, 3}, []int{5, 3}, []int{5, 2}, []int{1, 5}),
		f: func(xs []*graph.Node) *graph.Node { return graph.Attention(xs[0], xs[1], xs[2], xs[3], s, false) }})
	addCase("attention_grad", opCase{name: "masked", inputs: linNormal([]int{3, 3}, []int{4, 3}, []int{4, 2}, []int{3, 4}, []int{3, 3}, []int{3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			p := attentionPacked(xs[0], xs[1], xs[2], xs[3], false)
			// A perturbed packed output and a cotangent, so that every
			// input of the rule varies.
			return attentionGradOf(p, graph.Add(p, graph.MulScalar(xs[4], 0.1)), xs[5])
		}})
	addCase("attention_grad", opCase{name: "causal", inputs: linNormal([]int{2, 3, 2}, []int{2, 3, 2}, []int{2, 3, 2}, []int{2, 3, 3}),
		f: func(xs []*graph.Node) *graph.Node {
			p := attentionPacked(xs[0], xs[1], xs[2], nil, true)
			return attentionGradOf(p, p, xs[3])
		}})
}

// attentionPacked returns attention's packed node (output and log-sum-exp
// columns), the input of the slice Attention returns.
func attentionPacked(q, k, v, m *graph.Node, causal bool) *graph.Node {
	return graph.Attention(q, k, v, m, 0.5, causal).Inputs()[0]
}

// attentionGradOf applies the reverse rule of attention (the
// attention_grad op that attention's VJP builds) for the operands of the
// packed attention node p to the packed output out and cotangent ct.
func attentionGradOf(p, out, ct *graph.Node) *graph.Node {
	ins := p.Inputs()
	needs := make([]bool, len(ins))
	for i := range needs {
		needs[i] = i < 3
	}
	var rule graph.Op
	var find func(n *graph.Node)
	find = func(n *graph.Node) {
		if n == nil || n.Op() == nil || rule != nil {
			return
		}
		if n.Op().Name() == "attention_grad" {
			rule = n.Op()
			return
		}
		for _, x := range n.Inputs() {
			find(x)
		}
	}
	find(p.Op().VJP(p, ct, needs)[0])
	return graph.Apply(rule, append(append([]*graph.Node{}, ins...), out, ct)...)
}
