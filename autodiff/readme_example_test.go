package autodiff_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/autodiff"
	"github.com/gradus-ml/gradus/graph"
	"github.com/gradus-ml/gradus/tensor"
)

// The ten lines in README.md: Σ x·eˣ, its gradient (1+x)·eˣ and its
// Hessian diag((2+x)·eˣ).
func Example_readme() {
	g := graph.New()
	x := g.Var(tensor.FromFloat64s([]float64{1, 2, 3}, 3))
	y := graph.Sum(graph.Mul(x, graph.Exp(x)), nil, false) // Σ x·eˣ
	dx := autodiff.Grad(y, x)[0]                           // (1+x)·eˣ
	fmt.Println(dx.Value())                                // [5.43656, 22.1672, 80.3421]
	h := autodiff.Hessian(y, x)                            // diag((2+x)·eˣ)
	fmt.Printf("%.6g\n", h.At(0, 0))                       // 8.15485
	// Output:
	// [5.43656, 22.1672, 80.3421]
	// 8.15485
}
