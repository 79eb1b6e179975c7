package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// classify runs the program and checks what every run reports: the
// fields, the pictures, and a confusion matrix that agrees with the best
// model's accuracy.
func classify(t *testing.T, args ...string) (result, map[string]score) {
	t.Helper()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"models", "best", "lda_explained_variance", "confusion", "lda_plot", "confusion_plot"}, Pictures: []string{"lda.png", "confusion.png"}},
		args...)
	byName := map[string]score{}
	for _, s := range res.Models {
		byName[s.Name] = s
		assert.Greater(t, s.LogLoss, 0.0, s.Name)
	}
	require.Len(t, res.Confusion, res.Classes)
	total, right := 0, 0
	for i, row := range res.Confusion {
		for j, v := range row {
			total += v
			if i == j {
				right += v
			}
		}
	}
	assert.Equal(t, res.Test, total)
	best := byName[res.Best]
	assert.InDelta(t, best.Accuracy, float64(right)/float64(total), 1e-12, "the confusion matrix is the best model's")
	for _, s := range res.Models {
		assert.LessOrEqual(t, s.Accuracy, best.Accuracy, s.Name)
	}
	return res, byName
}

func TestIris(t *testing.T) {
	t.Parallel()
	res, m := classify(t)
	assert.Equal(t, 105, res.Train, "⌈0.3·150⌉ = 45 test rows")
	assert.Equal(t, 45, res.Test)
	require.Len(t, res.Models, 4)
	// Iris is nearly separable: scikit-learn's LDA, QDA, GaussianNB and
	// 5-NN all score 0.95-1.0 on held-out thirds.
	for _, name := range []string{"LDA", "QDA", "Gaussian naive Bayes", "5-nearest neighbours"} {
		assert.GreaterOrEqual(t, m[name].Accuracy, 0.93, name)
		assert.Less(t, m[name].LogLoss, 0.3, name)
	}
	// Two Fisher directions (3 classes − 1); the first carries about 99 %
	// of the between-class variance (scikit-learn on all of iris:
	// 0.9912, 0.0088).
	require.Len(t, res.Explained, 2)
	assert.Greater(t, res.Explained[0], 0.97)
	assert.InDelta(t, 1, res.Explained[0]+res.Explained[1], 1e-9)
}

func TestDigits(t *testing.T) {
	t.Parallel()
	res, m := classify(t, "-data", "digits", "-k", "3")
	assert.Equal(t, 540, res.Test)
	assert.Equal(t, 0.5, res.QDAReg)
	require.Len(t, res.Models, 5)
	// scikit-learn on held-out digits: LDA ≈ 0.95, k-NN ≈ 0.97,
	// MultinomialNB ≈ 0.90, GaussianNB ≈ 0.80 (its independence
	// assumption fits pixels badly).
	assert.Greater(t, m["LDA"].Accuracy, 0.92)
	assert.Greater(t, m["3-nearest neighbours"].Accuracy, 0.92)
	assert.Greater(t, m["multinomial naive Bayes"].Accuracy, 0.85)
	assert.Greater(t, m["Gaussian naive Bayes"].Accuracy, 0.7)
	assert.Greater(t, m["Gaussian naive Bayes"].LogLoss, m["LDA"].LogLoss, "naive Bayes is overconfident on pixels")
	assert.Len(t, res.Explained, 9)
}

func TestBadFlags(t *testing.T) {
	clitest.Fails(t, program(), 2, "-data", "wine")
	clitest.Fails(t, program(), 2, "-k", "0")
	clitest.Fails(t, program(), 2, "-reg", "2")
}
