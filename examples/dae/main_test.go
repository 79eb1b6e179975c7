package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Four epochs on 4,000 digits already repair much of the damage: the
// reconstruction's squared error per pixel is well below the corrupted
// digit's (half of the ink dropped).
func TestQuickRun(t *testing.T) {
	cfg := config{Epochs: 4, TrainN: 4000, Batch: 128, Drop: 0.5, Seed: 1, Out: t.TempDir() + "/dae.png"}
	res, err := run(cfg, false)
	require.NoError(t, err)
	assert.Greater(t, res.NoisyMSE, 0.03)
	assert.Less(t, res.TestMSE, 0.8*res.NoisyMSE)
	st, err := os.Stat(cfg.Out)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(2000))
	// The Trainer's log has a line per epoch, and the training BCE falls.
	require.Len(t, res.TrainBCE, 4)
	assert.Less(t, res.TrainBCE[3], res.TrainBCE[0])
	log, err := os.ReadFile(res.Log)
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(log), "\n"))
	assert.Contains(t, string(log), `"train_loss":`)
}
