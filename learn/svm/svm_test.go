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

type fixture struct {
	Binary struct {
		Decision  []float64 `json:"decision"`
		Intercept float64   `json:"intercept"`
		NSupport  int       `json:"n_support"`
	} `json:"binary"`
	Weighted struct {
		Decision []float64 `json:"decision"`
	} `json:"binary_weighted"`
	OvO struct {
		Decision [][]float64 `json:"decision"`
		Predict  []int       `json:"predict"`
	} `json:"ovo"`
	SVR struct {
		Predict   []float64 `json:"predict"`
		Intercept float64   `json:"intercept"`
		NSupport  int       `json:"n_support"`
	} `json:"svr"`
}

func load(t *testing.T) (fixture, *tensor.Tensor, []int) {
	t.Helper()
	b, err := os.ReadFile("testdata/iris_svm.json")
	require.NoError(t, err)
	var f fixture
	require.NoError(t, json.Unmarshal(b, &f))
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	return f, x, labels
}

// versicolor and virginica (labels 1 and 2).
func pair(x *tensor.Tensor, labels []int) (*tensor.Tensor, []int) {
	var idx, l []int
	for i, v := range labels {
		if v != 0 {
			idx, l = append(idx, i), append(l, v)
		}
	}
	return tensor.IndexSelect(x, 0, idx), l
}

// The binary C-SVC on versicolor vs virginica equals LIBSVM's solution
// (scikit-learn, tol 1e-10): decision values (whose sign convention is the
// opposite: scikit-learn's positive class is the larger label), bias and
// number of support vectors. The duality gap certifies the optimum.
func TestBinarySVCMatchesLIBSVM(t *testing.T) {
	f, x, labels := load(t)
	xb, lb := pair(x, labels)
	m, err := svm.FitSVC(context.Background(), xb, lb, svm.SVCOptions{Kernel: kernel.NewRBF(1), C: 1, Tol: 1e-8})
	require.NoError(t, err)
	require.Len(t, m.Machines, 1)
	b := m.Machines[0]
	assert.True(t, b.Converged)
	dec := b.Decision(xb).Values()
	for i, want := range f.Binary.Decision {
		assert.InDelta(t, -want, dec[i], 1e-6, "row %d", i)
	}
	assert.InDelta(t, -f.Binary.Intercept, b.Bias, 1e-6)
	assert.Equal(t, f.Binary.NSupport, len(b.Support))
	assert.GreaterOrEqual(t, b.Gap, -1e-9)
	assert.Less(t, b.Gap, 1e-6*b.Primal, "duality gap %g of primal %g", b.Gap, b.Primal)
	// Σ yᵢαᵢ = 0 and 0 ≤ αᵢ ≤ C.
	sum := 0.0
	for _, a := range b.DualCoef {
		sum += a
		assert.LessOrEqual(t, math.Abs(a), 1+1e-12)
	}
	assert.InDelta(t, 0, sum, 1e-9)
}

// Class weights scale C per class as LIBSVM's -wi.
func TestClassWeightsMatchLIBSVM(t *testing.T) {
	f, x, labels := load(t)
	xb, lb := pair(x, labels)
	m, err := svm.FitSVC(context.Background(), xb, lb, svm.SVCOptions{Kernel: kernel.NewRBF(1), C: 1, Tol: 1e-8, ClassWeights: map[int]float64{1: 3}})
	require.NoError(t, err)
	dec := m.Machines[0].Decision(xb).Values()
	for i, want := range f.Weighted.Decision {
		assert.InDelta(t, -want, dec[i], 1e-6, "row %d", i)
	}
}

// Three classes by one-vs-one: decision values per pair (LIBSVM's ovo
// shape and sign) and the voted predictions.
func TestOneVsOneMatchesLIBSVM(t *testing.T) {
	f, x, labels := load(t)
	m, err := svm.FitSVC(context.Background(), x, labels, svm.SVCOptions{Kernel: kernel.NewRBF(1), C: 10, Tol: 1e-8})
	require.NoError(t, err)
	require.Len(t, m.Machines, 3)
	dec := m.Decision(x)
	for i, row := range f.OvO.Decision {
		for j, want := range row {
			assert.InDelta(t, want, dec.At(i, j), 1e-5, "row %d pair %d", i, j)
		}
	}
	assert.Equal(t, f.OvO.Predict, m.Predict(x))
	assert.Less(t, m.Gap, 1e-6*m.Primal)
}

// ε-SVR of petal width on petal length against LIBSVM.
func TestSVRMatchesLIBSVM(t *testing.T) {
	f, x, _ := load(t)
	in := tensor.Slice(x, 1, 2, 3, 1).Contiguous()
	z := tensor.Slice(x, 1, 3, 4, 1).Contiguous().Values()
	m, err := svm.FitSVR(context.Background(), in, tensor.FromFloat64s(z, len(z)), svm.SVROptions{Kernel: kernel.NewRBF(1), C: 1, Epsilon: 0.1, Tol: 1e-8})
	require.NoError(t, err)
	assert.True(t, m.Converged)
	pred := m.Predict(in).Values()
	for i, want := range f.SVR.Predict {
		assert.InDelta(t, want, pred[i], 1e-6, "row %d", i)
	}
	assert.InDelta(t, f.SVR.Intercept, m.Bias, 1e-6)
	// Petal lengths repeat, and rows with equal inputs can share their
	// coefficient in many ways: the optimum's predictions are unique but
	// its number of support vectors is not (LIBSVM keeps 76 here; within a
	// few of it is the same solution).
	assert.InDelta(t, f.SVR.NSupport, len(m.Support), 3)
	sum := 0.0
	for _, b := range m.DualCoef {
		sum += b
		assert.LessOrEqual(t, math.Abs(b), 1+1e-12)
	}
	assert.InDelta(t, 0, sum, 1e-9, "Σ(α⁺ − α⁻) = 0")
	assert.Less(t, math.Abs(m.Gap), 1e-6*m.Primal)
}

// A hand-worked problem: two points x = ±1 with labels ±1 and the linear
// kernel K(a, b) = ab. The maximum-margin separator is f(x) = x (w = 1,
// b = 0); both points are support vectors with α = ½ (w = Σ αᵢyᵢxᵢ = 1),
// and primal = ½w² = ½ = Σα − ½w² = dual for any C ≥ ½.
func TestTwoPointsByHand(t *testing.T) {
	x := tensor.FromFloat64s([]float64{-1, 1}, 2, 1)
	m, err := svm.FitSVC(context.Background(), x, []int{1, 0}, svm.SVCOptions{Kernel: kernel.NewLinear(1), C: 10, Tol: 1e-12})
	require.NoError(t, err)
	b := m.Machines[0] // class 0 is positive: it sits at x = +1
	assert.InDelta(t, 0, b.Bias, 1e-12)
	assert.InDeltaSlice(t, []float64{1, -1}, b.Decision(tensor.FromFloat64s([]float64{1, -1}, 2, 1)).Values(), 1e-12)
	assert.InDelta(t, 0.5, b.Primal, 1e-12)
	assert.InDelta(t, 0.5, b.Dual, 1e-12)
	assert.Len(t, b.Support, 2)
}

func TestBadInput(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2}, 3, 1)
	_, err := svm.FitSVC(context.Background(), x, []int{0, 0, 0}, svm.SVCOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "two classes")
	_, err = svm.FitSVC(context.Background(), x, []int{0, 1}, svm.SVCOptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "3 rows but 2 labels or targets")
	_, err = svm.FitSVC(context.Background(), x, []int{0, 1, 1}, svm.SVCOptions{Kernel: kernel.NewRBF(1), C: -1})
	assert.ErrorContains(t, err, "C = -1")
	_, err = svm.FitSVR(context.Background(), x, tensor.FromFloat64s([]float64{0, math.NaN(), 1}, 3), svm.SVROptions{Kernel: kernel.NewRBF(1)})
	assert.ErrorContains(t, err, "y[1] is NaN")
}

// One against the rest on iris's petals equals scikit-learn's
// OneVsRestClassifier(SVC(kernel="rbf", gamma=0.5, C=1)): decision values
// at five points to 1e-5 and the same predictions.
func TestOneVsRestMatchesScikitLearn(t *testing.T) {
	x, labels, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	petals := tensor.Slice(x, 1, 2, 4, 1).Contiguous()
	m, err := svm.FitSVC(context.Background(), petals, labels, svm.SVCOptions{Kernel: kernel.NewRBF(1), C: 1, Tol: 1e-6, OneVsRest: true})
	require.NoError(t, err)
	require.True(t, m.OneVsRest)
	require.Len(t, m.Machines, 3)
	pts := tensor.FromFloat64s([]float64{1.5, 0.2, 4.5, 1.5, 5.0, 1.7, 6.0, 2.2, 4.9, 1.6}, 5, 2)
	want := [][]float64{{1.167063412, -1.111062218, -1.051210147}, {-1.062044943, 1.175468257, -1.138398674},
		{-1.049285057, -0.34721045, 0.348988646}, {-1.08422534, -1.927971801, 1.927171704}, {-1.042431135, 0.11415198, -0.112637995}}
	dec := m.Decision(pts)
	for i := range want {
		for j := range want[i] {
			assert.InDelta(t, want[i][j], dec.At(i, j), 1e-5, "point %d, class %d", i, j)
		}
	}
	assert.Equal(t, []int{0, 1, 2, 2, 1}, m.Predict(pts))
	assert.Equal(t, svm.Rest, m.Machines[0].Negative)
}
