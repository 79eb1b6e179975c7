package kerneltest_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/kerneltest"
	"github.com/gradus-ml/gradus/tensor"
)

// Bad data and invalid options are errors naming the test, the sample and
// the fault.
func TestTestsRejectBadInputAndOptions(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	nan := tensor.FromFloat64s([]float64{0, 1, math.NaN(), 3}, 4, 1)
	cases := []struct {
		name, want string
		err        error
	}{
		{"two-sample NaN in y", "kerneltest.TwoSample: y[2, 0] is NaN", numtest.Err(kerneltest.TwoSample(ctx, x, nan, kerneltest.TwoSampleOptions{}))},
		{"two-sample nil x", "kerneltest.TwoSample: x is nil", numtest.Err(kerneltest.TwoSample(ctx, nil, x, kerneltest.TwoSampleOptions{}))},
		{"independence zero columns", "kerneltest.Independence: y has zero columns", numtest.Err(kerneltest.Independence(ctx, x, tensor.Zeros(tensor.Float64, 4, 0), kerneltest.IndependenceOptions{}))},
		{"two-sample negative permutations", "-1 permutations", numtest.Err(kerneltest.TwoSample(ctx, x, x, kerneltest.TwoSampleOptions{Permutations: -1}))},
		{"independence negative permutations", "-5 permutations", numtest.Err(kerneltest.Independence(ctx, x, x, kerneltest.IndependenceOptions{Permutations: -5}))},
		{"linear estimator, unequal sizes", "equal size", numtest.Err(kerneltest.TwoSample(ctx, x, tensor.FromFloat64s([]float64{1, 2}, 2, 1), kerneltest.TwoSampleOptions{Estimator: kerneltest.Linear}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid samples, identical rows or a constant column, give
// finite statistics and p-values in (0, 1].
func TestTestsOnDegenerateDataAreFinite(t *testing.T) {
	ctx := context.Background()
	same := tensor.Full(tensor.Float64, 2, 6, 2)
	constant := tensor.FromFloat64s([]float64{5, 0, 5, 1, 5, 2, 5, 4, 5, 3, 5, 7}, 6, 2)
	for name, x := range map[string]*tensor.Tensor{"identical rows": same, "constant column": constant} {
		for _, est := range []kerneltest.Estimator{kerneltest.Biased, kerneltest.Unbiased, kerneltest.Linear} {
			t.Run(name, func(t *testing.T) {
				two, err := kerneltest.TwoSample(ctx, x, same, kerneltest.TwoSampleOptions{Estimator: est, Permutations: 50})
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, "two-sample", []float64{two.Statistic, two.PValue})
				assert.True(t, two.PValue > 0 && two.PValue <= 1, "p-value %v", two.PValue)
				if est == kerneltest.Linear {
					return // the independence test has no linear estimator
				}
				ind, err := kerneltest.Independence(ctx, x, same, kerneltest.IndependenceOptions{Estimator: est, Permutations: 50})
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, "independence", []float64{ind.Statistic, ind.PValue})
			})
		}
	}
}
