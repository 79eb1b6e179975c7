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

type nuFixture struct {
	Binary struct {
		Decision  []float64 `json:"decision"`
		Intercept float64   `json:"intercept"`
		Support   []int     `json:"support"`
		DualCoef  []float64 `json:"dual_coef"`
	} `json:"nu_binary"`
	OvO struct {
		Decision [][]float64 `json:"decision"`
		Predict  []int       `json:"predict"`
	} `json:"nu_ovo"`
	SVR struct {
		Rows      []int     `json:"rows"`
		Predict   []float64 `json:"predict"`
		Intercept float64   `json:"intercept"`
		Support   []int     `json:"support"`
		DualCoef  []float64 `json:"dual_coef"`
	} `json:"nu_svr"`
}

func loadNu(t *testing.T) nuFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/iris_svm.json")
	require.NoError(t, err)
	var f nuFixture
	require.NoError(t, json.Unmarshal(b, &f))
	return f
}

// rel asserts |got − want| ≤ 1e-6·max(1, |want|).
func rel(t *testing.T, want, got float64, msg string, args ...any) {
	t.Helper()
	assert.InDelta(t, want, got, 1e-6*math.Max(1, math.Abs(want)), append([]any{msg}, args...)...)
}

// coefMap pairs support indices with their dual coefficients, scaled.
func coefMap(idx []int, coef []float64, scale float64) map[int]float64 {
	m := make(map[int]float64, len(idx))
	for k, i := range idx {
		m[i] = scale * coef[k]
	}
	return m
}

// ν-SVC on versicolor vs virginica equals LIBSVM's (scikit-learn's NuSVC,
// ν = 0.3, tol 1e-10): the same support vectors with the same dual
// coefficients, intercept and decision values (scikit-learn's signs are
// the opposite: its positive class is the larger label). The duality gap
// of the equivalent C-SVC (C = 1/r) certifies the optimum, and ν bounds
// the fractions of margin errors (from above) and support vectors (from
// below), as Schölkopf et al. (2000, New support vector algorithms) prove.
func TestNuSVCMatchesLIBSVM(t *testing.T) {
	f := loadNu(t)
	_, x, labels := load(t)
	xb, lb := pair(x, labels)
	m, err := svm.FitNuSVC(context.Background(), xb, lb, svm.NuSVCOptions{Kernel: kernel.NewRBF(1), Nu: 0.3, Tol: 1e-10})
	require.NoError(t, err)
	b := m.Machines[0]
	assert.True(t, b.Converged)
	want := coefMap(f.Binary.Support, f.Binary.DualCoef, -1)
	assert.ElementsMatch(t, f.Binary.Support, b.Support)
	for k, i := range b.Support {
		rel(t, want[i], b.DualCoef[k], "dual coefficient of row %d", i)
	}
	rel(t, -f.Binary.Intercept, b.Bias, "bias")
	dec := b.Decision(xb).Values()
	for i, w := range f.Binary.Decision {
		rel(t, -w, dec[i], "decision at row %d", i)
	}
	assert.GreaterOrEqual(t, b.Gap, -1e-9)
	assert.Less(t, b.Gap, 1e-6*b.Primal, "duality gap %g of primal %g", b.Gap, b.Primal)
	n := float64(len(lb))
	errors, sum := 0, 0.0
	for i, v := range dec {
		if y := map[bool]float64{true: 1, false: -1}[lb[i] == b.Positive]; y*v < 1-1e-6 {
			errors++
		}
	}
	for _, a := range b.DualCoef {
		sum += a
		assert.LessOrEqual(t, math.Abs(a), b.C*(1+1e-12))
	}
	assert.InDelta(t, 0, sum, 1e-9)
	assert.LessOrEqual(t, float64(errors)/n, 0.3, "fraction of margin errors")
	assert.GreaterOrEqual(t, float64(len(b.Support))/n, 0.3, "fraction of support vectors")
}

// Three classes by one-vs-one ν-SVC (ν = 0.2): decision values per pair
// and the voted predictions equal LIBSVM's.
func TestNuSVCOneVsOneMatchesLIBSVM(t *testing.T) {
	f := loadNu(t)
	_, x, labels := load(t)
	m, err := svm.FitNuSVC(context.Background(), x, labels, svm.NuSVCOptions{Kernel: kernel.NewRBF(1), Nu: 0.2, Tol: 1e-10})
	require.NoError(t, err)
	require.Len(t, m.Machines, 3)
	dec := m.Decision(x)
	for i, row := range f.OvO.Decision {
		for j, w := range row {
			rel(t, w, dec.At(i, j), "row %d pair %d", i, j)
		}
	}
	assert.Equal(t, f.OvO.Predict, m.Predict(x))
	assert.Less(t, m.Gap, 1e-6*m.Primal)
}

// ν-SVR (ν = 0.4, C = 2, γ = 2) of petal width on the other three
// measurements (the 144 rows with distinct inputs) equals LIBSVM's NuSVR: support vectors, dual coefficients, intercept and
// predictions.
// At most a fraction ν of the points lie outside the tube it found, and
// the gap of the ε-SVR with that ε certifies the optimum.
func TestNuSVRMatchesLIBSVM(t *testing.T) {
	f := loadNu(t)
	_, x, _ := load(t)
	x = tensor.IndexSelect(x, 0, f.SVR.Rows)
	in := tensor.Slice(x, 1, 0, 3, 1).Contiguous()
	z := tensor.Slice(x, 1, 3, 4, 1).Contiguous().Values()
	m, err := svm.FitNuSVR(context.Background(), in, tensor.FromFloat64s(z, len(z)), svm.NuSVROptions{Kernel: kernel.NewRBF(0.5), C: 2, Nu: 0.4, Tol: 1e-10})
	require.NoError(t, err)
	assert.True(t, m.Converged)
	assert.ElementsMatch(t, f.SVR.Support, m.Support)
	// LIBSVM stores Q in float32; K is ill-conditioned enough here that
	// this moves its coefficients by up to 3e-5 from the float64 optimum
	// (with Q rounded to float32 this solver matches them to 1e-6:
	// TestNuSVRTakesLIBSVMSteps), while predictions and intercept agree to
	// 1e-6.
	want := coefMap(f.SVR.Support, f.SVR.DualCoef, 1)
	for k, i := range m.Support {
		assert.InDelta(t, want[i], m.DualCoef[k], 1e-4*math.Max(1, math.Abs(want[i])), "dual coefficient of row %d", i)
	}
	rel(t, f.SVR.Intercept, m.Bias, "bias")
	pred := m.Predict(in).Values()
	outside := 0
	for i, w := range f.SVR.Predict {
		rel(t, w, pred[i], "prediction at row %d", i)
		if math.Abs(z[i]-pred[i]) > m.Epsilon+1e-6 {
			outside++
		}
	}
	assert.Greater(t, m.Epsilon, 0.0)
	assert.LessOrEqual(t, float64(outside)/float64(len(z)), 0.4)
	assert.Less(t, math.Abs(m.Gap), 1e-6*m.Primal)
}

func TestNuBadInput(t *testing.T) {
	x := tensor.FromFloat64s([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 1)
	labels := []int{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}
	for _, nu := range []float64{-0.1, 1.5, math.NaN()} {
		_, err := svm.FitNuSVC(context.Background(), x, labels, svm.NuSVCOptions{Kernel: kernel.NewRBF(1), Nu: nu})
		assert.ErrorContains(t, err, "svm.FitNuSVC: ν = ")
		assert.ErrorContains(t, err, "must be in (0, 1]")
		_, err = svm.FitNuSVR(context.Background(), x, tensor.Zeros(tensor.Float64, 10), svm.NuSVROptions{Kernel: kernel.NewRBF(1), Nu: nu})
		assert.ErrorContains(t, err, "svm.FitNuSVR: ν = ")
	}
	// Two rows of class 0 out of ten: ν ≤ 2·2/10 = 0.4.
	_, err := svm.FitNuSVC(context.Background(), x, labels, svm.NuSVCOptions{Kernel: kernel.NewRBF(1), Nu: 0.5})
	assert.ErrorContains(t, err, "classes 0 and 1: ν = 0.5 is infeasible: the classes have 2 and 8 rows, so ν ≤ 2·min/n = 0.4")
	_, err = svm.FitNuSVC(context.Background(), x, labels, svm.NuSVCOptions{Kernel: kernel.NewRBF(1), Nu: 0.4})
	assert.NoError(t, err)
}

// Shrinking changes the solver's path, not its answer: on breast cancer
// (RBF, γ = "scale") C-SVC, ν-SVC, ε-SVR and ν-SVR with and without shrinking
// agree on every decision value to within the tolerance's effect.
func TestShrinkingAgrees(t *testing.T) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	k := kernel.NewRBF(math.Sqrt(1 / (2 * svm.ScaleGamma(x))))
	z := make([]float64, len(labels))
	for i, l := range labels {
		z[i] = float64(l)
	}
	ctx, zt := context.Background(), tensor.FromFloat64s(z, len(z))
	fits := map[string]func(noShrinking bool) ([]float64, int){
		"C-SVC": func(ns bool) ([]float64, int) {
			m, err := svm.FitSVC(ctx, x, labels, svm.SVCOptions{Kernel: k, C: 10, Tol: 1e-8, NoShrinking: ns})
			require.NoError(t, err)
			return m.Machines[0].Decision(x).Values(), m.Machines[0].Iterations
		},
		"ν-SVC": func(ns bool) ([]float64, int) {
			m, err := svm.FitNuSVC(ctx, x, labels, svm.NuSVCOptions{Kernel: k, Tol: 1e-8, NoShrinking: ns})
			require.NoError(t, err)
			return m.Machines[0].Decision(x).Values(), m.Machines[0].Iterations
		},
		"ε-SVR": func(ns bool) ([]float64, int) {
			m, err := svm.FitSVR(ctx, x, zt, svm.SVROptions{Kernel: k, C: 10, Tol: 1e-8, NoShrinking: ns})
			require.NoError(t, err)
			return m.Predict(x).Values(), m.Iterations
		},
		"ν-SVR": func(ns bool) ([]float64, int) {
			// at C = 10, ν = ½ the tube shrinks to 0 over 4-8·10⁵ steps (LIBSVM also takes ~20 s)
			m, err := svm.FitNuSVR(ctx, x, zt, svm.NuSVROptions{Kernel: k, C: 1, Nu: 0.2, Tol: 1e-8, NoShrinking: ns})
			require.NoError(t, err)
			return m.Predict(x).Values(), m.Iterations
		},
	}
	for name, fit := range fits {
		with, _ := fit(false)
		without, _ := fit(true)
		for i := range with {
			assert.InDelta(t, without[i], with[i], 1e-6, "%s row %d", name, i)
		}
	}
}

// A cache of two columns (the least it keeps) evicts on nearly every step
// and drops columns as shrinking swaps variables, yet gives the same
// machines as the 100 MB default.
func TestTinyCacheAgrees(t *testing.T) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	k := kernel.NewRBF(math.Sqrt(1 / (2 * svm.ScaleGamma(x))))
	for _, nu := range []bool{false, true} {
		fit := func(cache int) (*svm.SVC, error) {
			if nu {
				return svm.FitNuSVC(context.Background(), x, labels, svm.NuSVCOptions{Kernel: k, Nu: 0.05, Tol: 1e-8, CacheBytes: cache})
			}
			return svm.FitSVC(context.Background(), x, labels, svm.SVCOptions{Kernel: k, C: 10, Tol: 1e-8, CacheBytes: cache})
		}
		big, err := fit(0)
		require.NoError(t, err)
		small, err := fit(1)
		require.NoError(t, err)
		want, got := big.Machines[0].Decision(x).Values(), small.Machines[0].Decision(x).Values()
		for i := range want {
			assert.InDelta(t, want[i], got[i], 1e-9, "ν %v row %d", nu, i)
		}
	}
}
