package svm

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/probabilistic/kernel"
	"github.com/gradus-ml/gradus/tensor"
)

// With Q rounded to float32, as LIBSVM stores it, ν-SVR reproduces
// LIBSVM's dual coefficients to 1e-6 relative, where the float64 problem's
// optimum lies up to 3e-5 away (TestNuSVRMatchesLIBSVM): the solver's
// working sets, steps, shrinking and ρ are LIBSVM's.
func TestNuSVRTakesLIBSVMSteps(t *testing.T) {
	b, err := os.ReadFile("testdata/iris_svm.json")
	require.NoError(t, err)
	var f struct {
		SVR struct {
			Rows     []int     `json:"rows"`
			Support  []int     `json:"support"`
			DualCoef []float64 `json:"dual_coef"`
		} `json:"nu_svr"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	x, _, err := data.Classes("sklearn/iris.csv", "target")
	require.NoError(t, err)
	x = tensor.IndexSelect(x, 0, f.SVR.Rows)
	in := tensor.Slice(x, 1, 0, 3, 1).Contiguous()
	z := tensor.Slice(x, 1, 3, 4, 1).Contiguous().Values()
	m, err := FitNuSVR(context.Background(), in, tensor.FromFloat64s(z, len(z)), NuSVROptions{Kernel: kernel.NewRBF(0.5), C: 2, Nu: 0.4, Tol: 1e-10, float32Q: true})
	require.NoError(t, err)
	require.ElementsMatch(t, f.SVR.Support, m.Support)
	want := map[int]float64{}
	for k, i := range f.SVR.Support {
		want[i] = f.SVR.DualCoef[k]
	}
	for k, i := range m.Support {
		assert.InDelta(t, want[i], m.DualCoef[k], 1e-6*math.Max(1, math.Abs(want[i])), "row %d", i)
	}
}

// Shrinking leaves out most variables on breast cancer (C-SVC with C = 10
// and ν-SVC with ν = 0.05, both RBF with γ = "scale") yet ends at the same
// α and ρ as the solver without it, to the tolerance's effect.
func TestShrinkingShrinksAndAgrees(t *testing.T) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	n := len(labels)
	y, p, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, l := range labels {
		y[i], p[i], c[i] = float64(2*l-1), -1, 10
	}
	k := kernel.NewRBF(math.Sqrt(1 / (2 * ScaleGamma(x))))
	for _, nu := range []bool{false, true} {
		alpha0 := make([]float64, n)
		pp, cc := p, c
		if nu {
			pp, cc = make([]float64, n), make([]float64, n)
			half := [2]float64{0.05 * float64(n) / 2, 0.05 * float64(n) / 2}
			for i := range n {
				s := (1 - int(y[i])) / 2
				cc[i] = 1
				alpha0[i] = min(1, half[s])
				half[s] -= alpha0[i]
			}
		}
		var sols [2]solution
		for k2, shrink := range []bool{true, false} {
			q, err := newSVCQ(k, x.Cast(tensor.Float64), y, 100<<20, false)
			require.NoError(t, err)
			sols[k2] = solve(q, pp, y, cc, alpha0, solveOptions{eps: 1e-8, maxIter: 1e7, nu: nu, shrink: shrink})
			require.True(t, sols[k2].converged)
		}
		assert.Less(t, sols[0].minActive, n/2, "ν %v: shrinking left %d of %d active", nu, sols[0].minActive, n)
		assert.Equal(t, n, sols[1].minActive)
		assert.InDelta(t, sols[1].rho, sols[0].rho, 1e-7, "ν %v", nu)
		for i := range n {
			assert.InDelta(t, sols[1].alpha[i], sols[0].alpha[i], 1e-5, "ν %v α[%d]", nu, i)
		}
	}
}

// Once its kernel columns are cached, a solve allocates only its own
// arrays: 212 SMO steps on breast cancer take a dozen allocations, none
// per step.
func TestSolveAllocatesNothingPerStep(t *testing.T) {
	x, labels, err := data.Classes("sklearn/breast_cancer.csv", "target")
	require.NoError(t, err)
	data.Standardise(x)
	n := len(labels)
	y, p, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, l := range labels {
		y[i], p[i], c[i] = float64(2*l-1), -1, 1
	}
	q, err := newSVCQ(kernel.NewRBF(math.Sqrt(1/(2*ScaleGamma(x)))), x, y, 100<<20, false)
	require.NoError(t, err)
	opt := solveOptions{eps: 1e-3, maxIter: 1e7}
	sol := solve(q, p, y, c, make([]float64, n), opt) // fills the cache
	require.Greater(t, sol.iterations, 200)
	allocs := testing.AllocsPerRun(3, func() { solve(q, p, y, c, make([]float64, n), opt) })
	assert.LessOrEqual(t, allocs, 15.0)
}
