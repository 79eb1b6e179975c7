package main

import (
	"testing"

	"github.com/gradus-ml/gradus/examples/internal/mnist"
	"github.com/gradus-ml/gradus/examples/internal/mnist/mnisttest"
)

// A few Adam steps on 512 digits must lower the cross-entropy from its
// starting value near ln 10 ≈ 2.3.
func TestTrainingLossFalls(t *testing.T) {
	o := mnist.Options{Epochs: 1, Batch: 32, LR: 3e-3, Seed: 1, TrainN: 512, TestN: 100, MaxSteps: 16}
	res := mnisttest.CheckQuickRun(t, classifier, o, 0.8)
	// conv1 16·1·3·3+16, conv2 32·16·3·3+32, linear 1568·10+10.
	if want := 160 + 4640 + 15690; res.Params != want {
		t.Errorf("parameters: got %d, want %d", res.Params, want)
	}
}

// BenchmarkTrainStep measures a training step on 128 digits.
func BenchmarkTrainStep(b *testing.B) { mnisttest.BenchmarkStep(b, classifier, 128) }
