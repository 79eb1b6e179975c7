package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/distributed"
	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/nn/checkpoint"
)

// Forty steps on one rank (built without the mpi tag) take the
// cross-entropy from about ln 10 ≈ 2.3 to well below half of it, and rank 0
// writes the parameters with the optimiser state.
func TestTrainOneRank(t *testing.T) {
	comm, err := distributed.Init()
	require.NoError(t, err)
	defer comm.Close()
	out := filepath.Join(t.TempDir(), "dp.safetensors")
	res, err := trainMLP(context.Background(), comm, 40, 64, 1, out, io.Discard)
	require.NoError(t, err)
	assert.InDelta(t, 2.3, res["first_loss"].(float64), 0.2)
	assert.Less(t, res["final_loss"].(float64), 1.0)
	ts, _, err := checkpoint.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, []int{256, 784}, ts["0.weight"].Shape())
	_, err = trainMLP(context.Background(), comm, 10, 63, 1, "", io.Discard)
	assert.NoError(t, err) // one rank divides every batch
	_, err = trainMLP(context.Background(), comm, 10, 9000, 1, "", io.Discard)
	assert.ErrorContains(t, err, "larger than the 8000 training digits")
}

// Through the cli on one rank: the JSON object's fields and the checkpoint
// in -out.
func TestOneRankWritesCheckpoint(t *testing.T) {
	clitest.Check[map[string]any](t, program(), clitest.Expect{Fields: []string{"ranks", "first_loss", "final_loss"}, Files: []string{"model.safetensors"}},
		"-steps", "5", "-batch", "32")
	clitest.Fails(t, program(), 2, "-mode", "broadcast")
}
