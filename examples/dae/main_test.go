package main

import (
	"os"
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
}
