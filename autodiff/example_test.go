package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

func ExampleGrad() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 3))
	y := graph.Sum(graph.Mul(x, x), nil, false) // Σ x²
	dx := autodiff.Grad(y, x)[0]                // 2x
	fmt.Println(dx.Value().Values())
	// Output: [2 4 6]
}

func ExampleGrad_secondDerivative() {
	g := graph.New()
	x := g.Var(tensor.Scalar(tensor.Float64, 2))
	y := graph.Mul(graph.Mul(x, x), x) // x³
	d1 := autodiff.Grad(y, x)[0]       // 3x², a node
	d2 := autodiff.Grad(d1, x)[0]      // 6x
	fmt.Println(d1.Item(), d2.Item())
	// Output: 12 12
}

func ExampleValueAndGrad() {
	g := graph.New()
	w := g.Var(tensor.FromFloat64s([]float64{0.5, -1}, 2))
	x := g.Const(tensor.FromFloat64s([]float64{2, 3}, 2))
	loss := graph.Sum(graph.Mul(w, x), nil, false) // w·x
	v, grads := autodiff.ValueAndGrad(loss, w)
	fmt.Println(v, grads[0].Value().Values())
	// Output: -2 [2 3]
}

func ExampleVJP() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.Mul(x, x)                                   // (x₀², x₁²)
	u := g.Const(tensor.FromFloat64s([]float64{1, 10}, 2)) // weights of the outputs
	fmt.Println(autodiff.VJP(y, u, x)[0].Value().Values()) // uᵀ J = (2x₀, 20x₁)
	// Output: [2 40]
}

func ExampleJVP() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.Mul(x, x)
	v := g.Const(tensor.FromFloat64s([]float64{1, 0}, 2)) // move x₀ only
	jv := autodiff.JVP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{v})
	fmt.Println(jv[0].Value().Values()) // J v = (2x₀, 0)
	// Output: [2 0]
}

func ExampleHVP() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.Sum(graph.Mul(graph.Mul(x, x), x), nil, false) // Σ x³, Hessian diag(6x)
	v := g.Const(tensor.FromFloat64s([]float64{1, 1}, 2))
	hv := autodiff.HVP(y, []*graph.Node{x}, []*graph.Node{v})
	fmt.Println(hv[0].Value().Values())
	// Output: [6 12]
}

func ExampleJacobian() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.MulScalar(x, 3) // J = 3I
	fmt.Println(autodiff.Jacobian(y, x).Values())
	fmt.Println(autodiff.JacobianFwd(y, x).Values())
	// Output:
	// [3 0 0 3]
	// [3 0 0 3]
}

func ExampleHessian() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2}, 2))
	y := graph.Mul(graph.Sum(x, nil, false), graph.Sum(x, nil, false)) // (x₀ + x₁)²
	fmt.Println(autodiff.Hessian(y, x).Values())
	// Output: [2 2 2 2]
}

func ExampleGradCheck() {
	// Check the rules of an op (here Mul) at a point.
	a := tensor.FromFloat64s([]float64{1, -2, 0.5}, 3)
	b := tensor.FromFloat64s([]float64{3, 0.25, -1}, 3)
	rep, err := autodiff.GradCheck(func(xs []*graph.Node) *graph.Node {
		return graph.Mul(xs[0], xs[1])
	}, []*tensor.Tensor{a, b}, autodiff.GradCheckOptions{Seed: 1})
	fmt.Println(rep.Name, rep.Passed, err)
	for _, r := range rep.Results {
		if r.Input == 0 {
			fmt.Println(r.Mode, r.MaxRelErr < 1e-6)
		}
	}
	// Output:
	// mul true <nil>
	// vjp true
	// jvp true
	// vjp2 true
	// jvp-of-vjp true
}
