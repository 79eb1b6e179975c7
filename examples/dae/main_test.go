package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// Four epochs on 4,000 digits already repair much of the damage: the
// reconstruction's squared error per pixel is well below the corrupted
// digit's (half of the ink dropped).
func TestReconstructionRepairsCorruptedDigits(t *testing.T) {
	t.Parallel()
	res, _ := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"test_mse", "corrupted_mse", "train_bce_per_epoch", "plot", "log"}, Pictures: []string{"digits.png"}},
		"-epochs", "4", "-train-n", "4000")
	assert.Greater(t, res.NoisyMSE, 0.03)
	assert.Less(t, res.TestMSE, 0.8*res.NoisyMSE)
	// The Trainer's log has a line per epoch, and the training BCE falls.
	require.Len(t, res.TrainBCE, 4)
	assert.Less(t, res.TrainBCE[3], res.TrainBCE[0])
	log := clitest.Log(t, res.Log)
	require.Len(t, log, 4)
	assert.Equal(t, res.TrainBCE[3], log[3].TrainLoss)
}
