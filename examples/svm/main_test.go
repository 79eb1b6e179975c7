package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scikit-learn 1.2's SVC(C=1, gamma="scale", tol=1e-6) on the same
// standardised breast-cancer data (examples/svm/peers/svc.py): RBF 119
// support vectors, intercept −0.235367, dual objective 59.761345, training
// accuracy 0.98770; linear 40, 0.044253, 26.525455, 0.98770.
func TestBreastCancerAgainstLIBSVM(t *testing.T) {
	for _, c := range []struct {
		kernel          string
		support         int
		bias, dual, acc float64
		out             bool
	}{
		{"rbf", 119, -0.235367, 59.761345, 0.98770, true},
		{"linear", 40, 0.044253, 26.525455, 0.98770, false},
	} {
		cfg := config{Data: "breast-cancer", Kernel: c.kernel, C: 1}
		if c.out {
			cfg.Out = t.TempDir() + "/svm.png"
		}
		res, err := run(cfg, false)
		require.NoError(t, err)
		assert.Equal(t, c.support, res.Support, c.kernel)
		assert.InDelta(t, c.bias, res.Bias, 2e-4, c.kernel)
		assert.InDelta(t, c.dual, res.Dual, 1e-4, c.kernel)
		assert.InDelta(t, c.acc, res.Accuracy, 1e-4, c.kernel)
		assert.Less(t, res.Gap, 1e-6*res.Primal, c.kernel)
		if c.out {
			assert.InDelta(t, 1.0/30, res.Gamma, 1e-12, "scale: the data are standardised")
			st, err := os.Stat(cfg.Out)
			require.NoError(t, err)
			assert.Greater(t, st.Size(), int64(10000))
		}
	}
}

// scikit-learn's SVC(kernel="rbf", gamma=0.5, C=1) on the two petal
// features of iris scores 0.9667 on the training set with 34 support
// vectors.
func TestIris(t *testing.T) {
	res, err := run(config{Data: "iris", Kernel: "rbf", C: 1, Gamma: 0.5, Out: t.TempDir() + "/svm.png"}, false)
	require.NoError(t, err)
	assert.InDelta(t, 0.9667, res.Accuracy, 1e-3)
	assert.Equal(t, 34, res.Support)
	assert.Less(t, res.Gap, 1e-5*res.Primal)
}

// ν-SVC with ν = 0.2 against scikit-learn's NuSVC (peers/svc.py): 140
// support vectors, intercept −0.299520, training accuracy 0.98594, and
// C = 1/r = 0.573144, the largest |dual coefficient| (a bounded SV's).
func TestNuSVCAgainstLIBSVM(t *testing.T) {
	res, err := run(config{Data: "breast-cancer", Kernel: "rbf", Nu: 0.2}, false)
	require.NoError(t, err)
	assert.Equal(t, 140, res.Support)
	assert.InDelta(t, -0.299520, res.Bias, 2e-5)
	assert.InDelta(t, 0.98594, res.Accuracy, 1e-4)
	assert.InDelta(t, 0.573144, res.NuC, 1e-5)
	assert.Less(t, res.Gap, 1e-6*res.Primal)
	_, err = run(config{Data: "breast-cancer", Kernel: "rbf", Nu: 1}, false)
	assert.ErrorContains(t, err, "infeasible")
	_, err = run(config{Data: "breast-cancer", Kernel: "rbf", Nu: -0.5}, false)
	assert.ErrorContains(t, err, "ν = -0.5 must be in (0, 1]")
}

func TestBadFlags(t *testing.T) {
	_, err := run(config{Data: "wine", Kernel: "rbf", C: 1}, false)
	assert.ErrorContains(t, err, `unknown -data "wine"`)
	_, err = run(config{Data: "iris", Kernel: "poly", C: 1}, false)
	assert.ErrorContains(t, err, `unknown -kernel "poly"`)
	_, err = run(config{Data: "iris", Kernel: "rbf", C: -1}, false)
	assert.Error(t, err)
}
