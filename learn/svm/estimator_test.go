package svm_test

import (
	"context"
	"math"
	"testing"

	"github.com/gradus-ml/gradus/internal/numtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// Bad data and options come back as errors that name the fit and the fault.
func TestFitsRejectBadInput(t *testing.T) {
	ctx := context.Background()
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	nan := tensor.FromFloat64s([]float64{0, math.NaN(), 2, 3}, 4, 1)
	empty := tensor.Zeros(tensor.Float64, 4, 0)
	labels := []int{0, 0, 1, 1}
	y := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"SVC NaN", numtest.Err(svm.FitSVC(ctx, nan, labels, svm.SVCOptions{})), "svm.FitSVC: x[1, 0] is NaN"},
		{"SVC one class", numtest.Err(svm.FitSVC(ctx, x, []int{3, 3, 3, 3}, svm.SVCOptions{})), "svm.FitSVC: need at least two classes"},
		{"SVC no columns", numtest.Err(svm.FitSVC(ctx, empty, labels, svm.SVCOptions{})), "svm.FitSVC: x has zero columns"},
		{"SVC negative C", numtest.Err(svm.FitSVC(ctx, x, labels, svm.SVCOptions{C: -2})), "C = -2"},
		{"ν-SVC ν", numtest.Err(svm.FitNuSVC(ctx, x, labels, svm.NuSVCOptions{Nu: 2})), "ν = 2 must be in (0, 1]"},
		{"SVR NaN target", numtest.Err(svm.FitSVR(ctx, x, tensor.FromFloat64s([]float64{0, math.Inf(1), 0, 0}, 4), svm.SVROptions{})), "svm.FitSVR: y[1] is +Inf"},
		{"SVR ε", numtest.Err(svm.FitSVR(ctx, x, y, svm.SVROptions{Epsilon: -1})), "ε = -1"},
		{"Crammer–Singer one class", numtest.Err(svm.FitCrammerSinger(ctx, x, []int{1, 1, 1, 1}, svm.CrammerSingerOptions{})), "two classes"},
		{"kernel ridge no columns", numtest.Err(svm.FitKernelRidge(empty, y, svm.KernelRidgeOptions{})), "svm.FitKernelRidge"},
		{"linear one class", numtest.Err(svm.FitLinearSVM(ctx, x, []int{0, 0, 0, 0}, svm.LinearSVMOptions{})), "exactly two classes"},
		{"linear loss", numtest.Err(svm.FitLinearSVM(ctx, x, labels, svm.LinearSVMOptions{Loss: 7})), "Loss 7 unknown"},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// A cancelled context stops SMO before its first step: the binary machine
// comes back at its starting point (α = 0) with an error wrapping
// context.Canceled; with three classes the model is incomplete and nil.
func TestSMOStopsOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 6, 1)
	m, err := svm.FitSVC(ctx, x, []int{0, 0, 0, 1, 1, 1}, svm.SVCOptions{Kernel: kernel.NewRBF(1)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, m)
	assert.Equal(t, 0, m.Machines[0].Iterations)
	assert.Empty(t, m.Machines[0].Support)

	m, err = svm.FitSVC(ctx, x, []int{0, 0, 1, 1, 2, 2}, svm.SVCOptions{Kernel: kernel.NewRBF(1)})
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, m)

	r, err := svm.FitSVR(ctx, x, tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5}, 6), svm.SVROptions{Kernel: kernel.NewRBF(1)})
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, r)
	_, err = svm.FitCrammerSinger(ctx, x, []int{0, 0, 1, 1, 2, 2}, svm.CrammerSingerOptions{Kernel: kernel.NewRBF(1)})
	require.ErrorIs(t, err, context.Canceled)
	_, err = svm.FitLinearSVM(ctx, x, []int{0, 0, 0, 1, 1, 1}, svm.LinearSVMOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

// A class weight that is not positive and finite is an error naming it: a
// negative box made the decisions +Inf before.
func TestSVCRejectsBadClassWeights(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3}, 4, 1)
	for _, w := range []float64{-1, 0, math.Inf(1), math.NaN()} {
		_, err := svm.FitSVC(context.Background(), x, []int{0, 0, 1, 1}, svm.SVCOptions{ClassWeights: map[int]float64{1: w}})
		assert.ErrorContains(t, err, "svm.FitSVC: ClassWeights[1] =", "weight %v", w)
	}
}
