package discriminant_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/discriminant"
	"github.com/gradus-ml/gradus/metrics"
)

// Linear discriminant analysis of the iris flowers: almost all of the
// between-class variance lies along the first Fisher direction, and the
// projection onto two dimensions keeps the species apart.
func ExampleFitLinear() {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		panic(err)
	}
	m, err := discriminant.FitLinear(x, labels, discriminant.LinearOptions{})
	if err != nil {
		panic(err)
	}
	acc, _ := metrics.Accuracy(m.Predict(x), labels)
	fmt.Printf("training accuracy %.3f\n", acc)
	fmt.Printf("explained variance ratio %.4f\n", m.ExplainedVarianceRatio)
	fmt.Println("projection shape", m.Transform(x).Shape())
	// Output:
	// training accuracy 0.980
	// explained variance ratio [0.9912 0.0088]
	// projection shape [150 2]
}

// Quadratic discriminant analysis, a covariance per species.
func ExampleFitQuadratic() {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		panic(err)
	}
	m, err := discriminant.FitQuadratic(x, labels, discriminant.QuadraticOptions{})
	if err != nil {
		panic(err)
	}
	acc, _ := metrics.Accuracy(m.Predict(x), labels)
	fmt.Printf("training accuracy %.3f\n", acc)
	// Output:
	// training accuracy 0.980
}
