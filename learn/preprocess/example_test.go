package preprocess_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/preprocess"
	"github.com/gradus-ml/gradus/tensor"
)

// Standardising the iris measurements: each column's mean and standard
// deviation, and the first flower in standard units.
func ExampleFitStandardScaler() {
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		panic(err)
	}
	s, err := preprocess.FitStandardScaler(x, preprocess.StandardScalerOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("mean %.3f\nscale %.3f\n", s.Mean, s.Scale)
	fmt.Printf("first flower %.3f\n", s.Transform(tensor.Slice(x, 0, 0, 1, 1)).Values())
	// Output:
	// mean [5.843 3.057 3.758 1.199]
	// scale [0.825 0.434 1.759 0.760]
	// first flower [-0.901 1.019 -1.340 -1.315]
}

// Degree-2 features of the iris sepal length and width, in scikit-learn's
// column order: 1, a, b, a², ab, b².
func ExampleFitPolynomialFeatures() {
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	if err != nil {
		panic(err)
	}
	sepal := tensor.Slice(tensor.Slice(x, 0, 0, 1, 1), 1, 0, 2, 1)
	p, err := preprocess.FitPolynomialFeatures(sepal, preprocess.PolynomialOptions{Degree: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("powers", p.Powers)
	fmt.Printf("first flower %.2f\n", p.Transform(sepal).Values())
	// Output:
	// powers [[0 0] [1 0] [0 1] [2 0] [1 1] [0 2]]
	// first flower [1.00 5.10 3.50 26.01 17.85 12.25]
}
