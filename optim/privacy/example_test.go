package privacy_test

import (
	"fmt"

	"github.com/gradus-ml/gradus/optim"
	"github.com/gradus-ml/gradus/optim/privacy"
	"github.com/gradus-ml/gradus/tensor"
)

// The privacy of TensorFlow Privacy's MNIST tutorial (batches of 256 of
// 60,000 digits, σ = 1.1, 60 epochs) at δ = 1e-5, under both conversions.
// testdata/gen.py gets 3.0066 and 2.5948 by integrating the divergences.
func ExampleAccountant() {
	q, steps := 256.0/60000, 60*234
	for _, conv := range []privacy.Conversion{privacy.Mironov2017, privacy.Balle2020} {
		acc := privacy.NewAccountant(privacy.AccountantOptions{Conversion: conv})
		if err := acc.Compose(q, 1.1, steps); err != nil {
			fmt.Println(err)
			return
		}
		eps, order, _ := acc.Epsilon(1e-5)
		fmt.Printf("%s: ε = %.2f at order %g\n", conv, eps, order)
	}
	// Output:
	// Mironov 2017: ε = 3.01 at order 9
	// Balle et al. 2020: ε = 2.59 at order 8
}

// One DP-SGD step on two examples of a two-parameter model, without noise
// to show the clipping: example 0's gradient (3, 4) has norm 5 and is
// scaled to norm 1, (0.6, 0.8); example 1's (0.1, 0) is kept. SGD at rate 1
// then moves the parameters by minus their mean, (−0.35, −0.4).
func ExampleDPSGD() {
	w := tensor.Zeros(tensor.Float64, 2)
	dp := privacy.NewDPSGD(optim.NewSGD([]*tensor.Tensor{w}, optim.SGDOptions{LR: 1}),
		privacy.DPSGDOptions{Clip: 1, NoiseMultiplier: 0})
	perExample := tensor.FromFloat64s([]float64{3, 4, 0.1, 0}, 2, 2) // (batch, parameter)
	norms, err := dp.Step([]*tensor.Tensor{perExample})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("norms %.2f, parameters %.2f\n", norms, w.Float64s())
	// Output:
	// norms [5.00 0.10], parameters [-0.35 -0.40]
}

// The noise multiplier of examples/dpsgd's defaults: the smallest that
// keeps 80 steps of Poisson batches of expected size 512 out of 8,000
// examples within ε = 3.5 at δ = 1e-5.
func ExampleNoiseMultiplier() {
	q := 512.0 / 8000
	sigma, err := privacy.NoiseMultiplier(3.5, 1e-5, q, 80, privacy.AccountantOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("σ = %.3f\n", sigma)
	// Output:
	// σ = 1.161
}
