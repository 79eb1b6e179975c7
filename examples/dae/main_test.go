package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Four epochs on 4,000 digits already repair much of the damage: the
// reconstruction's squared error per pixel is well below the corrupted
// digit's (half of the ink dropped).
func TestQuickRun(t *testing.T) {
	t.Parallel()
	r := clitest.Run(t, program(), "-epochs", "4", "-n", "4000")
	r.Fields("test_mse", "corrupted_mse", "train_bce_per_epoch", "plot", "log")
	r.Pictures("digits.png")
	var res result
	r.Decode(&res)
	assert.Greater(t, res.NoisyMSE, 0.03)
	assert.Less(t, res.TestMSE, 0.8*res.NoisyMSE)
	// The Trainer's log has a line per epoch, and the training BCE falls.
	require.Len(t, res.TrainBCE, 4)
	assert.Less(t, res.TrainBCE[3], res.TrainBCE[0])
	log, err := os.ReadFile(res.Log)
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(log), "\n"))
	assert.Contains(t, string(log), `"train_loss":`)
}
