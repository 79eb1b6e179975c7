package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
	"github.com/gradus-ml/gradus/train"
)

// The quick mode (48 steps on 2,048 digits, width 8) already moves the
// samples towards held-out digits: the MMD² falls below the untrained
// generator's, while training digits against held-out ones sit near 0.
// The JSON-lines log has one record per epoch.
func TestQuickRun(t *testing.T) {
	for _, loss := range []string{"bce", "wgan-gp"} {
		t.Run(loss, func(t *testing.T) {
			t.Parallel()
			r := clitest.Run(t, program(), "-quick", "-loss", loss)
			r.Fields("mmd2", "mmd2_untrained", "mmd2_train_vs_test", "g_loss", "samples")
			r.Pictures("samples-" + loss + ".png")
			var res result
			r.Decode(&res)
			log, err := os.Open(filepath.Join(r.Dir, "run.jsonl"))
			require.NoError(t, err)
			defer log.Close()
			recs, err := train.ReadLog(log)
			require.NoError(t, err)
			cfg := quickConfig(defaults())
			require.Len(t, recs, cfg.Epochs)
			assert.InDelta(t, res.GLoss, recs[len(recs)-1].Metrics["g_loss"], 1e-12)
			assert.InDelta(t, 0, res.MMD2Reference, 0.01)
			assert.Greater(t, res.MMD2Untrained, 0.5)
			if loss == "bce" {
				assert.Less(t, res.MMD2, 0.85*res.MMD2Untrained)
			} else {
				// The critic separates real from fake digits (a positive
				// Wasserstein estimate) under the penalty.
				assert.Less(t, res.MMD2, 0.9*res.MMD2Untrained)
				assert.Greater(t, res.WDistance, 0.3)
				assert.Greater(t, res.Penalty, 0.0)
				assert.Less(t, res.Penalty, cfg.Lambda)
			}
		})
	}
}

func TestUnknownLoss(t *testing.T) {
	cfg := quickConfig(defaults())
	cfg.Loss = "hinge"
	_, err := run(cfg, io.Discard, io.Discard)
	require.ErrorContains(t, err, `unknown loss "hinge"`)
}
