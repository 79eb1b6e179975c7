package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// Gradients of every mode on one small function, for checking by hand.
// At x = (1, 2) take the vector function F(x) = (x₀²·x₁, x₁³) and the
// scalar f(x) = F₀ + F₁ = x₀²x₁ + x₁³. Then
//
//	f(x) = 1·2 + 8 = 10
//	∇f   = (2x₀x₁, x₀² + 3x₁²)          = (4, 13)
//	J_F  = [[2x₀x₁, x₀²], [0, 3x₁²]]    = [[4, 1], [0, 12]]
//	uᵀJ  with u = (1, 1)                = (4, 13), the column sums (= ∇f)
//	J·v  with v = (1, 0)                = (4, 0), the first column
//	H_f  = [[2x₁, 2x₀], [2x₀, 6x₁]]     = [[4, 2], [2, 12]]
//	H·v  with v = (1, 0)                = (4, 2), the first column
//
// Reverse mode (Grad, ValueAndGrad, VJP, Jacobian) costs one sweep per
// output, forward mode (JVP, JacobianFwd) one sweep per input; HVP is
// forward over reverse, and Hessian is the Jacobian of the gradient. Each
// derivative is again a node, so any of them can be differentiated again.
func Example_everyMode() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	F := graph.Mul(graph.Square(x), graph.IndexSelect(x, 0, []int{1, 1})) // (x₀²x₁, x₁²x₁)
	f := graph.Sum(F, nil, false)

	grad := autodiff.Grad(f, x)[0]
	value, grads := autodiff.ValueAndGrad(f, x)
	u := g.Const(tensor.FromFloat64s([]float64{1, 1}, 2))
	vjp := autodiff.VJP(F, u, x)[0]
	v := g.Const(tensor.FromFloat64s([]float64{1, 0}, 2))
	jvp := autodiff.JVP([]*graph.Node{F}, []*graph.Node{x}, []*graph.Node{v})[0]
	hvp := autodiff.HVP(f, []*graph.Node{x}, []*graph.Node{v})[0]

	fmt.Println("Grad        ", grad.Value().Values())
	fmt.Println("ValueAndGrad", value, grads[0].Value().Values())
	fmt.Println("VJP         ", vjp.Value().Values())
	fmt.Println("JVP         ", jvp.Value().Values())
	fmt.Println("HVP         ", hvp.Value().Values())
	fmt.Println("Jacobian    ", autodiff.Jacobian(F, x).Values()) // row-major (2, 2)
	fmt.Println("JacobianFwd ", autodiff.JacobianFwd(F, x).Values())
	fmt.Println("Hessian     ", autodiff.Hessian(f, x).Values())
	// Output:
	// Grad         [4 13]
	// ValueAndGrad 10 [4 13]
	// VJP          [4 13]
	// JVP          [4 0]
	// HVP          [4 2]
	// Jacobian     [4 1 0 12]
	// JacobianFwd  [4 1 0 12]
	// Hessian      [4 2 2 12]
}
