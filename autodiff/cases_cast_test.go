package autodiff_test

import (
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Cast cases. GradCheck differentiates by finite differences in the
// inputs' dtype, and a float64 input narrowed to float32 would make those
// differences useless (a 1e-6 step is below float32's resolution), so each
// case widens to float64 and narrows back to the input's dtype:
//   - in TestGradCheckAllOpsFloat32 both casts are real conversions
//     (float32 → float64 → float32), the pattern of a float32 model with a
//     float64 loss, and the check covers cotangents cast back to float32;
//   - in TestGradCheckAllOps (float64 inputs) both casts are identity
//     nodes, which still checks the rules' plumbing to second order.
//
// The exact float64 → float32 → float64 round trip is checked against
// hand-worked values in cast_test.go.
func init() {
	addCase("cast", opCase{name: "widen, compute, narrow", inputs: ewNormal(1, ewS34),
		f: func(xs []*graph.Node) *graph.Node {
			w := graph.Cast(xs[0], tensor.Float64)
			return graph.Cast(graph.Mul(w, graph.Sin(w)), xs[0].DType())
		}})
	addCase("cast", opCase{name: "mixed operands", inputs: ewNormal(1, ewS34, ewS4),
		f: func(xs []*graph.Node) *graph.Node {
			// A reduction in float64 of a product of the two inputs.
			a := graph.Cast(xs[0], tensor.Float64)
			b := graph.Cast(xs[1], tensor.Float64)
			return graph.Cast(graph.Sum(graph.Mul(a, graph.Exp(b)), []int{1}, false), xs[0].DType())
		}})
}
