package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// scikit-learn's LogisticRegression(C=1) on the standardised breast-cancer
// set (569 × 30) classifies about 98.8 % of the training set correctly with
// a mean log loss near 0.05; every solver here must reach the same optimum.
func TestBreastCancer(t *testing.T) {
	var losses []float64
	for _, solver := range []string{"lbfgs", "newton", "irls"} {
		t.Run(solver, func(t *testing.T) {
			res, err := run(config{L2: 1, Solver: solver, Link: "logit"}, clitest.EnvWith(t, 1, "breast_cancer"))
			require.NoError(t, err)
			assert.GreaterOrEqual(t, res.Accuracy, 0.98)
			assert.Less(t, res.MeanLogLoss, 0.07)
			assert.Len(t, res.Coef, 30)
			losses = append(losses, res.MeanLogLoss)
		})
	}
	require.Len(t, losses, 3)
	assert.InDelta(t, losses[1], losses[0], 1e-6)
	assert.InDelta(t, losses[1], losses[2], 1e-9)
}

func TestMaximumLikelihoodSeparable(t *testing.T) {
	// All 30 standardised features separate the classes: no ML estimate.
	_, err := run(config{L2: 0, Solver: "newton", Link: "logit"}, clitest.EnvWith(t, 1, "breast_cancer"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "separable")
}

func TestBayesJSON(t *testing.T) {
	env := clitest.EnvWith(t, 1, "breast_cancer")
	res, err := run(config{L2: 1, Solver: "newton", Link: "logit", Bayes: true}, env)
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"coef", "intercept", "mean_log_loss", "accuracy", "log_evidence"} {
		assert.Contains(t, m, k)
	}
	// The predictive averages over the posterior, so it is less confident
	// than the plug-in MAP on the training set: a larger log loss.
	assert.Greater(t, res.MeanLogLoss, *res.MAPLogLoss)
	st, err := os.Stat(env.Path("calibration_breast_cancer.png"))
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(1000))
}

func TestBadData(t *testing.T) {
	_, err := run(config{L2: 1, Link: "logit"}, clitest.EnvWith(t, 1, "no_such_file.csv"))
	assert.Error(t, err)
	_, err = run(config{L2: 1, Link: "probit"}, clitest.EnvWith(t, 1, "digits"))
	assert.ErrorContains(t, err, "binary labels")
}

// Multinomial logistic regression with λ = 1 fits the standardised digits
// (1,797 × 64, 10 classes) almost perfectly on the training set (scikit-learn's
// LogisticRegression(C=1) reaches about 0.999).
func TestDigits(t *testing.T) {
	res, err := run(config{L2: 1, Solver: "lbfgs", Link: "logit"}, clitest.EnvWith(t, 1, "digits"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Accuracy, 0.99)
	assert.Less(t, res.MeanLogLoss, 0.1)
	coef, ok := res.Coef.([][]float64)
	require.True(t, ok)
	assert.Len(t, coef, 10)
	assert.Len(t, coef[0], 64)
	assert.Len(t, res.Intercept, 10)
}

func TestHoldout(t *testing.T) {
	res, err := run(config{L2: 1, Solver: "newton", Link: "logit", Bayes: true, Holdout: 0.3}, clitest.EnvWith(t, 1, "breast_cancer"))
	require.NoError(t, err)
	// ⌈0.3·569⌉ = 171 held out, so the fit sees 398 samples.
	assert.Equal(t, 569, res.NumSamples)
	for _, k := range []string{"map_mean_log_loss", "map_accuracy", "bayes_mean_log_loss", "bayes_accuracy", "mc_mean_log_loss"} {
		assert.Contains(t, res.Test, k)
	}
	assert.Greater(t, res.Test["bayes_accuracy"], 0.9)
}

// Through the cli: the JSON object's fields and the reliability diagram.
func TestCLIWritesFieldsAndDiagram(t *testing.T) {
	t.Parallel()
	clitest.Check[map[string]any](t, program(), clitest.Expect{Fields: []string{"coef", "intercept", "mean_log_loss", "accuracy", "log_evidence", "map_accuracy", "calibration_png", "test"}, Pictures: []string{"calibration_breast_cancer.png"}},
		"-bayes", "-solver", "newton", "-holdout", "0.3")
	clitest.Fails(t, program(), 2, "-link", "cauchit")
}
