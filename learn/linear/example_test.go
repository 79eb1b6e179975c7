package linear_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/linear"
	"github.com/gradus-ml/gradus/tensor"
)

// diabetesData loads scikit-learn's diabetes set (442 patients, 10
// standardised features, a disease-progression target).
func diabetesData() (*tensor.Tensor, *tensor.Tensor) {
	tab, err := data.LoadCSV("sklearn/diabetes.csv")
	if err != nil {
		panic(err)
	}
	x, _ := tab.Select("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")
	y, _ := tab.Select("target")
	return x, tensor.Reshape(y, 442)
}

// Ridge regression on the diabetes data: body-mass index (bmi) and the
// serum measurement s5 carry the largest weights.
func ExampleFitRidge() {
	x, y := diabetesData()
	m, err := linear.FitRidge(x, y, linear.RidgeOptions{Alpha: 0.1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("bmi %.1f, s5 %.1f, intercept %.2f\n", m.Coef[2], m.Coef[8], m.Intercept)
	fmt.Printf("first prediction %.1f (target %.0f)\n", m.Predict(tensor.Slice(x, 0, 0, 1, 1)).Item(), y.At(0))
	// Output:
	// bmi 489.7, s5 443.8, intercept 152.13
	// first prediction 199.8 (target 151)
}

// The lasso path on the diabetes data: every weight is zero at α_max, and
// more join (and bmi's grows) as α falls.
func ExampleFitPath() {
	x, y := diabetesData()
	p, err := linear.FitPath(context.Background(), x, y, linear.PathOptions{NumAlphas: 4, Eps: 1e-2})
	if err != nil {
		panic(err)
	}
	for k, a := range p.Alphas {
		nonzero := 0
		for _, w := range p.Coefs[k] {
			if w != 0 {
				nonzero++
			}
		}
		fmt.Printf("α = %.4f: %d non-zero weights, bmi %.1f\n", a, nonzero, p.Coefs[k][2])
	}
	// Output:
	// α = 2.1480: 0 non-zero weights, bmi 0.0
	// α = 0.4628: 4 non-zero weights, bmi 477.3
	// α = 0.0997: 7 non-zero weights, bmi 517.3
	// α = 0.0215: 8 non-zero weights, bmi 525.6
}

// Median and 90 % quantile regression of the diabetes target on bmi alone.
func ExampleFitQuantile() {
	x, y := diabetesData()
	bmi := tensor.Slice(x, 1, 2, 3, 1)
	for _, tau := range []float64{0.5, 0.9} {
		m, err := linear.FitQuantile(context.Background(), bmi, y, linear.QuantileOptions{Quantile: tau})
		if err != nil {
			panic(err)
		}
		fmt.Printf("τ = %.1f: slope %.1f, intercept %.1f\n", tau, m.Coef[0], m.Intercept)
	}
	// Output:
	// τ = 0.5: slope 1106.7, intercept 146.3
	// τ = 0.9: slope 1027.2, intercept 237.4
}

// The lasso on the diabetes data at α = 0.5 keeps four of the ten
// features and sets the others exactly to zero.
func ExampleFitLasso() {
	x, y := diabetesData()
	m, err := linear.FitLasso(context.Background(), x, y, linear.LassoOptions{Alpha: 0.5})
	if err != nil {
		panic(err)
	}
	fmt.Printf("weights %.1f\n", m.Coef)
	fmt.Printf("intercept %.2f after %d passes\n", m.Intercept, m.Iterations)
	// Output:
	// weights [0.0 0.0 471.0 136.5 0.0 0.0 -58.3 0.0 408.0 0.0]
	// intercept 152.13 after 9 passes
}
