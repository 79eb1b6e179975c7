package mixture_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// Two tight groups on a line, {0, 0.2} and {10, 10.2}: two components of
// weight ½ each, at 0.1 and 10.1, and each point certain of its component.
func ExampleFitGaussianMixture() {
	x := tensor.FromFloat64s([]float64{0, 10, 0.2, 10.2}, 4, 1)
	m, err := mixture.FitGaussianMixture(x, mixture.Options{K: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	labels, _ := m.Predict(x)
	mu := m.Means.Values()
	fmt.Printf("weights %.2f, means %.2f and %.2f\n", m.Weights, min(mu[0], mu[1]), max(mu[0], mu[1]))
	fmt.Println("groups:", labels[0] == labels[2], labels[1] == labels[3], labels[0] != labels[1])
	// Output:
	// weights [0.50 0.50], means 0.10 and 10.10
	// groups: true true true
}
