package tensor

import "fmt"

func ExampleSqDist() {
	a := FromFloat64s([]float64{0, 0, 3, 4}, 2, 2) // points (0, 0) and (3, 4)
	b := FromFloat64s([]float64{0, 0, 1, 1, 3, 0}, 3, 2)
	fmt.Println(SqDist(a, b))
	// Within one set the diagonal is exactly zero.
	fmt.Println(SqDist(a, a))
	// Output:
	// [[0, 2, 9], [25, 13, 16]]
	// [[0, 25], [25, 0]]
}

func ExampleCholeskyGrad() {
	// A = [[4, 2], [2, 5]] = L·Lᵀ with L = [[2, 0], [1, 2]].
	l, err := Cholesky(FromFloat64s([]float64{4, 2, 2, 5}, 2, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	// The cotangent of A for the loss L₁₁ + L₂₁ + L₂₂ (L̄ all ones below
	// the diagonal): symmetric, the off-diagonal entries sharing ∂/∂a₂₁.
	fmt.Println(CholeskyGrad(l, FromFloat64s([]float64{1, 0, 1, 1}, 2, 2)))
	// Output:
	// [[0.1875, 0.125], [0.125, 0.25]]
}

func ExampleAddDiag() {
	k := FromFloat64s([]float64{1, 0.5, 0.5, 1}, 2, 2)
	// Noise on the diagonal of a covariance, without an identity matrix.
	fmt.Println(AddDiag(k, Scalar(Float64, 0.1)))
	fmt.Println(Diagonal(AddDiag(k, FromFloat64s([]float64{1, 2}, 2))))
	// Output:
	// [[1.1, 0.5], [0.5, 1.1]]
	// [2, 3]
}
