package bayeslinear_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/learn/bayeslinear"
	"github.com/gradus-ml/gradus/tensor"
)

// A line y = 1 + 2x through four points with basis (1, x), a weak prior
// (α = 10⁻⁶) and precise noise (β = 10⁶): the posterior mean is the
// least-squares fit, (1, 2).
func ExampleFitRegression() {
	phi := tensor.FromFloat64s([]float64{1, 0, 1, 1, 1, 2, 1, 3}, 4, 2)
	y := tensor.FromFloat64s([]float64{1, 3, 5, 7}, 4)
	m, err := bayeslinear.FitRegression(phi, y, bayeslinear.RegressionOptions{Alpha: 1e-6, Beta: 1e6})
	if err != nil {
		panic(err)
	}
	mean := m.Predict(tensor.FromFloat64s([]float64{1, 4}, 1, 2)).Float64s()
	fmt.Printf("weights %.4f, prediction at x = 4: %.4f\n", m.Mean, mean[0])
	// Output: weights [1.0000 2.0000], prediction at x = 4: 9.0000
}
