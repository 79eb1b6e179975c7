package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gradus-ml/gradus/examples/internal/cli/clitest"
)

// The quick mode (48 steps on 2,048 digits, width 8) already moves the
// samples towards held-out digits: the MMD² falls below the untrained
// generator's, while training digits against held-out ones sit near 0.
// The JSON-lines log has one record per epoch.
func TestTrainingMovesSamplesTowardsDigits(t *testing.T) {
	for _, loss := range []string{"bce", "wgan-gp"} {
		t.Run(loss, func(t *testing.T) {
			t.Parallel()
			res, r := clitest.Check[result](t, program(), clitest.Expect{Fields: []string{"mmd2", "mmd2_untrained", "mmd2_train_vs_test", "g_loss", "samples"}, Pictures: []string{"samples-" + loss + ".png"}},
				"-quick", "-loss", loss)
			recs := clitest.Log(t, r.Path("run.jsonl"))
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
	_, err := run(cfg, clitest.Env(t))
	require.ErrorContains(t, err, `unknown loss "hinge"`)
}
