package mixture_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/learn/mixture"
	"github.com/gradus-ml/gradus/tensor"
)

// Two tight groups on a line, {0, 0.2} and {10, 10.2}: two components of
// weight ½ each, at 0.1 and 10.1, and each point certain of its component.
func ExampleFitGaussianMixture() {
	x := tensor.FromFloat64s([]float64{0, 10, 0.2, 10.2}, 4, 1)
	m, err := mixture.FitGaussianMixture(context.Background(), x, mixture.GaussianMixtureOptions{K: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	labels := m.Predict(x)
	mu := m.Means.Values()
	fmt.Printf("weights %.2f, means %.2f and %.2f\n", m.Weights, min(mu[0], mu[1]), max(mu[0], mu[1]))
	fmt.Println("groups:", labels[0] == labels[2], labels[1] == labels[3], labels[0] != labels[1])
	// Output:
	// weights [0.50 0.50], means 0.10 and 10.10
	// groups: true true true
}

// MAP-EM with diagonal covariances: one component on four 2-D points under
// a prior centred at the origin (κ₀ = 1, ν₀ = 4, Ψ₀ = diag(2, 4)). The
// mean is pulled from x̄ = (2, 2) towards m₀ = 0 and each variance is the
// mode of its normal-inverse-gamma posterior, (Ψ₀ff + Sff + c·δf²)/10.
func ExampleFitGaussianMixture_prior() {
	x := tensor.FromFloat64s([]float64{0, 0, 2, 1, 1, 3, 5, 4}, 4, 2)
	prior := &mixture.Prior{Mean: []float64{0, 0}, Kappa: 1, Nu: 4, Scale: tensor.FromFloat64s([]float64{2, 0, 0, 4}, 2, 2)}
	m, err := mixture.FitGaussianMixture(context.Background(), x, mixture.GaussianMixtureOptions{K: 1, Covariance: mixture.Diagonal, Prior: prior})
	if err != nil {
		panic(err)
	}
	c := m.Covariances.Float64s()
	fmt.Printf("mean %.2f, variances %.2f %.2f\n", m.Means.Float64s(), c[0], c[3])
	// Output:
	// mean [1.60 1.60], variances 1.92 1.72
}
