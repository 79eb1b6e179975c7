package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/examples/internal/mnist/mnisttest"
)

// A few Adam steps on 512 digits read row by row must lower the
// cross-entropy from its starting value near ln 10 ≈ 2.3.
func TestMNISTTrainingLossFalls(t *testing.T) {
	t.Parallel()
	res := mnisttest.CheckQuickRun(t, classifier, 0.9, "-epochs", "1", "-batch", "32", "-lr", "1e-2", "-train-n", "1024", "-test-n", "100", "-max-steps", "30")
	// LSTM: 4·128·28 + 4·128·128 + 2·4·128; head 128·10 + 10.
	if want := 14336 + 65536 + 1024 + 1290; res.Params != want {
		t.Errorf("parameters: got %d, want %d", res.Params, want)
	}
}

// With -bidirectional, both directions' final states feed the read-out.
func TestBidirectionalMNISTTrainingLossFalls(t *testing.T) {
	t.Parallel()
	res := mnisttest.CheckQuickRun(t, newClassifier(true), 0.9, "-epochs", "1", "-batch", "32", "-lr", "1e-2", "-train-n", "1024", "-test-n", "100", "-max-steps", "30")
	// Two LSTMs: 2·(4·128·28 + 4·128·128 + 2·4·128); head 256·10 + 10.
	if want := 2*(14336+65536+1024) + 2570; res.Params != want {
		t.Errorf("parameters: got %d, want %d", res.Params, want)
	}
}

// quickSine is a short series and a small LSTM trained for steps steps.
func quickSine(steps int) sineConfig {
	return sineConfig{Points: 600, Period: 25, Noise: 0.1, Window: 20, Hidden: 16,
		Epochs: 1, Batch: 32, LR: 1e-2, MaxStep: steps}
}

// The sine forecaster's training loss falls within a few steps, and the
// JSON object has the documented keys.
func TestSineTrainingLossFalls(t *testing.T) {
	t.Parallel()
	res, err := runSine(quickSine(12), clitest.Env(t))
	require.NoError(t, err)
	require.Len(t, res.StepLoss, 12)
	first := (res.StepLoss[0] + res.StepLoss[1] + res.StepLoss[2]) / 3
	last := (res.StepLoss[9] + res.StepLoss[10] + res.StepLoss[11]) / 3
	assert.Less(t, last, 0.8*first)
	assert.FileExists(t, res.Plot)
	// The noise floor is the mean square of N(0, 0.1²) draws over 116
	// held-out targets: 0.01 give or take a few tenths.
	assert.InDelta(t, 0.01, res.NoiseFloor, 0.004)
}

// With -capture the sine forecaster trains through a captured program:
// the same step losses and held-out error, bit for bit.
func TestSineCapturedEqualsEager(t *testing.T) {
	t.Parallel()
	c := quickSine(8)
	eager, err := runSine(c, clitest.Env(t))
	require.NoError(t, err)
	c.Capture = true
	capt, err := runSine(c, clitest.Env(t))
	require.NoError(t, err)
	assert.True(t, capt.Captured)
	assert.Equal(t, eager.StepLoss, capt.StepLoss)
	assert.Equal(t, eager.HeldOutMSE, capt.HeldOutMSE)
	clitest.Fails(t, program(), 2, "-task", "mnist", "-capture")
}

// -task sine through the cli: the JSON object has the documented keys and
// the picture is written.
func TestSineProgram(t *testing.T) {
	t.Parallel()
	clitest.Check[map[string]any](t, program(), clitest.Expect{Fields: []string{"heldout_mse", "captured", "noise_floor", "persistence_mse", "train_loss_per_epoch", "seconds"}, Pictures: []string{"sine.png"}},
		"-task", "sine", "-epochs", "1", "-max-steps", "4")
	clitest.Fails(t, program(), 2, "-task", "nosuch")
}

// BenchmarkTrainStep measures a training step on 128 digits.
func BenchmarkTrainStep(b *testing.B) { mnisttest.BenchmarkStep(b, classifier, 128) }
