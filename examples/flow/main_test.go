package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A short run already beats the standard normal on held-out moons by a
// wide margin (2.81 nats per point: the data are standardised), and the
// samples' moments follow the data's.
func TestTwoMoons(t *testing.T) {
	cfg := config{Steps: 300, Layers: 6, Hidden: 32, Batch: 256, LR: 1e-3, Seed: 1, Out: t.TempDir() + "/flow.png"}
	res, err := run(cfg, false)
	require.NoError(t, err)
	assert.InDelta(t, 2.81, res.BaseNLL, 0.05)
	assert.Less(t, res.TestNLL, res.BaseNLL-0.6)
	for j := range 2 {
		assert.Less(t, math.Abs(res.SampleMean[j]-res.DataMean[j]), 0.15, "mean %d", j)
		assert.InDelta(t, res.DataStd[j], res.SampleStd[j], 0.2, "sd %d", j)
	}
	st, err := os.Stat(cfg.Out)
	require.NoError(t, err)
	assert.Greater(t, st.Size(), int64(20000))
	// Three windows of 100 steps, one JSON line each from the Trainer.
	require.Len(t, res.Curve, 3)
	assert.Less(t, res.Curve[2], res.Curve[0])
	log, err := os.ReadFile(res.Log)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(log), "\n"))
	assert.Contains(t, string(log), `"step":300`)
	_, err = run(config{Steps: 0, Layers: 2, Hidden: 1, Batch: 1}, false)
	assert.ErrorContains(t, err, "-steps ≥ 1")
}
