package autodiff_test

import "github.com/gradus-ml/gradus/graph"

// Cases for sq_dist, the pairwise squared distances of the GP kernels:
// between two sets, within one set (both inputs the same node, so the
// cotangents add), and through a nonlinearity for the second-order modes.
func init() {
	addCase("sq_dist", opCase{name: "(4,3) and (5,3)", inputs: trmmNormal([]int{4, 3}, []int{5, 3}),
		f: func(xs []*graph.Node) *graph.Node { return graph.SqDist(xs[0], xs[1]) }})
	addCase("sq_dist", opCase{name: "within one set (5,2)", inputs: trmmNormal([]int{5, 2}),
		f: func(xs []*graph.Node) *graph.Node { return graph.SqDist(xs[0], xs[0]) }})
	addCase("sq_dist", opCase{name: "exp(−r²/2), (3,2) and (4,2)", inputs: trmmNormal([]int{3, 2}, []int{4, 2}),
		f: func(xs []*graph.Node) *graph.Node {
			return graph.Exp(graph.MulScalar(graph.SqDist(xs[0], xs[1]), -0.5))
		}})
}
