package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"testing"

	"github.com/gradus-ml/gradus/data"
	"github.com/gradus-ml/gradus/nn/checkpoint"
	"github.com/gradus-ml/gradus/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStepsLowerLoss(t *testing.T) {
	x, _, err := data.MNIST("train")
	require.NoError(t, err)
	x = tensor.Slice(x, 0, 0, 256, 1).Contiguous()
	tr := newTrainer(options{Hidden: 64, Batch: 64, LR: 1e-3, Latent: 4, Seed: 1})
	// At initialisation the logits are near 0, so the reconstruction term
	// is near 784·ln 2 = 543.4 nats per image.
	before := tr.evaluate(x, 7)
	assert.InDelta(t, 784*math.Ln2, before, 60)
	rows := data.NewGatherer(x)
	b := data.NewBatcher(256, 64, data.BatchOptions{Seed: 1})
	for range 5 {
		for idx := range b.Epoch() {
			_, err := tr.step(rows.Gather(idx))
			require.NoError(t, err)
		}
	}
	after := tr.evaluate(x, 7)
	assert.Less(t, after, before-100, "20 Adam steps should cut the −ELBO by far more than 100 nats")
}

func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	res, err := run(options{Epochs: 2, Latent: 2, Hidden: 32, Batch: 64, LR: 1e-3, Seed: 1, Out: dir,
		IWAEK: 5, TrainN: 320, TestN: 100}, io.Discard)
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"test_neg_elbo_per_epoch", "test_iwae_k50", "seconds_per_epoch"} {
		assert.Contains(t, m, k)
	}
	require.Len(t, res.TestNegELBO, 2)
	assert.Less(t, res.TestNegELBO[1], res.TestNegELBO[0])
	// The importance-weighted bound is tighter: a smaller negative bound.
	assert.Less(t, res.TestIWAE, res.TestNegELBO[1])
	for _, p := range res.Pictures {
		st, err := os.Stat(p)
		require.NoError(t, err, p)
		assert.Greater(t, st.Size(), int64(500), p)
	}
	assert.Len(t, res.Pictures, 5) // samples, reconstructions, manifold, codes, loss curve
	ts, _, err := checkpoint.ReadFile(res.Checkpoint)
	require.NoError(t, err)
	assert.Contains(t, ts, "encoder.fc0.weight")
	assert.Equal(t, []int{32, 784}, ts["encoder.fc0.weight"].Shape())
}
