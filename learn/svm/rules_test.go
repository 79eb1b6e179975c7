package svm_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/internal/numtest"
	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// overlapping is 40 points in the plane whose two classes (and, for
// three-class fits, a third) overlap, so no solver settles in one step.
func overlapping() (x *tensor.Tensor, two, three []int, y *tensor.Tensor) {
	x = tensor.NewRNG(3).Normal(tensor.Float64, 0, 1, 40, 2)
	v := x.Values()
	noise := tensor.NewRNG(4).Normal(tensor.Float64, 0, 0.7, 40).Values()
	two, three = make([]int, 40), make([]int, 40)
	yv := make([]float64, 40)
	for i := range 40 {
		s := v[2*i] + v[2*i+1] + noise[i]
		yv[i] = s
		if s > 0 {
			two[i] = 1
		}
		three[i] = i % 3
	}
	return x, two, three, tensor.FromFloat64s(yv, 40)
}

// Every solver out of iterations returns its model so far with a
// *tensor.NotConvergedError, and that model predicts finite values.
func TestFitsOutOfIterationsReturnBestModel(t *testing.T) {
	ctx := context.Background()
	x, two, three, y := overlapping()
	rbf := kernel.NewRBF(1)
	cases := []struct {
		name, op string
		fit      func() (outputs [][]float64, err error)
	}{
		{"SVC", "svm.FitSVC", func() ([][]float64, error) {
			m, err := svm.FitSVC(ctx, x, two, svm.SVCOptions{Kernel: rbf, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Decision(x).Values()}, err
		}},
		{"SVC three classes", "svm.FitSVC", func() ([][]float64, error) {
			m, err := svm.FitSVC(ctx, x, three, svm.SVCOptions{Kernel: rbf, MaxIter: 2, Probability: true})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Decision(x).Values(), m.PredictProba(x).Values()}, err
		}},
		{"ν-SVC", "svm.FitNuSVC", func() ([][]float64, error) {
			m, err := svm.FitNuSVC(ctx, x, two, svm.NuSVCOptions{Kernel: rbf, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Decision(x).Values()}, err
		}},
		{"SVR", "svm.FitSVR", func() ([][]float64, error) {
			m, err := svm.FitSVR(ctx, x, y, svm.SVROptions{Kernel: rbf, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Predict(x).Values()}, err
		}},
		{"ν-SVR", "svm.FitNuSVR", func() ([][]float64, error) {
			m, err := svm.FitNuSVR(ctx, x, y, svm.NuSVROptions{Kernel: rbf, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Predict(x).Values()}, err
		}},
		{"Crammer–Singer", "svm.FitCrammerSinger", func() ([][]float64, error) {
			m, err := svm.FitCrammerSinger(ctx, x, three, svm.CrammerSingerOptions{Kernel: rbf, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Decision(x).Values()}, err
		}},
		{"linear, squared hinge", "svm.FitLinearSVM", func() ([][]float64, error) {
			m, err := svm.FitLinearSVM(ctx, x, two, svm.LinearSVMOptions{Loss: svm.SquaredHinge, MaxIter: 1})
			if m == nil {
				return nil, err
			}
			return [][]float64{m.Decision(x).Values()}, err
		}},
		{"Platt", "svm.FitPlatt", func() ([][]float64, error) {
			p, err := svm.FitPlatt(y, two, svm.PlattOptions{MaxIter: 1})
			return [][]float64{p.PredictProba(y).Values()}, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.fit()
			numtest.Unconverged(t, err, c.op, out...)
		})
	}
}

// Invalid hyperparameters are errors that name them, and no model.
func TestFitsRejectInvalidHyperparameters(t *testing.T) {
	ctx := context.Background()
	x, two, three, y := overlapping()
	cases := []struct {
		name, want string
		err        error
	}{
		{"SVC negative C", "C = -1 must be positive", numtest.Err(svm.FitSVC(ctx, x, two, svm.SVCOptions{C: -1}))},
		{"SVC infinite C", "C = +Inf must be positive and finite", numtest.Err(svm.FitSVC(ctx, x, two, svm.SVCOptions{C: math.Inf(1)}))},
		{"SVC negative tolerance", "tolerance -0.1", numtest.Err(svm.FitSVC(ctx, x, two, svm.SVCOptions{Tol: -0.1}))},
		{"SVC negative MaxIter", "MaxIter -1", numtest.Err(svm.FitSVC(ctx, x, two, svm.SVCOptions{MaxIter: -1}))},
		{"SVC negative class weight", "ClassWeights[1] = -2", numtest.Err(svm.FitSVC(ctx, x, two, svm.SVCOptions{ClassWeights: map[int]float64{1: -2}}))},
		{"ν-SVC ν above 1", "ν = 1.5", numtest.Err(svm.FitNuSVC(ctx, x, two, svm.NuSVCOptions{Nu: 1.5}))},
		{"SVR negative ε", "ε = -1", numtest.Err(svm.FitSVR(ctx, x, y, svm.SVROptions{Epsilon: -1}))},
		{"SVR negative cache", "CacheBytes -5", numtest.Err(svm.FitSVR(ctx, x, y, svm.SVROptions{CacheBytes: -5}))},
		{"Crammer–Singer negative C", "C = -3", numtest.Err(svm.FitCrammerSinger(ctx, x, three, svm.CrammerSingerOptions{C: -3}))},
		{"linear negative MaxIter", "MaxIter -2", numtest.Err(svm.FitLinearSVM(ctx, x, two, svm.LinearSVMOptions{MaxIter: -2}))},
		{"kernel ridge negative λ", "λ = -1", numtest.Err(svm.FitKernelRidge(x, y, svm.KernelRidgeOptions{Lambda: -1}))},
		{"Platt negative MaxIter", "negative MaxIter -1", numtest.Err(svm.FitPlatt(y, two, svm.PlattOptions{MaxIter: -1}))},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
}

// Degenerate but valid data (a constant column, duplicated points, one
// of them with both labels, every row the same) gives defined, finite
// models. The one exception is ν-SVC on identical rows, whose margin is
// zero: its C = 1/r would be infinite, so it is an error that says so.
func TestFitsOnDegenerateDataAreFinite(t *testing.T) {
	ctx := context.Background()
	constant := tensor.FromFloat64s([]float64{2.5, 0, 2.5, 3, 2.5, 1, 2.5, 4, 2.5, 0.5, 2.5, 3.5}, 6, 2)
	dup := tensor.FromFloat64s([]float64{0, 0, 0, 0, 3, 3, 3, 3, 1, 1, 1, 1}, 6, 2)
	same := tensor.Full(tensor.Float64, 2.5, 6, 2)
	labels := []int{0, 0, 1, 1, 0, 1}
	three := []int{0, 1, 2, 0, 1, 2}
	y := tensor.FromFloat64s([]float64{1, 2, 3, 1, 2, 3}, 6)
	for name, x := range map[string]*tensor.Tensor{"constant column": constant, "duplicate points": dup, "identical rows": same} {
		cases := []struct {
			name string
			fit  func() ([]float64, error)
		}{
			{"SVC", func() ([]float64, error) {
				m, err := svm.FitSVC(ctx, x, labels, svm.SVCOptions{Probability: true})
				if m == nil {
					return nil, err
				}
				return m.PredictProba(x).Values(), err
			}},
			{"ν-SVC", func() ([]float64, error) {
				m, err := svm.FitNuSVC(ctx, x, labels, svm.NuSVCOptions{})
				if m == nil {
					return nil, err
				}
				return m.Decision(x).Values(), err
			}},
			{"SVR", func() ([]float64, error) {
				m, err := svm.FitSVR(ctx, x, y, svm.SVROptions{})
				if m == nil {
					return nil, err
				}
				return m.Predict(x).Values(), err
			}},
			{"Crammer–Singer", func() ([]float64, error) {
				m, err := svm.FitCrammerSinger(ctx, x, three, svm.CrammerSingerOptions{})
				if m == nil {
					return nil, err
				}
				return m.Decision(x).Values(), err
			}},
			{"linear", func() ([]float64, error) {
				m, err := svm.FitLinearSVM(ctx, x, labels, svm.LinearSVMOptions{Loss: svm.SquaredHinge})
				if m == nil {
					return nil, err
				}
				return m.Decision(x).Values(), err
			}},
			{"kernel ridge", func() ([]float64, error) {
				m, err := svm.FitKernelRidge(x, y, svm.KernelRidgeOptions{})
				if m == nil {
					return nil, err
				}
				return m.Predict(x).Values(), err
			}},
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				out, err := c.fit()
				if name == "identical rows" && c.name == "ν-SVC" {
					assert.ErrorContains(t, err, "ν-SVC found no positive margin (r = 0)")
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				numtest.Finite(t, c.name, out)
			})
		}
	}
}
