package main

import (
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/mnist/mnisttest"
)

// A few Adam steps on 1,024 digits must lower the cross-entropy from its
// starting value near ln 10 ≈ 2.3.
func TestTrainingLossFalls(t *testing.T) {
	t.Parallel()
	res := mnisttest.CheckQuickRun(t, classifier, 0.6, "-epochs", "2", "-batch", "64", "-train-n", "1024", "-test-n", "200", "-max-steps", "24")
	if res.Params != 784*256+256+256*10+10 {
		t.Errorf("parameters: got %d, want 784·256+256+256·10+10 = 203530", res.Params)
	}
}

// BenchmarkTrainStep measures a training step on 128 digits.
func BenchmarkTrainStep(b *testing.B) { mnisttest.BenchmarkStep(b, classifier, 128) }
