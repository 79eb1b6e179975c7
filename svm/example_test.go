package svm_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/probabilistic/gp"
	"github.com/gradus-ml/gradus/svm"
	"github.com/gradus-ml/gradus/tensor"
)

// The maximum-margin line between x = −1 (class 1) and x = +1 (class 0)
// under the linear kernel is f(x) = x; the duality gap certifies it.
func ExampleFitSVC() {
	x := tensor.FromFloat64s([]float64{-1, 1}, 2, 1)
	m, err := svm.FitSVC(x, []int{1, 0}, gp.NewLinear(1), svm.Options{C: 10, Tol: 1e-12})
	if err != nil {
		panic(err)
	}
	b := m.Machines[0]
	fmt.Printf("f(0.5) = %.3f, support vectors %d, primal %.3f, dual %.3f, gap < 1e-9: %v\n",
		b.Decision(tensor.FromFloat64s([]float64{0.5}, 1, 1))[0], len(b.Support), b.Primal, b.Dual, b.Gap < 1e-9)
	fmt.Println(m.Predict(tensor.FromFloat64s([]float64{3, -0.2}, 2, 1)))
	// Output:
	// f(0.5) = 0.500, support vectors 2, primal 0.500, dual 0.500, gap < 1e-9: true
	// [0 1]
}
