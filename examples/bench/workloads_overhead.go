package main

import (
	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// chainLen is the number of elementwise ops in the op_overhead chain.
const chainLen = 1000

// overheadWorkload measures the fixed cost of an op: a chain of 1,000
// elementwise ops on a 1×1 tensor (alternately x·1.0001 and x+0.0001), built
// forward and differentiated backward, so the arithmetic is negligible and
// the time is the graph's and autodiff's bookkeeping. It reports the step
// time divided by 1,000, which covers each op's forward and backward.
func overheadWorkload() workload {
	return workload{
		name:  "op_overhead",
		steps: 20,
		setup: func() step {
			x0 := tensor.Full(tensor.Float32, 1, 1, 1)
			g := graph.New()
			return func() {
				g.Reset()
				x := g.Var(x0)
				y := x
				for i := range chainLen {
					if i%2 == 0 {
						y = graph.MulScalar(y, 1.0001)
					} else {
						y = graph.AddScalar(y, 0.0001)
					}
				}
				autodiff.Grad(graph.Sum(y, nil, false), x)
			}
		},
		report: func(name string, sec float64) []Result {
			return []Result{{name, "ns_per_op", sec * 1e9 / chainLen, "ns"}}
		},
	}
}
