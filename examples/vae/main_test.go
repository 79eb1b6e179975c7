package main

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/examples/internal/cli"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/gradus-ml/gradus/train"
)

// firstDigits returns the first n embedded training digits (n, 784).
func firstDigits(tb testing.TB, n int) *tensor.Tensor {
	tb.Helper()
	x, _, err := data.MNIST("train")
	require.NoError(tb, err)
	return tensor.Slice(x, 0, 0, n, 1).Contiguous()
}

func TestStepsLowerLoss(t *testing.T) {
	x := firstDigits(t, 256)
	for _, model := range []string{"vae", "hvae"} {
		tr, err := newTrainer(options{Model: model, Hidden: 64, Hidden2: 32, Training: cli.Training{Batch: 64, LR: 1e-3}, Latent: 4, Latent2: 2}, 1, x, train.Options{})
		require.NoError(t, err)
		// At initialisation the logits are near 0, so the reconstruction term
		// is near 784·ln 2 = 543.4 nats per image.
		before, _ := tr.evaluate(x, 7)
		assert.InDelta(t, 784*math.Ln2, before, 60, model)
		// Four epochs of the Trainer's RunEpoch, then four steps by hand.
		for range 4 {
			_, err := tr.tr.RunEpoch(context.Background())
			require.NoError(t, err)
		}
		rows := data.NewGatherer(x)
		for idx := range data.NewBatcher(256, 64, data.BatchOptions{Seed: 1}).Epoch() {
			_, err := tr.step(rows.Gather(idx))
			require.NoError(t, err)
		}
		assert.Equal(t, 20, tr.tr.Steps())
		after, kl := tr.evaluate(x, 7)
		assert.Less(t, after, before-100, "%s: 20 Adam steps should cut the −ELBO by far more than 100 nats", model)
		assert.Len(t, kl, map[string]int{"vae": 1, "hvae": 2}[model])
	}
	_, err := newTrainer(options{Model: "gan"}, 1, x, train.Options{})
	assert.ErrorContains(t, err, `unknown -model "gan"`)
}

// -warmup raises the KL weight linearly over its epochs: with 4 steps per
// epoch and 2 epochs of warm-up, step k (1-based) uses β·k/8, then β.
func TestWarmup(t *testing.T) {
	x := firstDigits(t, 256)
	for _, model := range []string{"vae", "hvae"} {
		tr, err := newTrainer(options{Model: model, Hidden: 16, Hidden2: 8, Training: cli.Training{Batch: 64, LR: 1e-3}, Latent: 3, Latent2: 2,
			Beta: 2, Warmup: 2}, 1, x, train.Options{Epochs: 3})
		require.NoError(t, err)
		beta := func() float64 {
			if m, ok := tr.m.(*plainVAE); ok {
				return m.Beta
			}
			return tr.m.(*ladderVAE).Beta
		}
		var seen []float64
		for range 10 {
			_, err := tr.step(tensor.Slice(x, 0, 0, 64, 1).Contiguous())
			require.NoError(t, err)
			seen = append(seen, beta())
		}
		assert.Equal(t, []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2, 2}, seen, model)
	}
}

func TestTrainingTightensBoundAndSavesCheckpoint(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"vae", "hvae"} {
		res, _ := clitest.Check[result](t, program(), clitest.Expect{
			Fields:   []string{"test_neg_elbo_per_epoch", "test_iwae_k50", "seconds_per_epoch", "model", "test_kl_per_level", "pictures", "log"},
			Pictures: []string{"samples.png", "reconstructions.png", "manifold.png", "latent_codes.png", "loss.png"}},
			"-model", model, "-epochs", "2", "-latent", "2", "-latent2", "2", "-hidden", "32", "-hidden2", "16",
			"-batch", "64", "-iwae-k", "5", "-train-n", "320", "-test-n", "100")
		require.Len(t, res.TestNegELBO, 2)
		assert.Less(t, res.TestNegELBO[1], res.TestNegELBO[0], model)
		// The importance-weighted bound is tighter: a smaller negative bound.
		assert.Less(t, res.TestIWAE, res.TestNegELBO[1], model)
		assert.Len(t, res.Pictures, 5) // samples, reconstructions, manifold, codes, loss curve
		// The Trainer's JSON-lines log: one line per epoch with the test bound.
		log := clitest.Log(t, res.Log)
		require.Len(t, log, 2)
		assert.InDelta(t, res.TestNegELBO[1], log[1].Metrics["test_neg_elbo"], 1e-9)
		ts, _, err := checkpoint.ReadFile(res.Checkpoint)
		require.NoError(t, err)
		if model == "vae" {
			assert.Equal(t, []int{32, 784}, ts["encoder.fc0.weight"].Shape())
		} else {
			assert.Equal(t, []int{32, 784}, ts["up1.fc0.weight"].Shape())
			assert.Equal(t, []int{16, 32}, ts["up2.fc0.weight"].Shape())
			assert.Len(t, res.TestKL, 2)
		}
	}
}
