package logreg_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/probabilistic/logreg"
	"github.com/gradus-ml/gradus/tensor"
)

// Two points x = ±1 with labels 1 and 0 and λ = 1, without an intercept:
// the optimum solves w = 2σ(−w).
func ExampleFitRegression() {
	x := tensor.FromFloat64s([]float64{1, -1}, 2, 1)
	m, err := logreg.FitRegression(context.Background(), x, []int{1, 0}, logreg.RegressionOptions{L2: 1, Solver: logreg.Newton, NoIntercept: true})
	if err != nil {
		panic(err)
	}
	fmt.Printf("w = %.6f, P(y=1 | x=1) = %.4f\n", m.Coef[0][0], m.PredictProba(x).At(0, 1))
	// Output: w = 0.674832, P(y=1 | x=1) = 0.6626
}

// The Laplace approximation of Bayesian logistic regression, with the prior
// precision chosen by maximising the evidence.
func ExampleFitLaplace() {
	x := tensor.FromFloat64s([]float64{-2, -1, -0.5, 0.5, 1, 2, 0.2, -0.2}, 8, 1)
	y := []int{0, 0, 1, 1, 1, 1, 0, 0}
	post, err := logreg.FitLaplace(context.Background(), x, y, logreg.LaplaceOptions{Solver: logreg.Newton})
	if err != nil {
		panic(err)
	}
	p := post.PredictProba(tensor.FromFloat64s([]float64{3}, 1, 1)).At(0, 1)
	fmt.Printf("α = %.3f, log evidence = %.3f, P(y=1 | x=3) = %.3f\n", post.Alpha, post.LogEvidence, p)
	// Output: α = 0.953, log evidence = -5.147, P(y=1 | x=3) = 0.856
}
