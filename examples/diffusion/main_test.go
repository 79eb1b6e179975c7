package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// A quicker run than -demo (128 digits in batches of 16, T = 20): the ε-prediction loss
// starts near E[ε²] = 1 (the U-Net's output layer starts at zero) and one
// epoch already lowers it; both samplers write a grid.
func TestOneEpochLowersLossAndReloads(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"train_loss_per_epoch", "test_loss_per_epoch", "steps", "sampler", "grid", "checkpoint"}, Pictures: []string{"samples.png"}, Files: []string{"unet.safetensors"}},
		"-demo", "-train-n", "128", "-test-n", "32", "-batch", "16", "-T", "20", "-samples", "2")
	require.Len(t, res.TrainLoss, 1)
	t.Logf("train %.3f, test %.3f", res.TrainLoss[0], res.TestLoss[0])
	assert.Less(t, res.TrainLoss[0], 1.0)
	assert.Less(t, res.TestLoss[0], 0.9)
	assert.Equal(t, 20, res.Steps)
	// Sampling again from the saved weights: the held-out loss (same noise
	// and time steps) is the trained model's.
	cfg := demoConfig(config{Training: cli.Training{Batch: 16, LR: 2e-3}})
	cfg.TrainN, cfg.TestN, cfg.T, cfg.Samples = 128, 32, 20, 2
	cfg.Sampler, cfg.Steps, cfg.Load = "ddim", 10, res.Checkpoint
	env := clitest.Env(t)
	again, err := run(cfg, env)
	require.NoError(t, err)
	assert.Equal(t, "ddim", again.Sampler)
	assert.Equal(t, 10, again.Steps)
	assert.Equal(t, env.Path("samples.png"), again.Grid)
	assert.Empty(t, again.Checkpoint, "a run from -load saves no weights")
	assert.Equal(t, res.TestLoss, again.TestLoss)

	_, err = run(config{Sampler: "euler"}, env)
	assert.ErrorContains(t, err, `unknown sampler "euler"`)
	_, err = run(config{Training: cli.Training{Epochs: 1}, Sampler: "ddim", Samples: 1, T: 10, Steps: 20}, env)
	assert.ErrorContains(t, err, "-steps 20 in 0…T = 10")
}
