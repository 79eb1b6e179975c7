package tensor_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/tensor"
)

// The special functions behind graph's Polygamma, logreg's probit link
// and the von Mises distribution; the values agree with SciPy's
// polygamma, log_ndtr, i0 and i1 to the digits printed.
func ExamplePolygamma() {
	x := tensor.FromValues(tensor.Float64, []float64{1, 2.5}, 2)
	fmt.Printf("trigamma: %.8f\n", tensor.Polygamma(1, x).Values()) // π²/6 at 1

	z := tensor.FromValues(tensor.Float64, []float64{0, -40}, 2)
	fmt.Printf("log Φ: %.6f\n", tensor.LogNdtr(z).Values()) // finite far in the tail

	k := tensor.FromValues(tensor.Float64, []float64{1, 50}, 2)
	fmt.Printf("log I₀: %.6f\n", tensor.LogBesselI0(k).Values())
	fmt.Printf("I₁/I₀: %.6f\n", tensor.BesselI1OverI0(k).Values())
	// Output:
	// trigamma: [1.64493407 0.49035776]
	// log Φ: [-0.693147 -804.608442]
	// log I₀: [0.235914 47.127576]
	// I₁/I₀: [0.446390 0.989949]
}

// The regularised incomplete gamma function P(a, x) and its inverse; at
// a = 1 it is 1 − e⁻ˣ, with density e⁻ˣ and median log 2.
func ExampleGammaPDeriv() {
	a := tensor.FromValues(tensor.Float64, []float64{1, 1}, 2)
	x := tensor.FromValues(tensor.Float64, []float64{1, 2}, 2)
	fmt.Printf("P: %.6f\n", tensor.GammaPDeriv(a, x, 0, 0).Values())
	fmt.Printf("∂P/∂x: %.6f\n", tensor.GammaPDeriv(a, x, 0, 1).Values())
	u := tensor.FromValues(tensor.Float64, []float64{0.5, 0.5}, 2)
	fmt.Printf("P⁻¹(½): %.6f\n", tensor.GammaPInv(a, u, x).Values())
	// Output:
	// P: [0.632121 0.864665]
	// ∂P/∂x: [0.367879 0.135335]
	// P⁻¹(½): [0.693147 0.693147]
}
