package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// fit runs the program with args and returns what it reports.
func fit(t *testing.T, args ...string) result {
	t.Helper()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"dual_objective", "primal_objective", "duality_gap", "n_support", "bias", "train_accuracy", "gamma", "plot"}, Pictures: []string{"regions.png"}},
		args...)
	return res
}

// scikit-learn 1.2's SVC(C=1, gamma="scale", tol=1e-6) on the same
// standardised breast-cancer data (examples/svm/peers/svc.py): RBF 119
// support vectors, intercept −0.235367, dual objective 59.761345, training
// accuracy 0.98770; linear 40, 0.044253, 26.525455, 0.98770.
func TestBreastCancerAgainstLIBSVM(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kernel          string
		support         int
		bias, dual, acc float64
	}{
		{"rbf", 119, -0.235367, 59.761345, 0.98770},
		{"linear", 40, 0.044253, 26.525455, 0.98770},
	} {
		res := fit(t, "-data", "breast-cancer", "-kernel", c.kernel, "-C", "1")
		assert.Equal(t, c.support, res.Support, c.kernel)
		assert.InDelta(t, c.bias, res.Bias, 2e-4, c.kernel)
		assert.InDelta(t, c.dual, res.Dual, 1e-4, c.kernel)
		assert.InDelta(t, c.acc, res.Accuracy, 1e-4, c.kernel)
		assert.Less(t, res.Gap, 1e-6*res.Primal, c.kernel)
		if c.kernel == "rbf" {
			assert.InDelta(t, 1.0/30, res.Gamma, 1e-12, "scale: the data are standardised")
		}
	}
}

// scikit-learn's SVC(kernel="rbf", gamma=0.5, C=1) on the two petal
// features of iris scores 0.9667 on the training set with 34 support
// vectors.
func TestIris(t *testing.T) {
	t.Parallel()
	res := fit(t, "-data", "iris", "-kernel", "rbf", "-C", "1", "-gamma", "0.5")
	assert.InDelta(t, 0.9667, res.Accuracy, 1e-3)
	assert.Equal(t, 34, res.Support)
	assert.Less(t, res.Gap, 1e-5*res.Primal)
}

// ν-SVC with ν = 0.2 against scikit-learn's NuSVC (peers/svc.py): 140
// support vectors, intercept −0.299520, training accuracy 0.98594, and
// C = 1/r = 0.573144, the largest |dual coefficient| (a bounded SV's).
func TestNuSVCAgainstLIBSVM(t *testing.T) {
	t.Parallel()
	res := fit(t, "-kernel", "rbf", "-nu", "0.2")
	assert.Equal(t, 140, res.Support)
	assert.InDelta(t, -0.299520, res.Bias, 2e-5)
	assert.InDelta(t, 0.98594, res.Accuracy, 1e-4)
	assert.InDelta(t, 0.573144, res.NuC, 1e-5)
	assert.Less(t, res.Gap, 1e-6*res.Primal)
	clitest.Fails(t, program(), 1, "-nu", "1")    // infeasible
	clitest.Fails(t, program(), 1, "-nu", "-0.5") // ν outside (0, 1]
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	clitest.Fails(t, program(), 2, "-data", "wine")
	clitest.Fails(t, program(), 2, "-data", "iris", "-kernel", "poly")
	clitest.Fails(t, program(), 1, "-data", "iris", "-C", "-1")
}
