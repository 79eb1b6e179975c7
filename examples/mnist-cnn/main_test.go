package main

import (
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/mnist/mnisttest"
)

// A few Adam steps on 512 digits must lower the cross-entropy from its
// starting value near ln 10 ≈ 2.3.
func TestTrainingLossFalls(t *testing.T) {
	t.Parallel()
	res := mnisttest.CheckQuickRun(t, classifier, 0.8, "-epochs", "1", "-batch", "32", "-lr", "3e-3", "-train-n", "512", "-test-n", "100", "-max-steps", "16")
	// conv1 16·1·3·3+16, conv2 32·16·3·3+32, linear 1568·10+10.
	if want := 160 + 4640 + 15690; res.Params != want {
		t.Errorf("parameters: got %d, want %d", res.Params, want)
	}
}

// BenchmarkTrainStep measures a training step on 128 digits.
func BenchmarkTrainStep(b *testing.B) { mnisttest.BenchmarkStep(b, classifier, 128) }
