package pca_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/learn/pca"
	"github.com/gradus-ml/gradus/tensor"
)

// Two points far along (1, 1) and two close across it: the centred data's
// variance is 36/3 = 12 along (1, 1)/√2 and 0.04/3 across, so the first
// component explains 12/12.0133 = 0.99889 of it.
func ExampleFitPCA() {
	x := tensor.FromFloat64s([]float64{3, 3, -3, -3, 0.1, -0.1, -0.1, 0.1}, 4, 2)
	p, err := pca.FitPCA(x, pca.PCAOptions{Components: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("component %.4f, explained %.5f\n", p.Components.Values(), p.ExplainedVarianceRatio[0])
	z := p.Transform(x).Values()
	fmt.Printf("projections %.4f %.4f, |others| < 1e-12: %v\n", z[0], z[1], max(z[2], -z[2], z[3], -z[3]) < 1e-12)
	// Output:
	// component [0.7071 0.7071], explained 0.99889
	// projections 4.2426 -4.2426, |others| < 1e-12: true
}

// The same data under PPCA with one latent dimension: the ML covariance
// (divisor 4) has eigenvalues 9 and 0.01, so σ² = 0.01 and W = √8.99·u;
// C then equals S, tr(C⁻¹S) = 2 and the log-likelihood is
// −2·(2·log 2π + log 9 + log 0.01 + 2) = −6.5356.
func ExampleFitPPCA() {
	x := tensor.FromFloat64s([]float64{3, 3, -3, -3, 0.1, -0.1, -0.1, 0.1}, 4, 2)
	m, err := pca.FitPPCA(x, pca.PPCAOptions{Components: 1})
	if err != nil {
		panic(err)
	}
	ll, _ := m.LogLikelihood(x)
	fmt.Printf("σ² = %.4f, W = %.4f, log-likelihood %.4f\n", m.Sigma2, m.W.Values(), ll)
	// Output:
	// σ² = 0.0100, W = [2.1201 2.1201], log-likelihood -6.5356
}
