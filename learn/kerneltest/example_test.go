package kerneltest_test

import (
	"context"
	"fmt"

	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Two samples of 40 points, the second shifted by one standard deviation:
// the permutation test rejects at the 1 % level.
func ExampleTwoSample() {
	rng := tensor.NewRNG(1)
	x := rng.Normal(tensor.Float64, 0, 1, 40, 1)
	y := rng.Normal(tensor.Float64, 1, 1, 40, 1)
	k := kernel.NewRBF(kerneltest.MedianHeuristic(x, y))
	res, err := kerneltest.TwoSample(context.Background(), x, y, kerneltest.TwoSampleOptions{Kernel: k, Estimator: kerneltest.Unbiased, Permutations: 500, Seed: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("MMD² > 0:", res.Statistic > 0, "p < 0.01:", res.PValue < 0.01)
	// Output: MMD² > 0: true p < 0.01: true
}
