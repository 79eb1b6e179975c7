package svm_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/learn/svm"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// With the linear kernel, the Crammer–Singer machine on iris equals
// liblinear's (scikit-learn's LinearSVC(multi_class="crammer_singer",
// fit_intercept=False), C = 1): the class weights wₘ = Σᵢ αᵢₘxᵢ, the scores
// and the predictions. Its duality gap certifies the optimum.
func TestCrammerSingerMatchesLiblinear(t *testing.T) {
	b, err := os.ReadFile("testdata/iris_svm.json")
	require.NoError(t, err)
	var f struct {
		CS struct {
			Coef     [][]float64 `json:"coef"`
			Decision [][]float64 `json:"decision"`
			Predict  []int       `json:"predict"`
		} `json:"crammer_singer"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	m, err := svm.FitCrammerSinger(context.Background(), x, labels, svm.CrammerSingerOptions{Kernel: kernel.NewLinear(1), C: 1, Tol: 1e-10})
	require.NoError(t, err)
	assert.True(t, m.Converged)
	d := x.Shape()[1]
	for c, want := range f.CS.Coef {
		w := make([]float64, d)
		for j, i := range m.Support {
			for k := range d {
				w[k] += m.Coef[j][c] * x.At(i, k)
			}
		}
		for k := range d {
			assert.InDelta(t, want[k], w[k], 1e-6, "w[%d][%d]", c, k)
		}
	}
	dec := m.Decision(x)
	for i, row := range f.CS.Decision {
		for c, want := range row {
			assert.InDelta(t, want, dec.At(i, c), 1e-6, "row %d class %d", i, c)
		}
	}
	assert.Equal(t, f.CS.Predict, m.Predict(x))
	for _, coef := range m.Coef {
		s := 0.0
		for _, a := range coef {
			s += a
		}
		assert.InDelta(t, 0, s, 1e-12, "Σₘ αᵢₘ = 0")
	}
	assert.GreaterOrEqual(t, m.Gap, -1e-9)
	assert.Less(t, m.Gap, 1e-6*m.Primal, "gap %g of primal %g", m.Gap, m.Primal)
}

// With the RBF kernel on iris (C = 10) the duality gap still certifies the
// optimum, and at least 97 % of the training flowers are classified right.
func TestCrammerSingerRBF(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	m, err := svm.FitCrammerSinger(context.Background(), x, labels, svm.CrammerSingerOptions{Kernel: kernel.NewRBF(1), C: 10, Tol: 1e-8})
	require.NoError(t, err)
	assert.True(t, m.Converged)
	assert.Less(t, math.Abs(m.Gap), 1e-6*m.Primal, "gap %g of primal %g", m.Gap, m.Primal)
	right := 0
	for i, p := range m.Predict(x) {
		if p == labels[i] {
			right++
		}
	}
	assert.GreaterOrEqual(t, float64(right)/150, 0.97)
}

func TestCrammerSingerBadInput(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2}, 3, 1)
	_, err := svm.FitCrammerSinger(context.Background(), x, []int{4, 4, 4}, svm.CrammerSingerOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "svm.FitCrammerSinger: need at least two classes, got [4]")
	_, err = svm.FitCrammerSinger(context.Background(), x, []int{0, 1, 2}, svm.CrammerSingerOptions{Kernel: kernel.NewRBF(1), C: -2})
	assert.ErrorContains(t, err, "svm.FitCrammerSinger: C = -2")
	_, err = svm.FitCrammerSinger(context.Background(), tensor.FromFloat64s([]float64{0, math.NaN(), 2}, 3, 1), []int{0, 1, 2}, svm.CrammerSingerOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "x[1, 0] is NaN")
}
